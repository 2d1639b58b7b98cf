"""Writes test/data/golden-schema-<n>: a repository of metadata schema n, written by the last build of that schema,
kept so that every later build proves it opens and migrates it (test/python/format/test_golden_schemas.py).
Run it only with that build: python3 make_golden_schema.py <n> <path of the build's extension>. The builds were those
of the commits in BUILT_BY (the last commit of main at each schema); the workload uses only SQL every one of them has:
snapshots with names and authors, a branch, a durable merge request, a view, a deletion, and an uncheckpointed WAL
tail (a process that ends without closing leaves its published commits as WAL)."""
import pathlib
import shutil
import sqlite3
import sys

from golden_fixture import fold_and_tidy, run_writer

BUILT_BY = {2: "1abc18d", 4: "38f4ae9", 5: "a5fe732", 6: "1a79bdb", 7: "091d1d7", 8: "b56a562", 9: "f92882f",
            10: "170a0bf", 11: "f0d0d2e", 12: "7cf58c1", 13: "2038bdf"}

WRITER = """con.execute("CREATE TABLE golden.items (id INTEGER PRIMARY KEY, name VARCHAR, qty INTEGER)")
con.execute("INSERT INTO golden.items SELECT range, 'item ' || range, range % 7 FROM range(1, 1001)")
con.execute("CALL differential_create_snapshot('golden', name => 'base', author => 'golden', message => 'a thousand')")
con.execute("CALL differential_create_branch('golden', 'side')")
con.execute("ATTACH 'differential:golden' AS side (BRANCH 'side')")
con.execute("UPDATE side.items SET qty = qty + 100 WHERE id <= 10")
con.execute("INSERT INTO side.items SELECT range, 'side ' || range, 1 FROM range(1001, 1011)")
con.execute("CALL differential_create_snapshot('side', name => 'side-work')")
con.execute("DETACH side")
con.execute("DELETE FROM golden.items WHERE id > 990")
con.execute("CALL differential_create_snapshot('golden', name => 'main-work', author => 'golden')")
con.execute("DETACH golden")  # a merge's target is detached
con.execute("SELECT * FROM differential_merge_branch('golden', 'main', 'side', 'main', request_id => 'golden-merge')")
con.execute("ATTACH 'differential:golden' AS golden")
con.execute("CREATE VIEW golden.stock AS SELECT sum(qty) AS total FROM golden.items")
con.execute("CALL differential_create_snapshot('golden', name => 'view')")
con.execute("INSERT INTO golden.items VALUES (-1, 'wal tail', 0)")
con.execute("INSERT INTO golden.items VALUES (-2, 'wal tail', 0)")
os._exit(0)
"""


def main(schema, extension):
    target = pathlib.Path(__file__).resolve().parent / f"golden-schema-{schema}"
    if target.exists():
        shutil.rmtree(target)
    run_writer(WRITER, extension, target)
    db = sqlite3.connect(target / "metadata.sqlite")
    found = db.execute("SELECT value FROM repository_meta WHERE key = 'schema_version'").fetchone()
    assert found == (str(schema),), f"that build writes schema {found}, not {schema}"
    db.close()
    fold_and_tidy(target)
    for transient in ("pins.sqlite", "pins.sqlite-wal", "pins.sqlite-shm"):  # reader pins live only while read
        (target / transient).unlink(missing_ok=True)
    print(f"wrote {target}")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
