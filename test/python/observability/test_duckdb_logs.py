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
    con.execute("CREATE TABLE s.items AS SELECT range AS id FROM range(1000)")
    con.execute("INSERT INTO s.items VALUES (1000)")
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
