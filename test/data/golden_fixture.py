"""The last step of every golden repository generator: the fixture keeps metadata.sqlite and segments/ only."""
import shutil
import sqlite3


def fold_and_tidy(target):
    # Fold SQLite's WAL into the main file so the fixture is two kinds of files only.
    db = sqlite3.connect(target / "metadata.sqlite")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for leftover in ("metadata.sqlite-wal", "metadata.sqlite-shm"):
        (target / leftover).unlink(missing_ok=True)
    shutil.rmtree(target / "locks", ignore_errors=True)
