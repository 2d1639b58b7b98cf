"""differential_io_counters(): the process's counts of extension file system calls and metadata statements, the
evidence the benchmarks report (a warm query touches no file; a small commit is one metadata transaction; readers
never wait on a writer's lock)."""
import pathlib
import sqlite3
import threading

from differential_testing import connect


def counters(con):
    return dict(con.execute("SELECT counter, value FROM differential_io_counters()").fetchall())


def delta(before, after):
    return {k: after[k] - before[k] for k in after if not k.endswith("_max_us") and after[k] != before[k]}


def small_commits(con, count):
    """The counters' change over `count` one-row commits to a new table."""
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("CREATE TABLE s.items (id BIGINT, note VARCHAR)")
    before = counters(con)
    for i in range(count):
        con.execute("INSERT INTO s.items VALUES (?, 'small')", [i])
    return delta(before, counters(con))


def test_a_small_commit_is_one_sync_and_one_metadata_transaction(con):
    d = small_commits(con, 10)
    assert d["fs_sync"] == 10 and d["metadata_write_transactions"] == 10, d
    # Inline WAL bytes: no segment record, so no segment flush.
    assert "segment_fsync" not in d and d["fs_write"] >= 10, d
    # A lone publication runs without a savepoint: BEGIN, the read of the WAL's row by the branch id its handle kept
    # since its first publication (no lookup by name; the row holds no length to update, schema 13), the INSERT of
    # the inline extent (no DELETE: nothing was truncated), COMMIT.
    assert d["metadata_statements"] == 40, d


def test_a_small_commit_writes_one_metadata_page(con):
    # The extent, one entry in the B-tree clustered on its key (schema 14), and now and then a split. Its primary key
    # had an index of its own, which took a second page; an inline extent stays out of the segment index (schema 12),
    # which took a fourth, and the WAL's branch_files row holds no length to update (schema 13), which took a third.
    d = small_commits(con, 100)
    assert d["metadata_write_transactions"] == 100, d
    assert 100 <= d["metadata_pages_written"] < 150, d


def test_warm_reads_make_no_file_system_call(con):
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("CREATE TABLE s.items AS SELECT range AS id, range % 7 AS k FROM range(300000)")
    con.execute("DETACH s")
    con.execute("ATTACH 'differential:shop' AS s (READ_ONLY)")
    query = "SELECT k, count(*), sum(id) FROM s.items GROUP BY k ORDER BY k"
    cold = counters(con)
    expected = con.execute(query).fetchall()
    warm = counters(con)
    assert warm["fs_read"] > cold["fs_read"] and warm["fs_read_bytes"] > cold["fs_read_bytes"]
    assert con.execute(query).fetchall() == expected
    assert delta(warm, counters(con)) == {}


def test_a_wait_for_another_connections_lock_is_counted(repository):
    con = connect(repository)
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("CREATE TABLE s.items (id BIGINT)")
    con.execute("CALL enable_logging('differential')")
    before = counters(con)
    # Another connection holds the metadata's write lock; the commit waits for it, then goes through.
    blocker = sqlite3.connect(pathlib.Path(repository) / "metadata.sqlite", isolation_level=None, timeout=0,
                              check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    threading.Timer(0.3, lambda: blocker.execute("COMMIT")).start()
    con.execute("INSERT INTO s.items VALUES (1)")
    after = counters(con)
    blocker.close()
    assert after["metadata_busy_waits"] - before["metadata_busy_waits"] == 1
    assert after["metadata_busy_wait_max_us"] >= 250_000
    assert after["metadata_busy_wait_total_us"] - before["metadata_busy_wait_total_us"] >= 250_000
    assert con.execute("SELECT count(*) FROM s.items").fetchone()[0] == 1
    # The wait reached DuckDB's log too, with its duration and the statement that waited.
    waits = con.execute("SELECT duration_ms, detail FROM duckdb_logs_parsed('differential') "
                        "WHERE event = 'metadata_busy_wait'").fetchall()
    assert len(waits) == 1 and waits[0][0] >= 250 and "BEGIN IMMEDIATE" in waits[0][1], waits
