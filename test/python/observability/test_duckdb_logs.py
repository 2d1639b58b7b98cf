"""The extension's events reach DuckDB's own log: `SET enable_logging = true` and duckdb_logs show rows of
type 'differential' whose message parses (duckdb_logs_parsed) into event, duration_ms and detail."""
from differential_testing import scalar


def differential_events(con):
    return con.execute(
        "SELECT event, duration_ms, detail FROM duckdb_logs_parsed('differential') ORDER BY timestamp"
    ).fetchall()


def test_commit_and_cleanup_log_their_durations(con):
    con.execute("SET enable_logging = true")
    con.execute("ATTACH 'differential:shop' AS s")
    # Over 64 KiB of WAL: this commit's bytes go to a segment record, which its sync flushes.
    con.execute("CREATE TABLE s.items AS SELECT range AS id FROM range(20000)")
    con.execute("INSERT INTO s.items VALUES (20000)")
    events = differential_events(con)
    names = {event for event, _, _ in events}
    assert {"segment_fsync", "publish"} <= names, events
    # Each commit synced the WAL: a publication of the branch's WAL file with its duration.
    wal = [(ms, detail) for event, ms, detail in events if event == "publish" and detail.endswith(" bytes)")]
    assert any("/shop/main/database.duckdb.wal" in detail for _, detail in wal), events
    assert all(ms is not None and ms >= 0 for event, ms, _ in events if event in ("segment_fsync", "publish"))
    assert scalar(con, "SELECT count(*) FROM duckdb_logs WHERE type = 'differential' AND log_level = 'INFO'") == len(
        events
    )

    con.execute("DETACH s")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    cleanup = [(ms, detail) for event, ms, detail in differential_events(con) if event == "cleanup"]
    assert len(cleanup) == 1, differential_events(con)
    ms, detail = cleanup[0]
    assert ms is not None and ms >= 0
    assert "bytes freed" in detail and "segments deleted" in detail


def test_a_small_commit_is_one_metadata_commit_and_no_segment_flush(con):
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("CREATE TABLE s.items (id BIGINT, note VARCHAR)")
    con.execute("CALL enable_logging('differential')")
    for i in range(5):
        con.execute("INSERT INTO s.items VALUES (?, 'small')", [i])
    events = [event for event, _, _ in differential_events(con)]
    # Each commit's WAL bytes travel inline in its publication: SQLite's commit is its one durable write.
    assert events.count("publish") == 5 and events.count("group_commit") == 5, events
    assert "segment_fsync" not in events, events
    # A large commit still goes through a segment record and its flush.
    con.execute("INSERT INTO s.items SELECT range, repeat('x', 100) FROM range(2000)")
    events = [event for event, _, _ in differential_events(con)]
    assert events.count("segment_fsync") == 1 and events.count("publish") == 6, events


def test_nothing_is_logged_unless_logging_is_enabled(con):
    con.execute("ATTACH 'differential:quiet' AS q")
    con.execute("CREATE TABLE q.t AS SELECT 1 AS x")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    assert scalar(con, "SELECT count(*) FROM duckdb_logs WHERE type = 'differential'") == 0


def test_the_differential_log_type_can_be_selected_alone(con):
    # The type is registered with its level, so DuckDB's selection by type knows it.
    con.execute("CALL enable_logging('differential')")
    con.execute("ATTACH 'differential:picky' AS p")
    con.execute("CREATE TABLE p.t AS SELECT 1 AS x")
    types = {row[0] for row in con.execute("SELECT DISTINCT type FROM duckdb_logs").fetchall()}
    assert types == {"differential"}
