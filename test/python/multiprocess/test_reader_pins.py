"""Readers pin what they open outside the metadata's write lock: a writer's transaction never holds them up, and
cleanup still keeps what they read (docs/DURABILITY.md §10)."""
import sqlite3
import subprocess
import sys

from differential_testing import scalar

# Holds the lock until the test closes stdin, or for 20 s: a reader that waited for it fails the test then,
# through the counters, instead of hanging for the busy timeout.
HOLD_METADATA_LOCK = r'''
import select, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
select.select([sys.stdin], [], [], 20.0)
db.execute("ROLLBACK")
'''


def counters(con):
    return dict(con.execute("SELECT counter, value FROM differential_io_counters()").fetchall())


def make_history(con):
    con.execute("ATTACH 'differential:pinned' AS w")
    con.execute("CREATE TABLE w.t AS SELECT range AS x FROM range(100000)")
    con.execute("CALL differential_create_snapshot('w')")
    con.execute("UPDATE w.t SET x = x * 2")
    con.execute("CALL differential_create_snapshot('w')")
    con.execute("UPDATE w.t SET x = x * 3")
    con.execute("CALL differential_create_snapshot('w')")


def test_readers_open_snapshots_while_another_process_holds_the_metadata_write_lock(con, repository):
    make_history(con)
    con.execute("DETACH w")
    holder = subprocess.Popen([sys.executable, "-c", HOLD_METADATA_LOCK, str(repository / "metadata.sqlite")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = counters(con)
        # A branch read-only, a snapshot attachment, and time travel to a snapshot not open yet: each pins a root.
        con.execute("ATTACH 'differential:pinned' AS head (READ_ONLY)")
        con.execute("ATTACH 'differential:pinned' AS first (SNAPSHOT 1)")
        assert scalar(con, "SELECT sum(x) FROM first.t") == sum(range(100000))
        assert scalar(con, "SELECT sum(x) FROM head.t AT (VERSION => 2)") == 2 * sum(range(100000))
        assert scalar(con, "SELECT sum(x) FROM head.t") == 6 * sum(range(100000))
        after = counters(con)
        assert holder.poll() is None, "the lock holder ended before the reads were done"
    finally:
        holder.stdin.close()
        holder.wait()
    assert after["metadata_busy_waits"] == before["metadata_busy_waits"], (before, after)
    assert after["metadata_write_transactions"] == before["metadata_write_transactions"], (before, after)
    assert after["pin_write_transactions"] - before["pin_write_transactions"] == 3, (before, after)
    pins = sqlite3.connect(repository / "pins.sqlite")
    assert pins.execute("SELECT count(*) FROM pins").fetchone()[0] == 3
    pins.close()
    con.execute("DETACH first")
    pins = sqlite3.connect(repository / "pins.sqlite")
    assert pins.execute("SELECT count(*) FROM pins").fetchone()[0] == 2
    con.execute("DETACH head")  # with it, its time-travel attachment of snapshot 2
    assert pins.execute("SELECT count(*) FROM pins").fetchone()[0] == 0
    pins.close()


def root_exists(repository, root_id):
    db = sqlite3.connect(repository / "metadata.sqlite")
    try:
        return db.execute("SELECT count(*) FROM roots WHERE root_id = ?", (root_id,)).fetchone()[0] == 1
    finally:
        db.close()


def test_a_root_only_a_reader_pins_is_kept_by_cleanup_then_freed_once_the_reader_closes(con, repository):
    make_history(con)
    db = sqlite3.connect(repository / "metadata.sqlite")
    (root,) = db.execute("SELECT root_id FROM snapshots WHERE snapshot_id = 1").fetchone()
    db.close()
    con.execute("ATTACH 'differential:pinned' AS first (SNAPSHOT 1)")
    con.execute("CALL differential_expire_snapshots('pinned', versions => [1])")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    assert root_exists(repository, root)
    assert scalar(con, "SELECT sum(x) FROM first.t") == sum(range(100000))
    # Cleanup again while pinned: the root stays a candidate (no trigger sees a reader's pin go).
    assert con.execute("SELECT roots_deleted FROM differential_cleanup_old_files(cleanup_all => true)").fetchone() == (0,)
    assert root_exists(repository, root)
    con.execute("DETACH first")
    freed = con.execute("SELECT roots_deleted, chunks_deleted FROM differential_cleanup_old_files(cleanup_all => true)"
                        ).fetchone()
    assert freed[0] == 1 and freed[1] > 0, freed
    assert not root_exists(repository, root)
    assert scalar(con, "SELECT sum(x) FROM w.t") == 6 * sum(range(100000))
    assert scalar(con, "SELECT sum(x) FROM w.t AT (VERSION => 2)") == 2 * sum(range(100000))
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
