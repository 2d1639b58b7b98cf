"""The golden repositories (test/data/golden-format-1, store format 1 and schema 1; test/data/golden-schema-3)
open and read back."""
import shutil
import sqlite3

from differential_testing import METADATA_SCHEMA, REPO_ROOT, connect, scalar

GOLDEN = REPO_ROOT / "test" / "data" / "golden-format-1"


def test_golden_format_1_opens(tmp_path):
    repository = tmp_path / "golden"
    shutil.copytree(GOLDEN, repository)
    con = connect(repository)
    con.execute("ATTACH 'differential:golden' AS golden (READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM golden.numbers") == 13333 + 1
    assert scalar(con, "SELECT label FROM golden.numbers WHERE n = -1") == "uncheckpointed tail"
    assert scalar(con, "SELECT sum(n) FROM golden.numbers AT (VERSION => 1)") == sum(range(20000))
    assert scalar(con, "SELECT count(*) FROM golden.evens AT (VERSION => 2)") == len(
        [n for n in range(20000) if n % 3 and n % 2 == 0]
    )
    assert con.execute("SELECT snapshot_id, snapshot_name, author FROM golden.snapshots()").fetchall() == [
        (1, "first", "format-1"),
        (2, "second", None),
    ]
    con.execute("ATTACH 'differential:golden' AS side (BRANCH 'side', READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM side.numbers WHERE label = 'side'") == 10
    assert scalar(con, "SELECT count(*) FROM side.numbers") == 20000
    problems = con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0]
    assert problems == 0
    # A new build can still write to it.
    con.execute("DETACH golden")
    con.execute("ATTACH 'differential:golden' AS golden")
    con.execute("INSERT INTO golden.numbers VALUES (-2, 4, 'new')")
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('golden')") == 3


GOLDEN_SCHEMA_3 = REPO_ROOT / "test" / "data" / "golden-schema-3"


def test_golden_schema_3_wal_in_range_records_migrates_and_reads(tmp_path):
    """Schema 3 kept every WAL byte in segment records; schema 5 adds inline extents. A published, uncheckpointed
    WAL of schema 3 replays after the migration, new commits extend it inline, and a checkpoint folds both in."""
    repository = tmp_path / "golden"
    shutil.copytree(GOLDEN_SCHEMA_3, repository)
    before = sqlite3.connect(repository / "metadata.sqlite")
    assert before.execute("SELECT value FROM repository_meta WHERE key = 'schema_version'").fetchone() == ("3",)
    before.close()
    con = connect(repository)
    con.execute("ATTACH 'differential:golden' AS golden")
    expected = 5000 + 3 + 1000
    assert scalar(con, "SELECT count(*) FROM golden.numbers") == expected
    assert scalar(con, "SELECT count(*) FROM golden.numbers WHERE label = 'wal tail'") == 3
    con.execute("INSERT INTO golden.numbers VALUES (-9, 'schema 5')")
    metadata = sqlite3.connect(repository / "metadata.sqlite")
    kinds = metadata.execute("SELECT inline_data IS NOT NULL, count(*) FROM file_extents GROUP BY 1 ORDER BY 1").fetchall()
    # The migrated records and the new commit's inline extent make up one WAL.
    assert [inline for inline, _ in kinds] == [0, 1], kinds
    assert metadata.execute("SELECT value FROM repository_meta WHERE key = 'schema_version'").fetchone() == (METADATA_SCHEMA,)
    metadata.close()
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    con.execute("CHECKPOINT golden")
    con.execute("DETACH golden")
    con.execute("ATTACH 'differential:golden' AS golden (READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM golden.numbers") == expected + 1
    assert scalar(con, "SELECT count(*) FROM golden.numbers AT (VERSION => 1)") == 5000
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    # Schema 8's reference counts start uncounted on a migrated repository: the first cleanup counts every row,
    # deletes only garbage, and leaves counts the full mark agrees with.
    con.execute("DETACH golden")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    con.execute("ATTACH 'differential:golden' AS golden (READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM golden.numbers") == expected + 1
    assert scalar(con, "SELECT count(*) FROM golden.numbers AT (VERSION => 1)") == 5000
