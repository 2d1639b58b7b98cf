"""A ranged file's length is the sum of its extents (schema 13): its branch_files row holds 0, every reader adds the
extents up, a gap in their seq numbers is corrupt_metadata and changes nothing, and what the stored length used to
answer (the WAL's bytes in the storage totals) comes out the same."""
import sqlite3
import textwrap

from differential_testing import SQLITE_FILES, connect, refused, run_python, scalar, tree_fingerprint

WAL = "database.duckdb.wal"


def leave_wal_tail(repository, rows):
    """A process that commits `rows` one-row transactions after a checkpoint and dies without closing: its published
    commits stay as WAL extents, one inline extent per commit."""
    run_python(textwrap.dedent(f"""
        import os
        from differential_testing import connect
        con = connect({str(repository)!r})
        con.execute("ATTACH 'differential:tail' AS t")
        con.execute("CREATE TABLE t.items (id INTEGER, note VARCHAR)")
        con.execute("CHECKPOINT t")
        for i in range({rows}):
            con.execute("INSERT INTO t.items VALUES (?, 'tail')", [i])
        os._exit(0)
    """))


def metadata_rows(repository, sql):
    db = sqlite3.connect(f"file:{repository / 'metadata.sqlite'}?mode=ro", uri=True)
    try:
        return db.execute(sql, (WAL,)).fetchall()
    finally:
        db.close()


def stored_state(repository):
    """The repository's data: its segments' bytes and its SQLite files' rows. Left out: the branch lock file, which
    names the last process that took the lock, as every attach (refused or not) does."""
    return tree_fingerprint(repository / "segments", *(repository / name for name in SQLITE_FILES))


def test_the_wal_row_holds_no_length_and_its_extents_are_the_file(repository):
    leave_wal_tail(repository, 5)
    assert metadata_rows(repository, "SELECT length FROM branch_files WHERE file_name = ?") == [(0,)]
    extents = metadata_rows(repository, "SELECT seq, length FROM file_extents WHERE file_name = ? ORDER BY seq")
    assert [seq for seq, _ in extents] == list(range(len(extents))) and len(extents) >= 5, extents
    wal_bytes = sum(length for _, length in extents)
    main_bytes = metadata_rows(repository, "SELECT length FROM branch_files WHERE file_name != ?")[0][0]
    con = connect(repository)
    # Before anything replays the WAL: the logical bytes are the database file's and the WAL's, as plain files.
    assert scalar(con, "SELECT logical_bytes FROM differential_storage_info('tail')") == main_bytes + wal_bytes
    con.execute("ATTACH 'differential:tail' AS t")
    assert con.execute("SELECT count(*), sum(id) FROM t.items").fetchone() == (5, 10)


def test_a_gap_in_the_extents_is_corrupt_metadata_and_changes_nothing(repository):
    leave_wal_tail(repository, 3)
    db = sqlite3.connect(repository / "metadata.sqlite")
    db.execute("DELETE FROM file_extents WHERE file_name = ? AND seq = 1", (WAL,))
    db.commit()
    db.close()
    before = stored_state(repository)
    con = connect(repository)
    message = refused(con, "ATTACH 'differential:tail' AS t", "corrupt_metadata")
    assert "skip from 1 to 2" in message and "differential_verify" in message, message
    assert stored_state(repository) == before
    # The check the message names finds the gap.
    assert con.execute("SELECT problems, detail FROM differential_verify() WHERE check_name = 'wal_ranges'").fetchone() \
        == (1, f"tail branch main {WAL}: 2 byte ranges numbered 0 to 2: a byte range is missing from the metadata")
