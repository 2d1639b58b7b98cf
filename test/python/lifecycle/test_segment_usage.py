"""Each segment's live bytes and records (schema 10) are kept by triggers, so cleanup reads one row per segment:
they must equal a recount of the chunk and extent rows after every kind of write, and verify must catch a drift."""
import sqlite3

from differential_testing import connect, scalar

RECOUNT = """
SELECT s.segment_id, s.live_bytes, s.live_records,
       coalesce((SELECT sum(length) FROM chunks c WHERE c.segment_id = s.segment_id), 0) +
       coalesce((SELECT sum(length) FROM file_extents e WHERE e.segment_id = s.segment_id), 0),
       (SELECT count(*) FROM chunks c WHERE c.segment_id = s.segment_id) +
       (SELECT count(*) FROM file_extents e WHERE e.segment_id = s.segment_id)
FROM segments s WHERE s.removed_at_us IS NULL ORDER BY 1"""


def usage(repository):
    """(segment, kept bytes, kept records, recounted bytes, recounted records) for every live segment."""
    db = sqlite3.connect(f"file:{repository / 'metadata.sqlite'}?mode=ro", uri=True)
    try:
        return db.execute(RECOUNT).fetchall()
    finally:
        db.close()


def assert_counters_match(repository, step):
    rows = usage(repository)
    assert rows, step
    for segment, kept_bytes, kept_records, bytes_, records in rows:
        assert (kept_bytes, kept_records) == (bytes_, records), (step, segment)
    return rows


def test_counters_follow_every_write_path(con, repository):
    con.execute("ATTACH 'differential:churn' AS churn")
    con.execute("CREATE TABLE churn.t AS SELECT range AS x, repeat('y', 40) || range AS s FROM range(200000)")
    con.execute("CALL differential_create_snapshot('churn')")
    assert_counters_match(repository, "chunks of a checkpoint")
    # Uncheckpointed WAL appends large enough to be published as ranges in segments (extent rows).
    con.execute("INSERT INTO churn.t SELECT range, 'wal ' || range FROM range(200000, 260000)")
    assert_counters_match(repository, "WAL ranges")
    extents = sqlite3.connect(f"file:{repository / 'metadata.sqlite'}?mode=ro", uri=True)
    in_segments = extents.execute("SELECT count(*) FROM file_extents WHERE segment_id <> 0").fetchone()[0]
    extents.close()
    assert in_segments > 0, "the insert should have published WAL bytes in a segment"
    # The checkpoint folds the WAL in: its extents go, new chunks come.
    con.execute("CHECKPOINT churn")
    assert_counters_match(repository, "checkpoint deleting the WAL's extents")
    con.execute("CALL differential_create_branch('churn', 'side')")
    con.execute("ATTACH 'differential:churn' AS side (BRANCH 'side')")
    con.execute("UPDATE side.t SET s = 'side' WHERE x % 3 = 0")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("DETACH side")
    con.execute("CALL differential_drop_branch('churn', 'side')")
    for version in range(3):
        con.execute(f"CREATE OR REPLACE TABLE churn.t AS SELECT range + {version} AS x FROM range(200000)")
        con.execute("CALL differential_create_snapshot('churn')")
    con.execute("DETACH churn")
    before = assert_counters_match(repository, "before cleanup")
    con.execute("SELECT * FROM differential_expire_snapshots('churn', older_than => INTERVAL 0 SECOND)").fetchall()
    freed = con.execute("SELECT chunks_deleted, segments_deleted, segments_compacted "
                        "FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()
    # Chunks deleted (their rows leave the counters) and a segment compacted (its rows moved to another).
    assert freed[0] > 0 and freed[2] > 0, freed
    after = assert_counters_match(repository, "after the sweep deleted chunks and compaction moved the rest")
    assert sum(r[1] for r in after) < sum(r[1] for r in before)
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def test_verify_reports_a_counter_that_drifted(repository):
    con = connect(repository)
    con.execute("ATTACH 'differential:d' AS d")
    con.execute("CREATE TABLE d.t AS SELECT range AS x FROM range(100000)")
    con.execute("CALL differential_create_snapshot('d')")
    con.close()
    segment = assert_counters_match(repository, "written")[0][0]
    db = sqlite3.connect(repository / "metadata.sqlite")
    db.execute("UPDATE segments SET live_bytes = live_bytes + 7 WHERE segment_id = ?", [segment])
    db.commit()
    db.close()
    con = connect(repository)
    rows = con.execute("SELECT check_name, problems, detail FROM differential_verify() WHERE problems > 0").fetchall()
    assert [(r[0], r[1]) for r in rows] == [("references", 1)], rows
    assert f"segment {segment} records" in rows[0][2], rows
