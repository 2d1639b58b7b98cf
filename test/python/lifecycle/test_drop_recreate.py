"""Dropping a database drops all of it: a new database of the same name starts fresh, whatever the old one used
(exports, WAL shipping, shared writers, merge requests, expiry), and database ids are never given out again."""
import sqlite3

from differential_testing import METADATA_SCHEMA, run_python, scalar


def _rows_naming(repository, database_id, database_uuid, database_name):
    """Every row of the metadata that still names the database by id, uuid or name."""
    db = sqlite3.connect(repository / "metadata.sqlite")
    found = {}
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        columns = [c[1] for c in db.execute(f'PRAGMA table_info("{table}")')]
        for column, value in (("database_id", database_id), ("database_uuid", database_uuid),
                              ("database_name", database_name)):
            if column in columns:
                n = db.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}" = ?', [value]).fetchone()[0]
                if n:
                    found[(table, column)] = n
    meta = db.execute("SELECT key FROM repository_meta WHERE key LIKE ?", [f"%{database_name}%"]).fetchall()
    db.close()
    if meta:
        found[("repository_meta", "key")] = len(meta)
    return found


def _identity(repository, name):
    db = sqlite3.connect(repository / "metadata.sqlite")
    row = db.execute("SELECT database_id, database_uuid FROM databases WHERE database_name = ?", [name]).fetchone()
    db.close()
    return row


def test_dropped_shared_writer_database_leaves_nothing_to_its_namesake(con, repository, s3):
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:team' AS team (DATA_PATH '{s3.url}', WRITERS 'shared', ON_CONFLICT 'branch', "
                "SHIP_WAL 'async')")
    con.execute("CREATE TABLE team.tasks(id BIGINT PRIMARY KEY, status VARCHAR)")
    con.execute("INSERT INTO team.tasks SELECT range, 'open' FROM range(10)")
    con.execute("CALL differential_create_snapshot('team', name => 'one')")
    con.execute("UPDATE team.tasks SET status = 'done' WHERE id = 1")
    con.execute("CALL differential_create_snapshot('team', name => 'two')")
    con.execute("CALL differential_create_branch('team', 'side')")
    con.execute("ATTACH 'differential:team' AS side (BRANCH 'side')")
    con.execute("UPDATE side.tasks SET status = 'side' WHERE id = 2")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("DETACH side")
    con.execute("DETACH team")
    con.execute("SELECT * FROM differential_merge_branch('team', 'main', 'side', 'main', request_id => 'm1')")
    con.execute("SELECT * FROM differential_expire_snapshots('team', versions => [1])")
    old_id, old_uuid = _identity(repository, "team")
    assert _rows_naming(repository, old_id, old_uuid, "team")  # the old database had state everywhere

    con.execute("SELECT * FROM differential_drop_database('team')")
    assert _rows_naming(repository, old_id, old_uuid, "team") == {}

    # A plain local database of the same name, attached later with a DATA_PATH: single writer, no shipping,
    # no merge requests, its own id.
    other = s3.url.replace("/lake/", "/elsewhere/")
    con.execute("ATTACH 'differential:team' AS team")
    con.execute("CREATE TABLE team.notes(n INTEGER)")
    con.execute("CALL differential_create_snapshot('team')")
    con.execute("DETACH team")
    con.execute(f"ATTACH 'differential:team' AS team (DATA_PATH '{other}')")
    con.execute("INSERT INTO team.notes VALUES (1)")
    row = con.execute("SELECT snapshot_id, branch_name FROM differential_create_snapshot('team')").fetchone()
    assert row == (2, "main")
    assert scalar(con, "SELECT count(*) FROM differential_shipping() WHERE database_name = 'team'") == 0
    assert scalar(con, "SELECT count(*) FROM differential_merge_requests('team')") == 0
    new_id, new_uuid = _identity(repository, "team")
    assert new_id != old_id and new_uuid != old_uuid
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def test_database_ids_are_never_reused(con, repository):
    ids = []
    for _ in range(3):
        con.execute("ATTACH 'differential:scratch' AS scratch")
        con.execute("DETACH scratch")
        ids.append(_identity(repository, "scratch")[0])
        con.execute("SELECT * FROM differential_drop_database('scratch')")
    assert len(set(ids)) == 3 and ids == sorted(ids), ids


def test_schema_11_moves_shared_writer_state_to_tables_and_retires_old_ids(con, repository):
    # A repository as schema 10 left it: shared-writer state under repository_meta keys composed of the name,
    # and a row (a merge publication) naming id 41, given out and dropped by an older build.
    con.execute("ATTACH 'differential:team' AS team")
    con.execute("DETACH team")
    con.close()
    team_id = _identity(repository, "team")[0]
    db = sqlite3.connect(repository / "metadata.sqlite")
    db.executescript("""
        DROP TABLE shared_writers; DROP TABLE shared_branches; DROP TABLE kept_snapshots; DROP TABLE store_snapshot_ids;
        UPDATE repository_meta SET value = '10' WHERE key = 'schema_version';
        INSERT INTO repository_meta VALUES ('shared_writers/team', 'shared branch'), ('conflict/team/main', '7'),
            ('settled/team/main', '6'), ('kept/team/7', 'main'), ('store_id/team/9', '12'),
            ('shared_writers/gone', 'shared fail'), ('kept/gone/3', 'main');
        INSERT INTO merge_publications(database_id, request_id, snapshot_id, created_at_us, prepared_branch,
            store_url, create_destination) VALUES (41, 'r', 1, 0, 'p', 's3://b/p/', 0);
    """)
    db.commit()
    db.close()
    out = run_python(
        "from differential_testing import connect\n"
        f"con = connect('{repository}')\n"
        "con.execute(\"ATTACH 'differential:fresh' AS fresh\")\n")
    assert out == ""
    db = sqlite3.connect(repository / "metadata.sqlite")
    assert db.execute("SELECT value FROM repository_meta WHERE key = 'schema_version'").fetchone() == (METADATA_SCHEMA,)
    assert db.execute("SELECT * FROM shared_writers").fetchall() == [(team_id, 1)]
    assert db.execute("SELECT * FROM shared_branches").fetchall() == [(team_id, "main", 7, 6)]
    assert db.execute("SELECT * FROM kept_snapshots").fetchall() == [(team_id, 7, "main")]
    assert db.execute("SELECT * FROM store_snapshot_ids").fetchall() == [(team_id, 9, 12)]
    assert db.execute("SELECT count(*) FROM repository_meta WHERE key LIKE '%/%'").fetchone() == (0,)
    assert db.execute("SELECT database_id FROM databases WHERE database_name = 'fresh'").fetchone() == (42,)
    db.close()
