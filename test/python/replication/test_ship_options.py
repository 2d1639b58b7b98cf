"""SHIP_WAL / SHIP_INTERVAL as ATTACH options (stored with the database), differential_shipping(), an idle branch
making no requests, and the refusals of the options and of differential_recover_branch."""
import time

from differential_testing import connect, refused, repository_state, scalar


def shipping(con):
    return con.execute("SELECT database_name, mode, interval_s, epochs_shipped, requests, fenced "
                       "FROM differential_shipping()").fetchall()


def epoch_objects(s3):
    root = s3.path / "lake" / "epochs"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_bad_options_change_nothing(con, s3):
    con.execute(s3.secret_sql)
    refused(con, f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_WAL 'sometimes')", "invalid_option")
    refused(con, f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_WAL 1)", "invalid_option")
    refused(con, f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_WAL 'async', SHIP_INTERVAL 0)",
            "invalid_option")
    refused(con, f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_WAL 'async', SHIP_INTERVAL 'x')",
            "invalid_option")
    refused(con, "ATTACH 'differential:orders' AS o (SHIP_WAL 'sync')", "data_path_required")
    refused(con, f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_INTERVAL 5)", "invalid_option")
    refused(con, f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', FOLLOW true)", "invalid_option")
    assert repository_state(con) == []
    assert epoch_objects(s3) == []
    # A database that exists: a read-only attachment cannot change its shipping.
    con.execute(f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE o.t AS SELECT 1 AS id")
    con.execute("DETACH o")
    refused(con, "ATTACH 'differential:orders' AS o (READ_ONLY, SHIP_WAL 'async')", "read_only")
    con.execute("ATTACH 'differential:orders' AS o")
    assert shipping(con) == []
    con.execute("DETACH o")


def test_settings_are_stored_until_off(con, s3):
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_WAL 'sync', SHIP_INTERVAL 7)")
    con.execute("CREATE TABLE o.t AS SELECT range AS id FROM range(10)")
    assert [row[:3] for row in shipping(con)] == [("orders", "sync", 7)]
    con.execute("DETACH o")
    assert shipping(con) == []
    # A later writable attachment without the option keeps shipping.
    con.execute("ATTACH 'differential:orders' AS o")
    shipped = len(epoch_objects(s3))
    con.execute("INSERT INTO o.t VALUES (10)")
    assert [row[:3] for row in shipping(con)] == [("orders", "sync", 7)]
    assert len(epoch_objects(s3)) > shipped
    con.execute("DETACH o")
    con.execute("ATTACH 'differential:orders' AS o (SHIP_WAL 'off')")
    assert shipping(con) == []
    shipped = len(epoch_objects(s3))
    con.execute("INSERT INTO o.t VALUES (11)")
    con.execute("DETACH o")
    con.execute("ATTACH 'differential:orders' AS o")
    con.execute("INSERT INTO o.t VALUES (12)")
    assert shipping(con) == []
    assert len(epoch_objects(s3)) == shipped
    assert scalar(con, "SELECT count(*) FROM o.t") == 13


def test_idle_branch_makes_no_requests(con, s3):
    con.execute(s3.secret_sql)
    con.execute("SET enable_logging = true")
    con.execute(f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_WAL 'async', SHIP_INTERVAL 1)")
    con.execute("CREATE TABLE o.t AS SELECT range AS id FROM range(100)")
    con.execute("INSERT INTO o.t VALUES (100)")
    deadline = time.monotonic() + 20
    while scalar(con, "SELECT pending FROM differential_shipping()") > 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.5)
    busy = shipping(con)[0]
    assert busy[3] >= 1, busy  # something was shipped
    objects = epoch_objects(s3)
    time.sleep(4.5)  # four idle intervals
    idle = shipping(con)[0]
    assert idle[4] == busy[4], (busy, idle)  # not one request
    assert epoch_objects(s3) == objects
    # Busy again: shipped within the interval, one more epoch.
    con.execute("INSERT INTO o.t VALUES (101)")
    deadline = time.monotonic() + 20
    while shipping(con)[0][3] == idle[3] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert shipping(con)[0][3] == idle[3] + 1
    # The shipping thread's events reach the instance's log.
    events = con.execute("SELECT event, count(*) FROM duckdb_logs_parsed('differential') WHERE event LIKE 'ship%' "
                         "GROUP BY 1 ORDER BY 1").fetchall()
    assert dict(events).get("ship_epoch", 0) == shipping(con)[0][3], events
    assert dict(events).get("ship_chain", 0) >= 1, events


def test_recover_branch_refusals(con, s3, tmp_path):
    con.execute(s3.secret_sql)
    # A database that exports but does not ship: its head names no chain.
    con.execute(f"ATTACH 'differential:plain' AS p (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE p.t AS SELECT 1 AS id")
    con.execute("CALL differential_create_snapshot('p')")
    con.execute("DETACH p")
    standby = connect(tmp_path / "standby")
    standby.execute(s3.secret_sql)
    before = repository_state(standby)
    refused(standby, f"SELECT * FROM differential_recover_branch('{s3.url}nothing/here', 'x')", "invalid_locator")
    refused(standby, f"SELECT * FROM differential_recover_branch('{s3.url}heads/ghost/main', 'x')", "head_not_found")
    refused(standby, f"SELECT * FROM differential_recover_branch('{s3.url}heads/plain/main', 'x')", "not_shipping")
    refused(standby, f"SELECT * FROM differential_recover_branch('{s3.url}heads/plain/main', 'bad/name')",
            "invalid_name")
    assert repository_state(standby) == before
    con.execute(f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_WAL 'sync')")
    con.execute("CREATE TABLE o.t AS SELECT 1 AS id")
    con.execute("DETACH o")
    refused(standby, f"SELECT * FROM differential_recover_branch('{s3.url}heads/orders/main', 'other', "
                     "same_identity => true)", "invalid_argument")
    standby.execute(f"SELECT * FROM differential_recover_branch('{s3.url}heads/orders/main', 'copy')")
    refused(standby, f"SELECT * FROM differential_recover_branch('{s3.url}heads/orders/main', 'copy')",
            "database_exists")
    # The refusals wrote no seal: the leader still ships.
    con.execute("ATTACH 'differential:orders' AS o")
    con.execute("INSERT INTO o.t VALUES (2)")
    assert shipping(con)[0][5] is False


def test_checkpoint_and_chain_limit_start_new_chains(con, s3, tmp_path):
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:orders' AS o (DATA_PATH '{s3.url}', SHIP_WAL 'sync')")
    con.execute("CREATE TABLE o.t (id INTEGER)")
    con.execute("INSERT INTO o.t VALUES (0)")
    first = con.execute("SELECT chain, chains_started FROM differential_shipping()").fetchone()
    con.execute("CHECKPOINT o")
    con.execute("INSERT INTO o.t VALUES (1)")
    second = con.execute("SELECT chain, epoch, chains_started FROM differential_shipping()").fetchone()
    assert second[0] == first[0] + 1 and second[1] == 1, (first, second)
    # 256 epochs close a chain too.
    for i in range(2, 262):
        con.execute(f"INSERT INTO o.t VALUES ({i})")
    third = con.execute("SELECT chain, epoch FROM differential_shipping()").fetchone()
    assert third[0] >= second[0] + 1, third
    seals = [p for p in (s3.path / "lake" / "epochs" / "orders" / "main").rglob("*") if p.is_file()
             and p.read_bytes()[12] == 2]
    assert len(seals) >= 2
    standby = connect(tmp_path / "standby")
    standby.execute(s3.secret_sql)
    row = standby.execute(f"SELECT * FROM differential_recover_branch('{s3.url}heads/orders/main', 'r')").fetchone()
    assert row[2] == third[0]
    standby.execute("ATTACH 'differential:r' AS r")
    assert standby.execute("SELECT count(*), min(id), max(id) FROM r.t").fetchone() == (262, 0, 261)
    assert scalar(standby, "SELECT sum(problems) FROM differential_verify()") == 0
