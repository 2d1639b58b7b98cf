"""Followers of a branch that ships its WAL (follower side, commits): the leader (another OS process,
SHIP_WAL 'sync') commits without taking snapshots; the follower reads the chain's base export with the epochs'
chunks and WAL applied (DuckDB replays the WAL when it opens the state read-only), one state per transaction, at
one request per idle interval."""
import time

import pytest

from differential_testing import connect, scalar
from follow_testing import Leader, eventually, follower_opener


@pytest.fixture
def leader(tmp_path, s3):
    process = Leader(tmp_path / "leader-repository", s3, ", SHIP_WAL 'sync'")
    yield process
    process.close()


@pytest.fixture
def follower(s3):
    yield from follower_opener(s3)


def count(con):
    return scalar(con, "SELECT count(*) FROM orders_live.orders")


def test_spec_follower_sees_commits(leader, follower):
    leader.run("CREATE TABLE orders.orders (id INTEGER, amount DECIMAL(10, 2))")
    leader.run("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1000)")
    con = follower(2)
    assert count(con) == 1000
    assert con.execute("SELECT alias, follows FROM differential_followers()").fetchall() == [("orders_live", "commits")]
    leader.run("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1000, 1500)")
    # No snapshot, no export: the commit's epoch is what the follower reads.
    eventually(lambda: count(con), 1500)
    # A commit large enough for DuckDB to write row groups to the main file before the WAL names them.
    leader.run("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1500, 301500)")
    eventually(lambda: count(con), 301500)
    assert scalar(con, "SELECT sum(amount) FROM orders_live.orders") == sum(i % 100 for i in range(301500))
    state = scalar(con, "SELECT state FROM differential_followers()")
    assert state.startswith("chain ") and " epoch " in state, state
    assert scalar(con, "SELECT last_error FROM differential_followers()") is None


def test_commits_one_state_per_transaction_and_one_request_per_idle_interval(leader, follower):
    leader.run("CREATE TABLE orders.orders AS SELECT range AS id FROM range(100)")
    leader.run("CREATE TABLE orders.audit AS SELECT 1 AS version")
    con = follower(0.5)
    other = con.cursor()
    con.execute("BEGIN")
    assert count(con) == 100
    leader.run("BEGIN")
    leader.run("INSERT INTO orders.orders SELECT range FROM range(100, 150)")
    leader.run("UPDATE orders.audit SET version = 2")
    leader.run("COMMIT")
    eventually(lambda: count(other), 150)
    assert scalar(other, "SELECT version FROM orders_live.audit") == 2
    assert count(con) == 100 and scalar(con, "SELECT version FROM orders_live.audit") == 1
    con.execute("COMMIT")
    assert count(con) == 150
    # Idle: one GET of the next epoch per interval.
    before = scalar(con, "SELECT requests FROM differential_followers()")
    started = time.monotonic()
    time.sleep(4)
    elapsed = time.monotonic() - started
    made = scalar(con, "SELECT requests FROM differential_followers()") - before
    assert elapsed / 0.5 - 2 <= made <= elapsed / 0.5 + 1, (made, elapsed)


def test_commits_server_down_keeps_the_state_and_recovers(leader, follower, s3):
    leader.run("CREATE TABLE orders.orders AS SELECT range AS id FROM range(100)")
    con = follower(0.3)
    assert count(con) == 100
    s3.server.stop()
    try:
        eventually(lambda: (scalar(con, "SELECT last_error FROM differential_followers()") or "").startswith(
            "[differential:remote_unavailable] "), True)
        assert count(con) == 100
        position = scalar(con, "SELECT state FROM differential_followers()")
    finally:
        s3.server.start(port=s3.server.port)
    # The leader commits again once the server is back ('sync': COMMIT waits for its epoch).
    leader.run("INSERT INTO orders.orders SELECT range FROM range(100, 130)")
    eventually(lambda: count(con), 130)
    row = con.execute("SELECT state, last_error, follows FROM differential_followers()").fetchone()
    assert row[0] != position and row[1] is None and row[2] == "commits"
