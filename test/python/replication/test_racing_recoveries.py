"""Two processes recover the same branch with the same identity at once (both walk to the tip, then both pause before
their seal PUT, DIFFERENTIAL_PAUSE_POINT): exactly one wins the create-only recovery seal and leads; the other gets
head_conflict ("another host recovered …", docs/REPLICATION.md §12 (d)) and recovers nothing; the chain is one line."""
import json

from differential_testing import run_python
from lease_testing import assert_one_line, chains
from replication_helpers import python_process

LEADER = """
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{url}', SHIP_WAL 'sync')")
con.execute("CREATE TABLE orders.t AS SELECT range AS id FROM range(100)")
con.execute("INSERT INTO orders.t VALUES (100)")
print("shipped", flush=True)
"""

RECOVER = """
import json
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
try:
    row = con.execute("SELECT database_name, fenced FROM differential_recover_branch("
                      "'{url}heads/orders/main', 'orders', same_identity => true)").fetchone()
    con.execute("ATTACH 'differential:orders' AS orders (SHIP_WAL 'sync')")
    count = con.execute("SELECT count(*) FROM orders.t").fetchone()[0]
    con.execute("INSERT INTO orders.t VALUES (1000)")
    print(json.dumps({{"row": list(row), "count": count}}))
except Exception as error:
    print(json.dumps({{"error": str(error)}}))
"""


def test_two_recoveries_race_one_leads(s3, tmp_path):
    out = run_python(LEADER.format(repository=str(tmp_path / "leader"), secret=s3.secret_sql, url=s3.url))
    assert "shipped" in out
    before = chains(s3.path / "lake")
    processes = [python_process(RECOVER.format(repository=str(tmp_path / f"standby{i}"), secret=s3.secret_sql,
                                               url=s3.url), env={"DIFFERENTIAL_PAUSE_POINT": "recover.before_seal:2000"})
                 for i in range(2)]
    results = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=180)
        assert stdout.strip(), stderr
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    winners = [r for r in results if "row" in r]
    losers = [r for r in results if "error" in r]
    assert len(winners) == 1 and len(losers) == 1, results
    assert winners[0]["row"] == ["orders", True] and winners[0]["count"] == 101
    assert "[differential:head_conflict]" in losers[0]["error"] and "Another host recovered" in losers[0]["error"]
    after = assert_one_line(s3.path / "lake")
    tip_chain = max(before)
    seals = [seq for seq, kind in after[tip_chain] if kind == 2]
    assert seals == [len(before[tip_chain]) + 1], after  # one recovery seal, right after the old tip
