"""Writes test/data/golden-schema-3: a repository of metadata schema 3 (the last schema whose WAL extents
all live in segment records) holding published but uncheckpointed WAL commits, so every later build proves
it still reads a WAL stored that way and migrates it. It was written by the build of commit 1f45e68;
run it only with a build of schema 3: python3 make_golden_schema_3.py <path of that build's extension>."""
import pathlib
import shutil
import sqlite3
import sys

from golden_fixture import fold_and_tidy, run_writer

target = pathlib.Path(__file__).resolve().parent / "golden-schema-3"
if target.exists():
    shutil.rmtree(target)
WRITER = """con.execute("CREATE TABLE golden.numbers AS SELECT range AS n, 'row ' || range AS label FROM range(5000)")
con.execute("CALL differential_create_snapshot('golden', name => 'checkpointed')")
for i in range(3):
    con.execute("INSERT INTO golden.numbers VALUES (?, 'wal tail')", [-1 - i])
con.execute("INSERT INTO golden.numbers SELECT -100 - range, repeat('w', 200) FROM range(1000)")
# Every commit is published; ending without closing skips the checkpoint a close would run, so they
# stay WAL extents.
os._exit(0)
"""
run_writer(WRITER, sys.argv[1], target)
db = sqlite3.connect(target / "metadata.sqlite")
assert db.execute("SELECT value FROM repository_meta WHERE key = 'schema_version'").fetchone() == ("3",)
assert db.execute("SELECT count(*) FROM file_extents").fetchone()[0] > 0, "no WAL extents were left"
db.close()
fold_and_tidy(target)
print(f"wrote {target}")
