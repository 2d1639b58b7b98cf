"""Checker for the crash test: prints the recovered state of the crash database as JSON."""
import json
import sys

from differential_testing import connect

con = connect(sys.argv[1])
state = {"verify": con.execute("SELECT check_name, objects_checked, problems, detail FROM differential_verify()").fetchall()}
databases = [r[0] for r in con.execute("SELECT database_name FROM differential_databases()").fetchall()]
if "crashdb" in databases:
    con.execute("ATTACH 'differential:crashdb' AS c (READ_ONLY)")
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'c'").fetchall()}
    if "ledger" in tables:
        state["ledger"] = [r[0] for r in con.execute("SELECT i FROM c.ledger ORDER BY i").fetchall()]
        state["mirror"] = [r[0] for r in con.execute("SELECT i FROM c.mirror ORDER BY i").fetchall()]
        state["bulk"] = con.execute("SELECT i, count(*) FROM c.bulk GROUP BY i ORDER BY i").fetchall()
        if "medium" in tables:
            state["medium"] = con.execute("SELECT i, count(*) FROM c.medium GROUP BY i ORDER BY i").fetchall()
    state["snapshots"] = {}
    for (sid,) in con.execute("SELECT snapshot_id FROM c.snapshots()").fetchall():
        rows = con.execute(f"SELECT count(*), min(i), max(i) FROM c.ledger AT (VERSION => {sid})").fetchone()
        mirror = con.execute(f"SELECT count(*) FROM c.mirror AT (VERSION => {sid})").fetchone()[0]
        state["snapshots"][sid] = list(rows) + [mirror]
print(json.dumps(state))
