"""differential_sql_functions: 'read_only' refuses every function that writes a repository, keeps the reads, and
limits process-wide listings to the databases the instance attached."""
import json
import textwrap

import duckdb
import pytest

from differential_testing import connect, refused, repository_state, run_python

# Every function that writes a repository, called with arguments that bind: the refusal comes first.
WRITERS = [
    "differential_create_snapshot('shop')",
    "differential_create_branch('shop', 'b')",
    "differential_restore('shop', 1)",
    "differential_clone_database('shop', 'copy')",
    "differential_export_snapshot('shop')",
    "differential_evict_exported('shop')",
    "differential_fetch_evicted('shop')",
    "differential_recover_export('shop', 's3://bucket/x/')",
    "differential_recover_branch('shop', 'main')",
    "differential_resolve_conflict('r1')",
    "differential_drop_branch('shop', 'side')",
    "differential_drop_database('shop')",
    "differential_expire_snapshots('shop')",
    "differential_cleanup_old_files()",
    "differential_cleanup_remote_files('shop')",
    "differential_merge_branch('shop', 'main', 'side', 'main')",
    "differential_merge_snapshots('shop', 1, 2, 3, 'main')",
    "differential_abort_merge('shop', 'r1')",
]

READS = [
    "differential_databases()",
    "differential_branches('shop')",
    "differential_snapshots('shop')",
    "differential_storage_info('shop')",
    "differential_verify('shop')",
    "differential_merge_ancestry('shop', 1, 2)",
    "differential_merge_virtual_base('shop', 1, 2)",
    "differential_merge_requests('shop')",
    "differential_merge_status()",
    "differential_shipping()",
    "differential_followers()",
    "differential_io_counters()",
]


def shop(con):
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items (id INTEGER PRIMARY KEY, price INTEGER)")
    con.execute("INSERT INTO shop.items SELECT range, range FROM range(10)")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'side', snapshot => 1)")
    con.execute("UPDATE shop.items SET price = 0 WHERE id = 1")
    con.execute("CALL differential_create_snapshot('shop')")


@pytest.mark.parametrize("call", WRITERS)
def test_read_only_refuses_every_function_that_writes_a_repository(con, call):
    shop(con)
    before = repository_state(con)
    con.execute("SET differential_sql_functions = 'read_only'")
    message = refused(con, f"SELECT * FROM {call}", "function_not_allowed")
    assert call.split("(")[0] in message and "'read_only'" in message
    refused(con, f"CALL {call}", "function_not_allowed")
    assert repository_state(con) == before


def test_read_only_keeps_the_reads(con):
    shop(con)
    con.execute("SET differential_sql_functions = 'read_only'")
    for call in READS:
        con.execute(f"SELECT * FROM {call}").fetchall()
    assert [r[0] for r in con.execute("SELECT snapshot_id FROM differential_snapshots('shop') ORDER BY 1").fetchall()] \
        == [1, 2]
    assert con.execute("SELECT count(*) FROM shop.snapshots()").fetchone()[0] == 2


def test_the_default_is_all_and_writers_work(con):
    shop(con)
    assert con.execute("SELECT current_setting('differential_sql_functions')").fetchone()[0] == "all"
    assert con.execute("SELECT snapshot_id FROM differential_create_snapshot('shop')").fetchone()[0] == 3


def test_read_only_cannot_be_undone_and_values_are_checked(con):
    refused(con, "SET differential_sql_functions = 'some'", "invalid_argument")
    con.execute("SET differential_sql_functions = 'read_only'")
    refused(con, "SET differential_sql_functions = 'all'", "function_not_allowed")
    assert con.execute("SELECT current_setting('differential_sql_functions')").fetchone()[0] == "read_only"


def test_read_only_merge_status_lists_only_this_instances_databases(repository):
    # Two instances in one process: the first merges `other` (held at the start of its comparison); the second,
    # 'read_only' with only `shop` attached, must not see it, while an unrestricted instance does.
    code = textwrap.dedent(f"""
        import json, threading, time
        from differential_testing import connect
        repo = {str(repository)!r}
        con = connect(repo)
        for db in ("shop", "other"):
            con.execute(f"ATTACH 'differential:{{db}}' AS {{db}}")
            con.execute(f"CREATE TABLE {{db}}.items (id INTEGER PRIMARY KEY, price INTEGER)")
            con.execute(f"INSERT INTO {{db}}.items SELECT range, range FROM range(100)")
            con.execute(f"CALL differential_create_snapshot('{{db}}')")
            con.execute(f"DETACH {{db}}")
        con.execute("CALL differential_create_branch('other', 'side')")
        con.execute("ATTACH 'differential:other' AS side (BRANCH 'side')")
        con.execute("UPDATE side.items SET price = 0 WHERE id = 1")
        con.execute("CALL differential_create_snapshot('side')")
        con.execute("DETACH side")
        merge = threading.Thread(target=lambda: con.cursor().execute(
            "SELECT * FROM differential_merge_branch_preview('other', 'main', 'side')").fetchall())
        merge.start()
        watcher = connect(repo)
        sandbox = connect()
        sandbox.execute(f"ATTACH 'differential:shop' AS shop (REPOSITORY '{{repo}}', READ_ONLY)")
        sandbox.execute("SET differential_sql_functions = 'read_only'")
        seen, hidden = [], None
        deadline = time.time() + 30
        while not seen and time.time() < deadline:
            seen = watcher.execute("SELECT DISTINCT database_name FROM differential_merge_status()").fetchall()
            if seen:
                hidden = sandbox.execute("SELECT DISTINCT database_name FROM differential_merge_status()").fetchall()
                again = watcher.execute("SELECT DISTINCT database_name FROM differential_merge_status()").fetchall()
            time.sleep(0.02)
        merge.join()
        print(json.dumps({{"seen": seen, "hidden": hidden, "again": again}}))
    """)
    result = json.loads(run_python(code, env={"DIFFERENTIAL_PAUSE_POINT": "merge.comparison:2000"}).splitlines()[-1])
    assert result["seen"] == [["other"]] and result["again"] == [["other"]], result
    assert result["hidden"] == [], result
