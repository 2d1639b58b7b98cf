"""Cleanup's sweep (by reference counts): a new live root naming a missing index page refuses the whole cleanup with
corrupt_metadata and deletes nothing; otherwise exactly the pages and chunks no live root reaches go."""
import sqlite3

from differential_testing import refused


def metadata_counts(repository):
    db = sqlite3.connect(repository / "metadata.sqlite")
    try:
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("roots", "index_pages", "chunks")}
    finally:
        db.close()


def snapshot_and_dropped_branch(con):
    """A snapshot of db, and garbage that a successful cleanup would delete: a dropped branch's own data."""
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t AS SELECT range AS id FROM range(100000)")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CALL differential_create_branch('db', 'gone')")
    con.execute("ATTACH 'differential:db' AS gone (BRANCH 'gone')")
    con.execute("CREATE TABLE gone.junk AS SELECT range AS id, hash(range) AS h FROM range(100000)")
    con.execute("CHECKPOINT gone")
    con.execute("DETACH gone")
    con.execute("CALL differential_drop_branch('db', 'gone')")


def test_missing_live_page_refuses_and_deletes_nothing(con, repository):
    snapshot_and_dropped_branch(con)
    con.execute("DETACH db")
    db = sqlite3.connect(repository / "metadata.sqlite")
    (pages,) = db.execute("SELECT pages FROM roots r JOIN snapshots s USING (root_id)").fetchone()
    db.execute("DELETE FROM index_pages WHERE hash = ?", [pages[:32]])
    db.commit()
    db.close()
    before = metadata_counts(repository)
    message = refused(con, "CALL differential_cleanup_old_files(cleanup_all => true)", "corrupt_metadata")
    assert pages[:32].hex() in message.lower()
    assert metadata_counts(repository) == before


def test_sweep_keeps_what_live_roots_reach(con, repository):
    snapshot_and_dropped_branch(con)
    before = metadata_counts(repository)
    row = con.execute("SELECT roots_deleted, index_pages_deleted, chunks_deleted "
                      "FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()
    after = metadata_counts(repository)
    assert row[0] > 0 and row[1] > 0 and row[2] > 0
    assert after == {t: before[t] - n for t, n in zip(("roots", "index_pages", "chunks"), row)}
    # What is left is exactly what live roots reach, and it still reads.
    assert con.execute("SELECT count(*), sum(id) FROM db.t").fetchone() == (100000, 4999950000)
    assert con.execute("SELECT count(*) FROM db.t AT (VERSION => 1)").fetchone()[0] == 100000
    checks = con.execute("SELECT check_name, objects_checked, problems FROM differential_verify() ORDER BY 1").fetchall()
    assert [c[0] for c in checks] == ["chunks", "references", "roots", "wal_ranges"]
    assert all(c[2] == 0 for c in checks), checks
    assert checks[0][1] == after["chunks"]
