"""Running merges: status and progress while a merge runs, the concurrency limit, per-call resource
limits, frozen session settings, the autocommit requirement, and the snapshot preview's conflict paging."""
import json
import textwrap

from differential_testing import refused, repository_state, run_python, scalar
from three_way import diverge, merge_sql


def diverged(con, rows=200, conflicts=0):
    """Database shop: snapshot 1 with `rows` items; branch side (2) and main (3) each change items."""
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items (id INTEGER PRIMARY KEY, price INTEGER, name VARCHAR)")
    con.execute(f"INSERT INTO shop.items SELECT range, range, 'item ' || range FROM range({rows})")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:shop' AS side (BRANCH 'side')")
    con.execute("UPDATE side.items SET price = price + 1 WHERE id % 10 = 0")
    con.execute(f"UPDATE side.items SET name = 'side' WHERE id < {conflicts}")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("UPDATE shop.items SET name = upper(name) WHERE id % 10 = 5")
    con.execute(f"UPDATE shop.items SET name = 'main' WHERE id < {conflicts}")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("DETACH shop")
    con.execute("DETACH side")


def test_status_progress_and_concurrency_while_a_merge_runs(repository):
    # The merge pauses at the start of its comparison (a test hook), so the status can be read
    # from another cursor of the same process while it runs.
    code = textwrap.dedent(f"""
        import json, threading, time
        from differential_testing import connect
        con = connect({str(repository)!r})
        exec({textwrap.dedent(diverged_source()).strip()!r})
        diverged(con)
        con.execute("SET differential_merge_max_concurrent = 1")
        runner = con.cursor()
        runner.execute("SET enable_progress_bar = true")
        runner.execute("SET enable_progress_bar_print = false")
        outcome = {{}}
        def merge():
            outcome["merge"] = runner.execute("SELECT snapshot_id, merge_action FROM differential_merge_branch("
                                              "'shop', 'main', 'side', 'main', request_id => 'slow')").fetchone()
        thread = threading.Thread(target=merge)
        thread.start()
        watcher = con.cursor()
        rows = []
        deadline = time.time() + 20
        while (not rows or rows[0][2] != "comparison") and time.time() < deadline:
            rows = watcher.execute("SELECT request_id, database_name, phase, table_name, table_state, progress, "
                                   "operation_id IS NOT NULL FROM differential_merge_status()").fetchall()
            time.sleep(0.05)
        try:
            watcher.execute("SELECT * FROM differential_merge_branch_preview('shop', 'main', 'side')")
            busy = "no refusal"
        except Exception as e:
            busy = str(e)
        progress = -1
        while progress <= 0 and time.time() < deadline:
            progress = runner.query_progress()
            time.sleep(0.05)
        thread.join()
        after = watcher.execute("SELECT count(*) FROM differential_merge_status()").fetchone()[0]
        print(json.dumps({{"rows": rows, "progress": progress, "busy": busy, "merge": outcome["merge"], "after": after}}))
    """)
    result = json.loads(run_python(code, env={"DIFFERENTIAL_PAUSE_POINT": "merge.comparison:1500"}).strip().splitlines()[-1])
    assert result["rows"] == [["slow", "shop", "comparison", "items", "waiting", 10.0, True]]
    assert 10 <= result["progress"] < 100, result  # read while the merge paused in its comparison
    assert "[differential:merge_busy]" in result["busy"], result["busy"]
    assert result["merge"] == [4, "merged"]
    assert result["after"] == 0


def diverged_source():
    import inspect
    return inspect.getsource(diverged)


def test_timeout_stops_the_merge_and_a_retry_may_raise_it(repository):
    code = textwrap.dedent(f"""
        from differential_testing import connect
        con = connect({str(repository)!r})
        exec({textwrap.dedent(diverged_source()).strip()!r})
        diverged(con)
        try:
            con.execute("SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', request_id => 'r', "
                        "timeout_ms => 100)")
            print("merged")
        except Exception as e:
            print(str(e))
        print(con.execute("SELECT head_snapshot_id FROM differential_branches('shop') WHERE branch_name = 'main'").fetchone()[0])
        print(con.execute("SELECT snapshot_id FROM differential_merge_branch('shop', 'main', 'side', 'main', "
                          "request_id => 'r', timeout_ms => 600000)").fetchone()[0])
    """)
    lines = run_python(code, env={"DIFFERENTIAL_PAUSE_POINT": "merge.comparison:400"}).strip().splitlines()
    assert "[differential:merge_limit_exceeded]" in lines[-3] and "timeout_ms" in lines[-3], lines
    assert lines[-2:] == ["3", "4"]


def test_read_and_staging_limits_refuse_and_change_nothing(con):
    diverged(con)
    before = repository_state(con)
    message = refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', request_id => 'big', "
                           "max_rows_read => 100)", "merge_limit_exceeded")
    assert "600 rows" in message and "max_rows_read" in message
    refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', max_bytes_read => 1000)",
            "merge_limit_exceeded")
    refused(con, "SELECT * FROM differential_merge_branch_preview('shop', 'main', 'side', max_rows_read => 10)",
            "merge_limit_exceeded")
    assert repository_state(con) == before
    assert con.execute("SELECT state, last_error_code FROM differential_merge_requests('shop')").fetchall() == [
        ("pending", "merge_limit_exceeded")]
    # Limits are no part of a request's identity: the retry may raise them.
    assert con.execute("SELECT snapshot_id, merge_action FROM differential_merge_branch('shop', 'main', 'side', 'main', "
                       "request_id => 'big', max_rows_read => 1000)").fetchone() == (4, "merged")
    refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', max_rows_read => -1)",
            "invalid_argument")


def test_staging_budget(con):
    con.execute("ATTACH 'differential:grow' AS grow")
    con.execute("CREATE TABLE grow.t (id INTEGER PRIMARY KEY, payload VARCHAR)")
    con.execute("INSERT INTO grow.t VALUES (0, 'x')")
    con.execute("CALL differential_create_snapshot('grow')")
    con.execute("CALL differential_create_branch('grow', 'big', snapshot => 1)")
    con.execute("ATTACH 'differential:grow' AS big (BRANCH 'big')")
    con.execute("INSERT INTO big.t SELECT range, repeat(md5(range::VARCHAR), 8) FROM range(1, 100000)")
    con.execute("CALL differential_create_snapshot('big')")
    con.execute("UPDATE grow.t SET payload = 'y'")
    con.execute("CALL differential_create_snapshot('grow')")
    con.execute("DETACH grow")
    before = repository_state(con)
    refused(con, "SELECT * FROM differential_merge_branch('grow', 'main', 'big', 'main', max_staging_bytes => 100000)",
            "merge_limit_exceeded")
    assert repository_state(con) == before
    assert scalar(con, "SELECT count(*) FROM differential_branches('grow')") == 2  # no staging branch left
    assert con.execute("SELECT merge_action FROM differential_merge_branch('grow', 'main', 'big', 'main')").fetchone() == (
        "merged",)


def test_a_request_freezes_time_zone_and_calendar(con):
    diverged(con)
    con.execute("SET TimeZone = 'America/New_York'")
    con.execute("ATTACH 'differential:shop' AS shop")
    refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', request_id => 'tz')",
            "active_attachment_or_transaction")
    con.execute("DETACH shop")
    con.execute("SET TimeZone = 'Asia/Tokyo'")
    assert con.execute("SELECT merge_action FROM differential_merge_branch('shop', 'main', 'side', 'main', "
                       "request_id => 'tz')").fetchone() == ("merged",)
    assert con.execute("SELECT state, time_zone, calendar, attempts FROM differential_merge_requests('shop')").fetchall() == [
        ("complete", "America/New_York", "gregorian", 2)]


def test_snapshot_preview_pages_conflict_details(con):
    diverged(con, conflicts=5)
    rows = con.execute("SELECT conflicts, [d.key[1].integer_value FOR d IN conflict_details] "
                       "FROM differential_merge_snapshots_preview('shop', 1, 3, 2, conflict_limit => 2, conflict_offset => 2)"
                       ).fetchall()
    assert rows == [(5, [2, 3])]
    assert con.execute("SELECT len(conflict_details) FROM differential_merge_snapshots_preview('shop', 1, 3, 2)").fetchone() == (5,)
    assert con.execute("SELECT len(conflict_details) FROM differential_merge_snapshots_preview('shop', 1, 3, 2, "
                       "conflict_limit => 0)").fetchone() == (0,)
    refused(con, "SELECT * FROM differential_merge_snapshots_preview('shop', 1, 3, 99)", "snapshot_not_found")
    refused(con, "SELECT * FROM differential_merge_snapshots_preview('nope', 1, 3, 2)", "database_not_found")


def test_max_concurrent_setting_is_checked(con):
    refused(con, "SET differential_merge_max_concurrent = -1", "invalid_argument")
    con.execute("SET differential_merge_max_concurrent = 3")
    # The refused value left the accepted one in place; 0 (no limit) is accepted too.
    refused(con, "SET differential_merge_max_concurrent = -1", "invalid_argument")
    assert scalar(con, "SELECT current_setting('differential_merge_max_concurrent')") == 3
    con.execute("SET differential_merge_max_concurrent = 0")
    assert scalar(con, "SELECT current_setting('differential_merge_max_concurrent')") == 0


def test_abort_refusals(con):
    diverged(con)
    refused(con, "SELECT * FROM differential_abort_merge('shop', 'no-such-operation')", "merge_request_not_found")
    con.execute("SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', request_id => 'done')")
    operation = scalar(con, "SELECT operation_id FROM differential_merge_requests('shop', request_id => 'done')")
    refused(con, f"SELECT * FROM differential_abort_merge('shop', '{operation}')", "merge_already_complete")
    refused(con, "SELECT * FROM differential_merge_resolutions('shop', 'unknown')", "merge_request_not_found")
    assert con.execute("SELECT * FROM differential_merge_resolutions('shop', 'done')").fetchall() == []


def test_bad_options_are_refused_at_bind_and_change_nothing(con):
    diverged(con)
    before = repository_state(con)
    refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', schema_mode => 'loose')",
            "invalid_argument")
    refused(con, "SELECT * FROM differential_merge_branch_preview('shop', 'main', 'side', conflict_limit => -1)",
            "invalid_argument")
    refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', "
                 "resolution_tables => map {'other.items': 'memory.main.x'})", "invalid_argument")
    refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', "
                 "resolution_tables => map {'main.items': NULL})", "invalid_argument")
    assert repository_state(con) == before
    assert con.execute("SELECT count(*) FROM differential_merge_requests('shop')").fetchone() == (0,)


def test_unsupported_objects_are_named_for_each_input(con):
    con.execute("ATTACH 'differential:mixed' AS mixed")
    con.execute("CREATE TABLE mixed.items (id INTEGER PRIMARY KEY, v INTEGER)")
    con.execute("CALL differential_create_snapshot('mixed')")
    con.execute("CALL differential_create_branch('mixed', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:mixed' AS side (BRANCH 'side')")
    con.execute("CREATE TABLE side.theirs_log (id INTEGER PRIMARY KEY, note JSON)")  # a JSON column, on theirs only
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("CREATE SEQUENCE mixed.ours_counter")                    # a sequence, on ours only
    con.execute("CALL differential_create_snapshot('mixed')")
    con.execute("DETACH mixed")
    before = repository_state(con)
    message = refused(con, "SELECT * FROM differential_merge_branch('mixed', 'main', 'side', 'main', "
                           "schema_mode => 'catalog')", "merge_unsupported")
    assert "ours_counter" in message and "in ours" in message, message
    assert "theirs_log" in message and "in theirs" in message, message
    assert repository_state(con) == before


def test_the_read_budget_counts_only_what_the_merge_reads(con):
    """Tables a side left byte-identical to the base are not read, so they do not count."""
    con.execute("ATTACH 'differential:wide' AS wide")
    for t in range(3):
        con.execute(f"CREATE TABLE wide.t{t} (id INTEGER PRIMARY KEY, v INTEGER)")
        con.execute(f"INSERT INTO wide.t{t} SELECT range, range FROM range(100)")
    con.execute("CALL differential_create_snapshot('wide')")
    con.execute("CALL differential_create_branch('wide', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:wide' AS side (BRANCH 'side')")
    con.execute("UPDATE side.t1 SET v = -1 WHERE id = 1")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("UPDATE wide.t0 SET v = -1 WHERE id = 0")
    con.execute("CALL differential_create_snapshot('wide')")
    con.execute("DETACH wide")
    con.execute("DETACH side")
    # Shortcut: t0 reads base and ours, t1 base and theirs, t2 nothing: 400 rows. Reference: 900.
    refused(con, "SELECT * FROM differential_merge_branch('wide', 'main', 'side', 'r', max_rows_read => 399)",
            "merge_limit_exceeded")
    assert con.execute("SELECT merge_action FROM differential_merge_branch('wide', 'main', 'side', 'r', "
                       "max_rows_read => 400)").fetchone() == ("created_branch",)
    con.execute("SET differential_merge_skip_unchanged = false")
    message = refused(con, "SELECT * FROM differential_merge_branch('wide', 'main', 'side', 'r2', max_rows_read => 400)",
                      "merge_limit_exceeded")
    assert "900 rows" in message, message


def test_merge_inside_an_explicit_transaction_is_refused(con):
    """Merges require autocommit: inside BEGIN a merge would publish a snapshot that the ROLLBACK
    could not undo. differential_merge_branch refuses with autocommit_required, and after the
    ROLLBACK nothing has changed."""
    diverge(con, ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"],
            ["UPDATE t SET v = 'x' WHERE id = 1"], ["UPDATE t SET v = 'y' WHERE id = 2"])
    before = repository_state(con)
    con.execute("BEGIN")
    try:
        refused(con, merge_sql(request_id="'in-transaction'"), "autocommit_required")
    finally:
        con.execute("ROLLBACK")
    assert repository_state(con) == before
    # Nothing is recorded either, and the same request merges once autocommit is back.
    assert con.execute("SELECT count(*) FROM differential_merge_requests('shop')").fetchone() == (0,)
    assert con.execute(merge_sql(request_id="'in-transaction'")).fetchall() == [("main", 4, "merged")]
