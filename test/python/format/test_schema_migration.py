"""Metadata schema 2 (the last released one before merge operations) migrates in place, through 3 to 4: every
existing merge request gets its own operation id, and the requests still replay."""
import re
import sqlite3
import textwrap

from differential_testing import METADATA_SCHEMA, connect, run_python

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def downgrade_to_schema_2(repository):
    """Undoes migrations 10 to 3 on a closed repository, leaving what schema 2 had."""
    db = sqlite3.connect(repository / "metadata.sqlite")
    # Schema 2 has no inline WAL bytes: the writer's process closed, so its WAL was checkpointed away.
    assert db.execute("SELECT count(*) FROM file_extents WHERE inline_data IS NOT NULL").fetchone() == (0,)
    db.executescript("""
        DROP TABLE shared_writers;
        DROP TABLE shared_branches;
        DROP TABLE kept_snapshots;
        DROP TABLE store_snapshot_ids;
        DROP TRIGGER chunks_usage_added;
        DROP TRIGGER chunks_usage_removed;
        DROP TRIGGER chunks_usage_moved;
        DROP TRIGGER extents_usage_added;
        DROP TRIGGER extents_usage_removed;
        DROP TRIGGER extents_usage_moved;
        ALTER TABLE segments DROP COLUMN live_bytes;
        ALTER TABLE segments DROP COLUMN live_records;
        DELETE FROM repository_meta WHERE key = 'reader_pins';
        DROP TABLE merge_publications;
        DROP TRIGGER branch_files_root_moved;
        DROP TRIGGER branch_files_root_deleted;
        DROP TRIGGER snapshots_root_moved;
        DROP TRIGGER snapshots_root_deleted;
        DROP TRIGGER pins_root_moved;
        DROP TRIGGER pins_root_deleted;
        DROP TABLE root_candidates;
        DROP INDEX roots_uncounted;
        DROP INDEX index_pages_uncounted;
        DROP INDEX index_pages_unreferenced;
        DROP INDEX chunks_unreferenced;
        DROP INDEX snapshots_by_root;
        DROP INDEX branch_files_by_root;
        DROP INDEX pins_by_root;
        DROP INDEX snapshots_by_time;
        DROP INDEX snapshots_by_branch;
        DROP INDEX chunks_by_segment;
        CREATE INDEX chunks_by_segment ON chunks(segment_id);
        ALTER TABLE roots DROP COLUMN counted;
        ALTER TABLE index_pages DROP COLUMN refs;
        ALTER TABLE index_pages DROP COLUMN counted;
        ALTER TABLE chunks DROP COLUMN refs;
        DROP TABLE wal_shipping;
        DROP TABLE wal_ship_state;
        ALTER TABLE file_extents DROP COLUMN inline_data;
        DROP TABLE remote_chunks;
        DROP TABLE remote_objects;
        DROP TABLE snapshot_exports;
        DROP TABLE remote_heads;
        DROP TABLE remote_stores;
        ALTER TABLE databases DROP COLUMN data_path;
        ALTER TABLE databases DROP COLUMN export_from_snapshot;
        DROP INDEX merge_requests_by_operation;
        DROP TABLE merge_resolutions;
        ALTER TABLE merge_requests DROP COLUMN operation_id;
        ALTER TABLE merge_requests DROP COLUMN time_zone;
        ALTER TABLE merge_requests DROP COLUMN calendar;
        ALTER TABLE merge_requests DROP COLUMN aborted_by;
        ALTER TABLE snapshots DROP COLUMN commit_extra_info;
        UPDATE repository_meta SET value = '2' WHERE key = 'schema_version';
    """)
    db.commit()
    db.close()


def test_schema_2_repository_with_merge_requests_migrates(repository):
    # Written by another process: this one's repository registry must open it fresh after the downgrade.
    run_python(textwrap.dedent(f"""
        from differential_testing import connect, run_python
        con = connect({str(repository)!r})
        con.execute("ATTACH 'differential:shop' AS shop")
        con.execute("CREATE TABLE shop.items (id INTEGER PRIMARY KEY, v INTEGER)")
        con.execute("INSERT INTO shop.items VALUES (1, 1), (2, 2)")
        con.execute("CALL differential_create_snapshot('shop')")
        con.execute("CALL differential_create_branch('shop', 'side', snapshot => 1)")
        con.execute("ATTACH 'differential:shop' AS side (BRANCH 'side')")
        con.execute("UPDATE side.items SET v = 20 WHERE id = 2")
        con.execute("CALL differential_create_snapshot('side')")
        con.execute("UPDATE shop.items SET v = 10 WHERE id = 1")
        con.execute("CALL differential_create_snapshot('shop')")
        con.execute("DETACH shop")
        con.execute("DETACH side")
        for request in ("first", "second", "third"):
            con.execute(f"SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'copy_{{request}}', "
                        f"request_id => '{{request}}')")
    """))
    downgrade_to_schema_2(repository)

    con = connect(repository)
    ids = [row[0] for row in con.execute("SELECT operation_id FROM differential_merge_requests('shop')").fetchall()]
    assert len(ids) == 3 and len(set(ids)) == 3 and all(UUID.match(i) for i in ids), ids
    # A migrated request replays its original result.
    assert con.execute("SELECT branch_name, snapshot_id FROM differential_merge_branch('shop', 'main', 'side', "
                       "'copy_second', request_id => 'second')").fetchone() == ("copy_second", 5)
    db = sqlite3.connect(repository / "metadata.sqlite")
    assert db.execute("SELECT value FROM repository_meta WHERE key = 'schema_version'").fetchone() == (METADATA_SCHEMA,)
    # Schema 8's counts start uncounted: the first cleanup counts the whole migrated history, and the full mark
    # of differential_verify agrees with what it leaves.
    assert db.execute("SELECT count(*) FROM roots WHERE counted = 0").fetchone()[0] > 0
    db.close()
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    assert con.execute("SELECT check_name, problems FROM differential_verify() WHERE problems > 0").fetchall() == []
    con.execute("ATTACH 'differential:shop' AS shop (READ_ONLY)")
    assert con.execute("SELECT count(*) FROM shop.items AT (VERSION => 1)").fetchone() == (2,)
