"""The extension honours DuckDB's own security settings as DuckDB's file systems do: with external access off, a
repository, a REPOSITORY option or a file:// DATA_PATH outside allowed_directories is refused before anything is
created, and lock_configuration freezes the repository setting. A refused ATTACH writes nothing, and settings it
stores read back exactly."""
import sqlite3

import duckdb
import pytest

from differential_testing import connect, held_branches, refused, run_python, scalar, tree_fingerprint


def _shop(repository):
    con = connect(repository)
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items AS SELECT range AS id FROM range(10)")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("DETACH shop")
    return con


def test_external_access_off_refuses_another_repository_and_creates_nothing(tmp_path):
    repository, elsewhere = tmp_path / "repository", tmp_path / "elsewhere"
    _shop(repository).close()
    con = connect(repository)
    con.execute("ATTACH 'differential:shop' AS shop (READ_ONLY)")
    con.execute("SET enable_external_access = false")
    before = tree_fingerprint(repository)
    # What an agent tried through the review server's sandbox: a repository of its own, a new database in the
    # served repository, and the served repository's own database under another alias.
    refused(con, f"ATTACH 'differential:agentdb' AS w (REPOSITORY '{elsewhere}')", "external_access_denied")
    refused(con, f"ATTACH 'differential:agentdb' AS w (REPOSITORY '{repository}')", "external_access_denied")
    refused(con, "ATTACH 'differential:shop' AS again (READ_ONLY)", "external_access_denied")
    refused(con, "SELECT * FROM differential_databases()", "external_access_denied")
    assert not elsewhere.exists()
    assert tree_fingerprint(repository) == before
    # What was attached before external access went off still reads, as for DuckDB's own files, and so does its
    # history (time travel attaches its snapshot); another database's snapshot does not.
    assert scalar(con, "SELECT count(*) FROM shop.items") == 10
    assert scalar(con, "SELECT count(*) FROM shop.items AT (VERSION => 1)") == 10
    refused(con, f"ATTACH 'differential:other' AS o (SNAPSHOT 1, REPOSITORY '{repository}')", "external_access_denied")


def test_allowed_directories_bound_repositories_and_data_paths(tmp_path):
    allowed, denied = tmp_path / "allowed", tmp_path / "denied"
    con = connect()
    con.execute(f"SET allowed_directories = ['{allowed}/']")
    con.execute("SET enable_external_access = false")
    message = refused(con, f"SET differential_repository = '{denied}/repository'", "external_access_denied")
    assert str(allowed) in message
    refused(con, f"ATTACH 'differential:shop' AS shop (REPOSITORY '{denied}/repository')", "external_access_denied")
    refused(con, f"ATTACH 'differential:shop' AS shop (REPOSITORY '{allowed}/repository', "
                 f"DATA_PATH 'file://{denied}/store/')", "external_access_denied")
    assert not denied.exists() and not allowed.exists()
    # Inside the allowed directory everything works, a file:// DATA_PATH there included.
    con.execute(f"SET differential_repository = '{allowed}/repository'")
    con.execute(f"ATTACH 'differential:shop' AS shop (DATA_PATH 'file://{allowed}/store/')")
    con.execute("CREATE TABLE shop.t AS SELECT 1 AS x")
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('shop')") == 1
    assert (allowed / "store").is_dir()


def test_lock_configuration_freezes_the_repository_setting(tmp_path):
    con = connect(tmp_path / "repository")
    con.execute("SET lock_configuration = true")
    with pytest.raises(duckdb.Error, match="configuration has been locked"):
        con.execute(f"SET differential_repository = '{tmp_path}/other'")
    assert scalar(con, "SELECT current_setting('differential_repository')") == str(tmp_path / "repository")


def test_attach_refused_by_a_held_branch_stores_nothing_and_later_attaches_work(tmp_path):
    repository, elsewhere = tmp_path / "repository", tmp_path / "elsewhere"
    _shop(repository).close()
    with held_branches(repository, "shop@main"):
        before = tree_fingerprint(repository)
        out = run_python(
            "from differential_testing import connect\n"
            f"con = connect('{repository}')\n"
            "try:\n"
            f"    con.execute(\"ATTACH 'differential:shop' AS w (DATA_PATH 'file://{elsewhere}/b/', SHIP_WAL 'async')\")\n"
            "except Exception as e:\n"
            "    print(e)\n")
        assert "[differential:branch_locked]" in out, out
        assert tree_fingerprint(repository) == before
        assert not elsewhere.exists()
    # Every later ATTACH, in fresh processes, works and sees a local database that does not ship.
    for _ in range(3):
        out = run_python(
            "from differential_testing import connect, scalar\n"
            f"con = connect('{repository}')\n"
            "con.execute(\"ATTACH 'differential:shop' AS shop\")\n"
            "print(scalar(con, 'SELECT count(*) FROM shop.items'),\n"
            "      scalar(con, \"SELECT count(*) FROM differential_shipping()\"))\n")
        assert out.split() == ["10", "0"], out


def test_settings_an_attach_stores_read_back_exactly(tmp_path):
    repository, store = tmp_path / "repository", tmp_path / "store"
    con = connect(repository)
    con.execute(f"ATTACH 'differential:shop' AS shop (DATA_PATH 'file://{store}/', SHIP_WAL 'async', "
                "SHIP_INTERVAL 7)")
    assert con.execute("SELECT mode, interval_s FROM differential_shipping()").fetchall() == [("async", 7)]
    con.execute("DETACH shop")
    db = sqlite3.connect(repository / "metadata.sqlite")
    assert db.execute("SELECT mode, interval_s FROM wal_shipping").fetchall() == [("async", 7)]
    assert db.execute("SELECT data_path FROM databases").fetchall() == [(f"file://{store}/",)]
    db.close()


@pytest.mark.parametrize("damage", [
    "UPDATE wal_shipping SET mode = 'x' || randomblob(8)",
    "UPDATE wal_shipping SET interval_s = -1",
    "UPDATE databases SET data_path = NULL",
])
def test_damaged_stored_settings_are_reported_not_acted_on(tmp_path, damage):
    repository, store = tmp_path / "repository", tmp_path / "store"
    con = connect(repository)
    con.execute(f"ATTACH 'differential:shop' AS shop (DATA_PATH 'file://{store}/', SHIP_WAL 'async')")
    con.execute("DETACH shop")
    con.close()
    db = sqlite3.connect(repository / "metadata.sqlite")
    db.execute(damage)
    db.commit()
    db.close()
    fresh = connect(repository)
    code = "data_path_required" if "data_path" in damage else "corrupt_metadata"
    message = refused(fresh, "ATTACH 'differential:shop' AS shop", code)
    assert "SHIP_WAL" in message
    # The way out the message names works: attach with shipping off, which stores valid settings again.
    fresh.execute("ATTACH 'differential:shop' AS shop (SHIP_WAL 'off')")
    assert scalar(fresh, "SELECT count(*) FROM differential_shipping()") == 0
    fresh.execute("DETACH shop")
    fresh.execute("ATTACH 'differential:shop' AS shop")
