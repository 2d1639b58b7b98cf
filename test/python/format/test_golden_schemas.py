"""Every earlier metadata schema opens and migrates: test/data/golden-schema-<n>, written by the last build of schema n
(test/data/make_golden_schema.py names the commits), holds the same history, which this build reads back whole after
migrating it in place, then extends: a write, a snapshot, a merge request replayed, a cleanup, all verified clean."""
import shutil
import sqlite3

import pytest
from differential_testing import METADATA_SCHEMA, REPO_ROOT, connect, scalar

DATA = REPO_ROOT / "test" / "data"
SCHEMAS = [2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
# The history make_golden_schema.py writes: a thousand items (qty = id % 7); on side, ids 1-10 get +100 and ids
# 1001-1010 arrive (qty 1); on main, ids 991-1000 go; the merge takes side's changes; a WAL tail adds -1 and -2.
MERGED_QTY = sum(i % 7 for i in range(1, 991)) + 100 * 10 + 10


def metadata_scalar(repository, sql):
    db = sqlite3.connect(repository / "metadata.sqlite")
    try:
        return db.execute(sql).fetchone()[0]
    finally:
        db.close()


def stored_schema(repository):
    return metadata_scalar(repository, "SELECT value FROM repository_meta WHERE key = 'schema_version'")


def test_every_schema_before_this_one_has_a_golden_repository():
    # Schema 1 is golden-format-1's and schema 3 golden-schema-3's, each with a test of its own
    # (test_golden_repository.py); a new schema adds its predecessor's golden here.
    assert (DATA / "golden-format-1").is_dir()
    written = sorted(int(p.name.rsplit("-", 1)[1]) for p in DATA.glob("golden-schema-*"))
    assert written == sorted(SCHEMAS + [3]), written
    assert max(written) == int(METADATA_SCHEMA) - 1  # every schema before this build's is here


def definition(repository, name):
    return metadata_scalar(repository, f"SELECT sql FROM sqlite_master WHERE name = '{name}'")


@pytest.mark.parametrize("schema", SCHEMAS)
def test_golden_schema_migrates_and_reads_its_whole_history(schema, tmp_path):
    repository = tmp_path / "golden"
    shutil.copytree(DATA / f"golden-schema-{schema}", repository)
    assert stored_schema(repository) == str(schema)
    con = connect(repository)
    con.execute("ATTACH 'differential:golden' AS golden")
    assert stored_schema(repository) == METADATA_SCHEMA
    assert definition(repository, "extents_by_segment").endswith("WHERE segment_id != 0")  # inline left out (12)
    # Extents clustered on their key (schema 14), their usage triggers skipping inline rows, which name no segment.
    assert definition(repository, "file_extents").endswith("WITHOUT ROWID")
    assert "WHEN NEW.segment_id != 0" in definition(repository, "extents_usage_added")
    assert "WHEN OLD.segment_id != 0" in definition(repository, "extents_usage_removed")
    # A ranged file's row holds no length (schema 13): the WAL tail below is read from its extents alone.
    assert metadata_scalar(repository, "SELECT count(*) FROM branch_files WHERE root_id IS NULL AND length != 0") == 0
    assert con.execute("SELECT count(*), sum(qty) FROM golden.items").fetchone() == (1002, MERGED_QTY)
    assert scalar(con, "SELECT count(*) FROM golden.items WHERE name = 'wal tail'") == 2  # the WAL replayed
    assert scalar(con, "SELECT total FROM golden.stock") == MERGED_QTY
    assert con.execute("SELECT count(*), sum(qty) FROM golden.items AT (VERSION => 1)").fetchone() == (
        1000, sum(i % 7 for i in range(1, 1001)))
    assert con.execute("SELECT snapshot_id, snapshot_name, author FROM golden.snapshots()").fetchall() == [
        (1, "base", "golden"), (2, "side-work", None), (3, "main-work", "golden"), (4, None, None), (5, "view", None)]
    con.execute("ATTACH 'differential:golden' AS side (BRANCH 'side', READ_ONLY)")
    assert con.execute("SELECT count(*), max(id) FROM side.items").fetchone() == (1010, 1010)
    con.execute("DETACH side")
    request = "SELECT state, merge_action, base_snapshot_id, ours_snapshot_id, theirs_snapshot_id, result_snapshot_id " \
              "FROM differential_merge_requests('golden', request_id => 'golden-merge')"
    assert con.execute(request).fetchall() == [("complete", "merged", 1, 3, 2, 4)]
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    # This build extends it: a write and a snapshot, the merge request replayed, a cleanup, still clean.
    con.execute("INSERT INTO golden.items VALUES (-3, 'schema 12', 5)")
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('golden')") == 6
    con.execute("DETACH golden")
    replay = "SELECT merge_action, snapshot_id FROM differential_merge_branch('golden', 'main', 'side', 'main', " \
             "request_id => 'golden-merge')"
    assert con.execute(replay).fetchone() == ("merged", 4)  # the recorded result, not a second merge
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    con.execute("ATTACH 'differential:golden' AS golden (READ_ONLY)")
    assert con.execute("SELECT count(*), sum(qty) FROM golden.items").fetchone() == (1003, MERGED_QTY + 5)
    assert scalar(con, "SELECT count(*) FROM golden.items AT (VERSION => 2)") == 1010
    con.close()
