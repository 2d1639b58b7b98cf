"""The specification's leader and failover blocks, each host a separate process: a leader ships (async, interval 1),
dies; a standby recovers the branch with the same identity and continues it in a newer chain; the old leader, back,
gets head_conflict and keeps its local data."""
import json
import signal
import time

import pytest

from differential_testing import connect, refused, scalar
from replication_helpers import python_process, run_json

LEADER = """
from differential_testing import connect
import time
con = connect({repository!r})
con.execute({secret!r})
con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{url}', SHIP_WAL '{mode}', SHIP_INTERVAL 1)")
con.execute("CREATE TABLE orders.orders (id INTEGER, amount DECIMAL(10, 2))")
con.execute("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1000)")
con.execute("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1000, 1500)")
deadline = time.monotonic() + 30
while con.execute("SELECT pending FROM differential_shipping()").fetchone()[0] > 0 and time.monotonic() < deadline:
    time.sleep(0.1)
time.sleep(1.5)
print("shipped", con.execute("SELECT epoch, fenced FROM differential_shipping()").fetchone(), flush=True)
time.sleep(600)
"""

STANDBY = """
import json
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
row = con.execute("SELECT database_name, shipped_epoch FROM differential_recover_branch("
                  "'{url}heads/orders/main', 'orders', same_identity => true)").fetchone()
con.execute("ATTACH 'differential:orders' AS orders (SHIP_WAL 'async')")
before = con.execute("SELECT count(*) FROM orders.orders").fetchone()[0]
con.execute("INSERT INTO orders.orders VALUES (1500, 42.00)")
after = con.execute("SELECT count(*) FROM orders.orders").fetchone()[0]
problems = con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0]
con.execute("DETACH orders")  # ships what is pending
print(json.dumps({{"row": list(row), "before": before, "after": after, "problems": int(problems)}}))
"""

CHECK = """
import json
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
row = con.execute("SELECT * FROM differential_recover_branch('{url}heads/orders/main', 'check')").fetchone()
con.execute("ATTACH 'differential:check' AS c")
print(json.dumps({{"row": list(row), "count": con.execute("SELECT count(*) FROM c.orders").fetchone()[0],
                  "max": con.execute("SELECT max(id) FROM c.orders").fetchone()[0]}}))
"""


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_leader_failover_and_old_leader(s3, tmp_path, mode):
    leader_repo, standby_repo = tmp_path / "leader", tmp_path / "standby"
    leader = python_process(LEADER.format(repository=str(leader_repo), secret=s3.secret_sql, url=s3.url, mode=mode))
    try:
        line = leader.stdout.readline()
        assert line.startswith("shipped"), line + leader.stderr.read()
        assert "False" in line
    finally:
        leader.send_signal(signal.SIGKILL)  # the leader is gone, without a clean DETACH
        leader.wait()
    standby = run_json(STANDBY.format(repository=str(standby_repo), secret=s3.secret_sql, url=s3.url))
    assert standby["row"][0] == "orders" and standby["row"][1] >= 1
    assert (standby["before"], standby["after"], standby["problems"]) == (1500, 1501, 0)
    # A third host sees the new leader's commit: it followed the recovery seal into the new chain.
    check = run_json(CHECK.format(repository=str(tmp_path / "third"), secret=s3.secret_sql, url=s3.url))
    assert (check["count"], check["max"]) == (1501, 1500)
    assert check["row"][2] >= 2  # a newer chain than the old leader's

    # The old leader comes back: shipping refuses with head_conflict, its own data stays.
    old = connect(leader_repo)
    old.execute(s3.secret_sql)
    try:
        old.execute("ATTACH 'differential:orders' AS orders")
        if mode == "async":
            old.execute("INSERT INTO orders.orders VALUES (2000, 1)")  # captured; the thread meets the seal
            deadline = time.monotonic() + 20
            while not scalar(old, "SELECT fenced FROM differential_shipping()") and time.monotonic() < deadline:
                time.sleep(0.2)
        refused(old, "INSERT INTO orders.orders VALUES (2001, 1)", "head_conflict")
        old.execute("DETACH orders")
    except Exception as error:  # the ATTACH's own checkpoint may ship first, and meet the seal there
        assert "[differential:head_conflict]" in str(error), error
    old.close()
    old = connect(leader_repo)
    old.execute("ATTACH 'differential:orders' AS orders (SHIP_WAL 'off')")
    assert scalar(old, "SELECT count(*) FROM orders.orders WHERE id < 1500") == 1500
    old.execute("INSERT INTO orders.orders VALUES (3000, 1)")
    assert scalar(old, "SELECT sum(problems) FROM differential_verify()") == 0
    # And the branch in the bucket is still the new leader's.
    again = run_json(CHECK.format(repository=str(tmp_path / "fourth"), secret=s3.secret_sql, url=s3.url))
    assert (again["count"], again["max"]) == (1501, 1500)
