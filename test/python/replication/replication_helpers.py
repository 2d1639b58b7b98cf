"""Helpers of the WAL-shipping tests: leader and standby processes running the wheel with the extension, and reading
a recovered database back."""
import json
import os
import subprocess
import sys
import pathlib

from differential_testing import run_python

HERE = pathlib.Path(__file__).resolve().parent.parent


def python_process(code, env=None):
    """Starts a Python process (the extension importable through differential_testing) with piped stdout."""
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = str(HERE)
    return subprocess.Popen([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def run_json(code, timeout=180):
    """Runs code in another process; its last stdout line is JSON."""
    return json.loads(run_python(code, timeout=timeout).strip().splitlines()[-1])


# A leader that inserts one row per commit and prints each id once COMMIT returned (acknowledged), until killed.
COMMIT_LOOP = """
import sys, time
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{url}', SHIP_WAL '{mode}', SHIP_INTERVAL 1)")
con.execute("CREATE TABLE IF NOT EXISTS orders.t (id INTEGER, payload VARCHAR)")
next_id = con.execute("SELECT coalesce(max(id) + 1, 0) FROM orders.t").fetchone()[0]
print("ready", next_id, flush=True)
while True:
    # Every 7th commit carries enough rows for DuckDB to write row groups to the main file first.
    rows = 130000 if next_id % 7 == 3 else 1
    con.execute(f"INSERT INTO orders.t SELECT {{next_id}}, 'p' || range FROM range({{rows}})")
    print(f"ack {{next_id}} {{time.time()}}", flush=True)
    next_id += 1
    time.sleep({pause})
"""


def acknowledgements(out):
    """The (id, time) pairs of a leader's complete "ack <id> <time>" lines. A SIGKILL can cut the last line short, so
    only lines that end in a newline count: the commit of a cut line is the one in flight, which callers treat as
    possibly applied."""
    complete = out.split("\n")[:-1]
    return [(int(line.split()[1]), float(line.split()[2])) for line in complete if line.startswith("ack ")]


def recovered_ids(con, url, name, same_identity=False):
    """Recovers the branch into `name` in con's repository, attaches it and returns (ids, row, problems)."""
    row = con.execute(f"SELECT * FROM differential_recover_branch('{url}heads/orders/main', '{name}', "
                      f"same_identity => {str(same_identity).lower()})").fetchone()
    con.execute(f"ATTACH 'differential:{name}' AS {name}")
    ids = [r[0] for r in con.execute(f"SELECT DISTINCT id FROM {name}.t ORDER BY id").fetchall()]
    counts = con.execute(f"SELECT id, count(*) FROM {name}.t GROUP BY id HAVING count(*) NOT IN (1, 130000)").fetchall()
    assert counts == [], f"a commit was applied partly: {counts}"
    problems = con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0]
    con.execute(f"DETACH {name}")
    return ids, row, problems
