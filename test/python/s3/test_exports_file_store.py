"""Exports to a file:/// DATA_PATH: the data path's life cycle, dedup, clones, retries, bad input."""
import pathlib

import duckdb
import pytest

from differential_testing import connect, refused, repository_state, scalar
from export_objects import check_head, count


@pytest.fixture
def bucket(tmp_path):
    path = tmp_path / "bucket"
    path.mkdir()
    return path


def url_of(path):
    return f"file://{path}/"


def test_every_snapshot_is_exported_and_the_head_follows(con, bucket):
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url_of(bucket)}')")
    con.execute("CREATE TABLE orders.o AS SELECT range AS id, range * 2 AS v FROM range(100000)")
    con.execute("CALL differential_create_snapshot('orders', name => 'first')")
    assert check_head(bucket, "orders") == 1
    con.execute("UPDATE orders.o SET v = 0 WHERE id < 10")
    con.execute("CALL differential_create_snapshot('orders')")
    assert check_head(bucket, "orders") == 2
    assert count(bucket, "commits") == 2 and count(bucket, "descriptors") == 2
    # The head names the previous descriptor, so a reader can walk the branch back.
    lines = (bucket / "heads" / "orders" / "main").read_text().splitlines()
    first = (bucket / "commits" / "orders" / f"{1:020d}").read_text().splitlines()
    assert [l for l in lines if l.startswith("previous ")][0][9:] == [l for l in first if l.startswith("descriptor ")][0][11:]


def test_data_path_is_kept_repeated_or_refused(repository, bucket, tmp_path):
    con = connect(repository)
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url_of(bucket)}')")
    con.execute("CREATE TABLE orders.o AS SELECT 1 AS x")
    con.execute("DETACH orders")
    # Omitted: still an S3 database.
    con.execute("ATTACH 'differential:orders' AS orders")
    con.execute("CALL differential_create_snapshot('orders')")
    assert check_head(bucket, "orders") == 1
    con.execute("DETACH orders")
    # Repeated, in another spelling of the same place: accepted.
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH 'file://{bucket}')")
    con.execute("DETACH orders")
    before = repository_state(con)
    other = tmp_path / "other"
    message = refused(con, f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url_of(other)}')",
                      "data_path_mismatch")
    assert str(bucket) in message and "nothing was changed" in message
    assert repository_state(con) == before
    assert not other.exists()
    con.execute("ATTACH 'differential:orders' AS orders")
    con.execute("INSERT INTO orders.o VALUES (2)")
    con.execute("CALL differential_create_snapshot('orders')")
    assert check_head(bucket, "orders") == 2


def test_a_local_database_adopts_a_data_path_from_its_next_snapshot(con, bucket):
    con.execute("ATTACH 'differential:notes' AS notes")
    con.execute("CREATE TABLE notes.n AS SELECT 1 AS x")
    con.execute("CALL differential_create_snapshot('notes')")
    con.execute("DETACH notes")
    con.execute(f"ATTACH 'differential:notes' AS notes (DATA_PATH '{url_of(bucket)}')")
    assert count(bucket, "commits") == 0
    con.execute("CALL differential_create_snapshot('notes')")
    assert check_head(bucket, "notes") == 2
    assert count(bucket, "commits") == 1  # snapshot 1 stays local: it predates the data path


def test_unchanged_database_uploads_no_data_and_a_clone_only_its_new_chunks(con, bucket):
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url_of(bucket)}')")
    con.execute("CREATE TABLE orders.o AS SELECT range AS id, md5(range::VARCHAR) AS v FROM range(1000000)")
    con.execute("CALL differential_create_snapshot('orders')")
    packs, pages = count(bucket, "packs"), count(bucket, "indexes")
    assert packs >= 3
    # Exporting again: nothing is due, nothing is sent.
    assert con.execute("SELECT * FROM differential_export_snapshot('orders')").fetchall() == []
    # A snapshot of an unchanged database: no pack and no index page, only its descriptor and records.
    con.execute("CALL differential_create_snapshot('orders')")
    assert (count(bucket, "packs"), count(bucket, "indexes")) == (packs, pages)
    assert count(bucket, "descriptors") == 2
    # A clone exports to its source's data path and uploads only the chunks its change wrote.
    con.execute("CALL differential_clone_database('orders', 'copy')")
    con.execute("ATTACH 'differential:copy' AS copy")
    con.execute("UPDATE copy.o SET v = 'changed' WHERE id = 7")
    con.execute("CALL differential_create_snapshot('copy')")
    assert check_head(bucket, "copy") == 1
    new_packs = count(bucket, "packs") - packs
    assert 1 <= new_packs < packs


def test_export_function_reports_what_it_uploaded(con, bucket):
    con.execute("ATTACH 'differential:notes' AS notes")
    con.execute("CREATE TABLE notes.n AS SELECT range AS x FROM range(1000)")
    con.execute("CALL differential_create_snapshot('notes')")
    refused(con, "SELECT * FROM differential_export_snapshot('notes')", "no_data_path")
    refused(con, "SELECT * FROM differential_export_snapshot('nope')", "database_not_found")
    con.execute("DETACH notes")
    con.execute(f"ATTACH 'differential:notes' AS notes (DATA_PATH '{url_of(bucket)}')")
    con.execute("INSERT INTO notes.n VALUES (-1)")
    con.execute("CHECKPOINT notes")
    refused(con, "SELECT * FROM differential_export_snapshot('notes', snapshot => 9)", "snapshot_not_found")


@pytest.mark.parametrize("value, code", [
    ("'http://bucket/x/'", "invalid_data_path"),
    ("'s3://Not_A_Bucket/x/'", "invalid_data_path"),
    ("'s3://'", "invalid_data_path"),
    ("'file://relative/dir/'", "invalid_data_path"),
    ("'file:///a/../b/'", "invalid_data_path"),
    ("42", "invalid_option"),
    ("true", "invalid_option"),
])
def test_bad_data_paths_are_refused_before_anything_is_created(con, value, code):
    refused(con, f"ATTACH 'differential:orders' AS orders (DATA_PATH {value})", code)
    assert repository_state(con) == []


def test_read_only_attach_cannot_give_a_data_path(con, bucket):
    con.execute("ATTACH 'differential:notes' AS notes")
    con.execute("DETACH notes")
    refused(con, f"ATTACH 'differential:notes' AS notes (READ_ONLY, DATA_PATH '{url_of(bucket)}')", "read_only")
    with pytest.raises(duckdb.Error):
        con.execute("SELECT * FROM differential_export_snapshot('notes')")


def test_replication_options_refused_without_what_they_need(con, bucket):
    # SHIP_WAL and shared writers need a DATA_PATH; ON_CONFLICT needs shared writers.
    refused(con, "ATTACH 'differential:orders' AS orders (SHIP_WAL 'async')", "data_path_required")
    refused(con, "ATTACH 'differential:orders' AS orders (WRITERS 'shared')", "data_path_required")
    refused(con, f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url_of(bucket)}', ON_CONFLICT 'branch')",
            "invalid_option")
    assert repository_state(con) == []


def test_failed_export_keeps_the_snapshot_and_the_retry_completes(con, bucket):
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url_of(bucket)}')")
    con.execute("CREATE TABLE orders.o AS SELECT range AS id FROM range(1000)")
    con.execute("CALL differential_create_snapshot('orders')")
    # The store cannot take descriptors any more (a file where their directory was; root ignores
    # permissions): the next export fails after its packs, and the snapshot is kept.
    (bucket / "descriptors").rename(bucket / "descriptors.away")
    (bucket / "descriptors").write_text("in the way")
    try:
        con.execute("INSERT INTO orders.o VALUES (-1)")
        message = refused(con, "CALL differential_create_snapshot('orders')", "export_failed")
        assert "Snapshot 2 of database orders is committed locally" in message
        assert "differential_export_snapshot('orders')" in message
    finally:
        (bucket / "descriptors").unlink()
        (bucket / "descriptors.away").rename(bucket / "descriptors")
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('orders')") == 2
    assert check_head(bucket, "orders") == 1
    rows = con.execute("SELECT snapshot_id, head_moved FROM differential_export_snapshot('orders')").fetchall()
    assert rows == [(2, True)]
    assert check_head(bucket, "orders") == 2


def test_restore_and_merge_snapshots_are_exported(con, bucket):
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url_of(bucket)}')")
    con.execute("CREATE TABLE orders.o (id INTEGER PRIMARY KEY, v INTEGER)")
    con.execute("INSERT INTO orders.o VALUES (1, 1)")
    con.execute("CALL differential_create_snapshot('orders')")
    con.execute("UPDATE orders.o SET v = 2")
    con.execute("CALL differential_create_snapshot('orders')")
    con.execute("DETACH orders")
    restored = scalar(con, "SELECT snapshot_id FROM differential_restore('orders', 1)")
    assert check_head(bucket, "orders") == restored
    # A branch's snapshots get their own head; a merge's snapshot moves the target's.
    con.execute(f"CALL differential_create_branch('orders', 'side', snapshot => {restored})")
    con.execute("ATTACH 'differential:orders' AS side (BRANCH 'side')")
    con.execute("INSERT INTO side.o VALUES (2, 2)")
    side = scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('side')")
    assert check_head(bucket, "orders", "side") == side
    con.execute("DETACH side")
    # A DATA_PATH database's merge is a durable request (docs/DURABILITY.md §13.9).
    merged = scalar(con, "SELECT snapshot_id FROM differential_merge_branch('orders', 'main', 'side', 'main', "
                         "request_id => 'side-into-main')")
    assert check_head(bucket, "orders") == merged
    assert count(bucket, "commits") == len(con.execute("SELECT * FROM differential_snapshots('orders')").fetchall())
