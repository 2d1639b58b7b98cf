"""The last step of every golden repository generator: the fixture keeps metadata.sqlite and segments/ only."""
import shutil
import sqlite3
import subprocess
import sys

# The start of every writer script: the build under test (argv[1]) loaded, the golden repository (argv[2]) set.
WRITER_PROLOGUE = """
import os, sys
import duckdb
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{sys.argv[1]}'")
con.execute(f"SET differential_repository = '{sys.argv[2]}'")
con.execute("ATTACH 'differential:golden' AS golden")
"""


def run_writer(body, extension, target):
    """Runs WRITER_PROLOGUE + body in a fresh interpreter (its own DuckDB instance, ended as the body ends it)."""
    subprocess.run([sys.executable, "-c", WRITER_PROLOGUE + body, extension, str(target)], check=True)


def fold_and_tidy(target):
    # Fold SQLite's WAL into the main file so the fixture is two kinds of files only.
    db = sqlite3.connect(target / "metadata.sqlite")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for leftover in ("metadata.sqlite-wal", "metadata.sqlite-shm"):
        (target / leftover).unlink(missing_ok=True)
    shutil.rmtree(target / "locks", ignore_errors=True)
