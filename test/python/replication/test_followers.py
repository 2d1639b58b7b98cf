"""Followers of an exported branch head (follower side, snapshots): the leader is another OS process
that exports each snapshot to versitygw; the follower sees them by itself, one state per transaction, at one
conditional request per idle interval, and says so in differential_followers()."""
import time

import pytest

from differential_testing import connect, refused, scalar
from follow_testing import Leader, eventually, follower_opener, poller_threads


@pytest.fixture
def leader(tmp_path, s3):
    process = Leader(tmp_path / "leader-repository", s3)
    yield process
    process.close()


@pytest.fixture
def follower(s3):
    yield from follower_opener(s3)


def count(con, alias="orders_live"):
    return scalar(con, f"SELECT count(*) FROM {alias}.orders")


def test_spec_leader_and_follower(leader, s3, follower):
    leader.run("CREATE TABLE orders.orders (id INTEGER, amount DECIMAL(10, 2))")
    leader.run("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1000)")
    first = leader.snapshot()
    con = follower(interval=2)
    assert count(con) == 1000
    assert con.execute("SELECT alias, follows FROM differential_followers()").fetchall() == [("orders_live", "snapshots")]
    leader.run("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1000, 1500)")
    second = leader.snapshot()
    # The follower sees the new rows by itself, within an interval and the time to resolve the export.
    eventually(lambda: count(con), 1500)
    assert scalar(con, "SELECT sum(amount) FROM orders_live.orders") == sum(i % 100 for i in range(1500))
    row = con.execute("SELECT head_url, snapshot_id, state, follow_interval, last_error FROM differential_followers()").fetchone()
    assert row[0] == f"{s3.url}heads/orders/main" and "SECRET" not in row[0].upper()
    assert (row[1], row[3], row[4]) == (second, 2.0, None) and second > first
    assert row[2].startswith("descriptor ") and len(row[2]) == len("descriptor ") + 64
    # Read-only: a write through the follower is refused, and the leader's data is untouched.
    with pytest.raises(Exception) as info:
        con.execute("INSERT INTO orders_live.orders VALUES (1, 1)")
    assert "read-only" in str(info.value) or "read_only" in str(info.value)
    assert leader.run("SELECT count(*) FROM orders.orders") == [["1500"]]


def test_a_running_transaction_keeps_its_state(leader, s3, follower):
    leader.run("CREATE TABLE orders.orders AS SELECT range AS id FROM range(1000)")
    leader.run("CREATE TABLE orders.audit AS SELECT 1 AS version")
    leader.snapshot()
    con = follower(interval=0.5)
    other = con.cursor()  # another connection of the same instance: its own transactions
    con.execute("BEGIN")
    assert count(con) == 1000
    leader.run("INSERT INTO orders.orders SELECT range FROM range(1000, 1200)")
    leader.run("UPDATE orders.audit SET version = 2")
    leader.snapshot()
    # New transactions read the newer state...
    eventually(lambda: count(other), 1200)
    assert scalar(other, "SELECT version FROM orders_live.audit") == 2
    # ...while the running one still reads its own, for every table (never a mix of two states).
    assert count(con) == 1000
    assert scalar(con, "SELECT version FROM orders_live.audit") == 1
    con.execute("COMMIT")
    assert count(con) == 1200
    assert scalar(con, "SELECT version FROM orders_live.audit") == 2


def test_an_idle_follower_makes_one_request_per_interval(leader, s3, follower):
    leader.run("CREATE TABLE orders.orders AS SELECT range AS id FROM range(10)")
    leader.snapshot()
    con = follower(interval=0.5)
    con.execute("SET enable_logging = true")
    con.execute("SET logging_level = 'info'")

    def checks():
        return scalar(con, "SELECT count(*) FROM duckdb_logs_parsed('differential') WHERE event = 'follow_check'")

    eventually(lambda: checks() > 0, True)
    before_requests = scalar(con, "SELECT requests FROM differential_followers()")
    before_checks = checks()
    started = time.monotonic()
    time.sleep(5)
    elapsed = time.monotonic() - started
    requests = scalar(con, "SELECT requests FROM differential_followers()") - before_requests
    made = checks() - before_checks
    # One conditional GET per check, and one check per interval (a check in flight at either end may fall
    # on either side of the window).
    assert requests == made, (requests, made)
    assert elapsed / 0.5 - 2 <= made <= elapsed / 0.5 + 1, (made, elapsed)
    details = con.execute(
        "SELECT detail FROM duckdb_logs_parsed('differential') WHERE event = 'follow_check'").fetchall()
    assert all("unchanged" in detail for (detail,) in details), details
    assert count(con) == 10


def test_refusals_are_clear_and_attach_nothing(leader, s3, tmp_path):
    leader.run("CREATE TABLE orders.orders AS SELECT 1 AS id")
    leader.snapshot()
    con = connect(tmp_path / "follower-repository")
    con.execute(s3.secret_sql)
    threads = poller_threads()
    before = con.execute("SELECT database_name FROM duckdb_databases() ORDER BY 1").fetchall()
    head = f"{s3.url}heads/orders/main"
    refused(con, f"ATTACH 'differential:{s3.url}heads/orders' AS x (FOLLOW true)", "invalid_locator")
    refused(con, f"ATTACH 'differential:{s3.url}heads/orders/nightly' AS x (FOLLOW true)", "head_not_found")
    con.execute(s3.server.secret_sql(f"s3://{s3.name}-missing/", name="missing"))
    refused(con, f"ATTACH 's3://{s3.name}-missing/lake/heads/orders/main' AS x (TYPE differential, FOLLOW true)",
            "bucket_not_found")
    message = refused(con, "ATTACH 'differential:orders' AS x (FOLLOW true)", "invalid_option")
    assert "local database" in message
    for bad in ["0", "-1", "0.05", "'soon'", "100000"]:
        message = refused(con, f"ATTACH 'differential:{head}' AS x (FOLLOW true, FOLLOW_INTERVAL {bad})",
                          "invalid_option")
        assert "0.1 to 86400" in message
    refused(con, f"ATTACH 'differential:{head}' AS x (FOLLOW_INTERVAL 2)", "invalid_option")
    refused(con, f"ATTACH 'differential:{head}' AS x (FOLLOW 'maybe')", "invalid_option")
    head_text = (pathlib_root(s3) / "heads" / "orders" / "main").read_text()
    digest = [line.split(" ")[1] for line in head_text.splitlines() if line.startswith("descriptor ")][0]
    message = refused(con, f"ATTACH 'differential:{s3.url}descriptors/{digest}' AS x (FOLLOW true)", "invalid_option")
    assert "never changes" in message
    assert con.execute("SELECT database_name FROM duckdb_databases() ORDER BY 1").fetchall() == before
    assert con.execute("SELECT * FROM differential_followers()").fetchall() == []
    assert poller_threads() == threads


def pathlib_root(s3):
    import pathlib

    return pathlib.Path(s3.path) / s3.url.split("/", 3)[3]


def test_detach_and_close_stop_the_poller(leader, s3, follower):
    leader.run("CREATE TABLE orders.orders AS SELECT 1 AS id")
    leader.snapshot()
    con = follower(interval=0.2)
    con.execute(f"ATTACH 'differential:{s3.url}heads/orders/main' AS second (FOLLOW true, FOLLOW_INTERVAL 0.2)")
    eventually(poller_threads, 2)  # each names itself when it starts (no other follower is open)
    assert scalar(con, "SELECT count(*) FROM second.orders") == 1
    con.execute("DETACH second")
    assert poller_threads() == 1  # joined by DETACH
    assert con.execute("SELECT alias FROM differential_followers()").fetchall() == [("orders_live",)]
    assert count(con) == 1
    con.close()  # no DETACH: the instance goes away, and its poller with it
    assert poller_threads() == 0


def test_server_down_keeps_the_state_and_recovers(leader, s3, follower):
    leader.run("CREATE TABLE orders.orders AS SELECT range AS id FROM range(100)")
    leader.snapshot()
    con = follower(interval=0.3)
    assert count(con) == 100
    s3.server.stop()
    try:
        eventually(lambda: (scalar(con, "SELECT last_error FROM differential_followers()") or "").startswith(
            "[differential:remote_unavailable] "), True)
        # The follower keeps answering from the state it has.
        assert count(con) == 100
        lag = scalar(con, "SELECT lag_ms FROM differential_followers()")
        assert lag >= 300
    finally:
        s3.server.start(port=s3.server.port)
    leader.run("INSERT INTO orders.orders SELECT range FROM range(100, 150)")
    leader.snapshot()
    eventually(lambda: count(con), 150)
    assert scalar(con, "SELECT last_error FROM differential_followers()") is None
