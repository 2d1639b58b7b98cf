"""Every refusal names its [differential:<code>], says what to do, and changes nothing."""
import duckdb
import pytest

from differential_testing import connect, refused, repository_state, run_python, scalar


@pytest.fixture
def inv(con):
    con.execute("ATTACH 'differential:inv' AS inv")
    con.execute("CREATE TABLE inv.items AS SELECT range AS id FROM range(10)")
    con.execute("CALL differential_create_snapshot('inv', name => 'first')")
    return con


def test_repository_must_be_set_and_absolute(tmp_path):
    con = connect()
    message = refused(con, "ATTACH 'differential:x' AS x", "repository_not_set")
    assert "SET differential_repository" in message
    refused(con, "SELECT * FROM differential_databases()", "repository_not_set")
    refused(con, "SET differential_repository = 'relative/path'", "invalid_repository")
    refused(con, "SET differential_repository = ''", "invalid_repository")
    assert not (tmp_path / "relative").exists()
    con.execute(f"SET differential_repository = '{tmp_path}/r//'")
    assert scalar(con, "SELECT current_setting('differential_repository')") == f"{tmp_path}/r"


@pytest.mark.parametrize(
    "name, why",
    [
        ("../escape", "starts with '.'"),
        ("a/b", "path separator"),
        ("a\\\\b", "path separator"),
        ("x" * 129, "longer than 128"),
        ("-dash", "starts with '-'"),
        ("sp ace", "character ' '"),
    ],
)
def test_hostile_database_names(con, name, why):
    before = repository_state(con)
    message = refused(con, f"ATTACH 'differential:{name}' AS x", "invalid_name")
    assert why in message
    assert repository_state(con) == before


def test_control_characters_in_names(inv):
    before = repository_state(inv)
    message = refused_param(inv, "CALL differential_create_branch('inv', ?, snapshot => 1)", ["a\x01b"])
    assert "control character" in message and "\\x01" in message
    assert repository_state(inv) == before


def refused_param(con, sql, params):
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql, params)
    message = str(info.value)
    assert "[differential:invalid_name] " in message, message
    return message


def test_attach_options(inv):
    before = repository_state(inv)
    refused(inv, "ATTACH 'differential:inv' AS x (FOO 1)", "unknown_option")
    refused(inv, "ATTACH 'differential:inv' AS x (SHIP_WAL 'async')", "data_path_required")
    # FOLLOW follows an exported head; on a local database it is a misuse, not a missing feature.
    refused(inv, "ATTACH 'differential:inv' AS x (FOLLOW true)", "invalid_option")
    refused(inv, "ATTACH 'differential:inv' AS x (WRITERS 'shared')", "data_path_required")
    refused(inv, "ATTACH 'differential:inv' AS x (WRITERS 'many')", "invalid_option")
    # A DATA_PATH is recorded only once the attachment opened: here the branch is in use, so nothing is.
    refused(inv, "ATTACH 'differential:inv' AS x (DATA_PATH 's3://bucket/lake/')", "branch_in_use")
    refused(inv, "SELECT * FROM differential_export_snapshot('inv')", "no_data_path")
    refused(inv, "ATTACH 'differential:inv' AS x (BRANCH 1)", "invalid_option")
    refused(inv, "ATTACH 'differential:inv' AS x (SNAPSHOT 0)", "invalid_option")
    refused(inv, "ATTACH 'differential:inv' AS x (SNAPSHOT 1, BRANCH 'main')", "invalid_option")
    refused(inv, "ATTACH 'differential:inv' AS x (SNAPSHOT 7)", "snapshot_not_found")
    refused(inv, "ATTACH 'differential:ghost' AS x (READ_ONLY)", "database_not_found")
    refused(inv, "ATTACH 'differential:ghost' AS x (BRANCH 'dev')", "database_not_found")
    assert repository_state(inv) == before
    names = [r[0] for r in inv.execute("SELECT database_name FROM duckdb_databases()").fetchall()]
    assert "x" not in names


def test_snapshot_refusals(inv):
    inv.execute("ATTACH ':memory:' AS mem")
    before = repository_state(inv)
    refused(inv, "CALL differential_create_snapshot('nothere')", "database_not_attached")
    refused(inv, "CALL differential_create_snapshot('mem')", "not_a_differential_database")
    refused(inv, "CALL differential_create_snapshot('inv', name => 'first')", "snapshot_name_exists")
    refused(inv, "CALL differential_create_snapshot('inv', name => 'bad/name')", "invalid_name")
    inv.execute("BEGIN")
    inv.execute("INSERT INTO inv.items VALUES (100)")
    refused(inv, "CALL differential_create_snapshot('inv')", "autocommit_required")
    inv.execute("ROLLBACK")
    inv.execute("ATTACH 'differential:inv' AS ro (SNAPSHOT 1)")
    refused(inv, "CALL differential_create_snapshot('ro')", "read_only")
    assert repository_state(inv) == before
    assert scalar(inv, "SELECT count(*) FROM inv.items") == 10


def test_one_writer_per_branch(inv, repository):
    refused(inv, "ATTACH 'differential:inv' AS again", "branch_in_use")
    # A second DuckDB instance in the same process shares the process-wide registry of writers.
    second = connect(repository)
    message = refused(second, "ATTACH 'differential:inv' AS inv", "branch_in_use")
    assert "READ_ONLY" in message
    # Read-only attachments are fine and see the committed state.
    second.execute("ATTACH 'differential:inv' AS inv (READ_ONLY)")
    assert scalar(second, "SELECT count(*) FROM inv.items") == 10
    # Another process gets the same refusal, naming the holder.
    out = run_python(
        "from differential_testing import connect\n"
        f"con = connect('{repository}')\n"
        "try:\n"
        "    con.execute(\"ATTACH 'differential:inv' AS inv\")\n"
        "    print('attached')\n"
        "except Exception as e:\n"
        "    print(e)\n"
    )
    assert "[differential:branch_locked]" in out and "process" in out
    # Once detached, the branch can be written elsewhere.
    inv.execute("DETACH inv")
    out = run_python(
        "from differential_testing import connect\n"
        f"con = connect('{repository}')\n"
        "con.execute(\"ATTACH 'differential:inv' AS inv\")\n"
        "con.execute('INSERT INTO inv.items VALUES (10)')\n"
        "print(con.execute('SELECT count(*) FROM inv.items').fetchone()[0])\n"
    )
    assert out.strip() == "11"


def test_side_effects_happen_only_at_execution(inv):
    before = repository_state(inv)
    inv.execute("EXPLAIN SELECT * FROM differential_create_branch('inv', 'explained', snapshot => 1)")
    inv.execute("PREPARE make_branch AS SELECT * FROM differential_create_branch('inv', 'prepared', snapshot => 1)")
    inv.execute("PREPARE take AS SELECT * FROM differential_create_snapshot('inv', name => 'prepared')")
    inv.execute("EXPLAIN SELECT * FROM differential_create_snapshot('inv', name => 'explained')")
    assert repository_state(inv) == before
    inv.execute("EXECUTE make_branch")
    assert scalar(inv, "SELECT count(*) FROM differential_branches('inv') WHERE branch_name = 'prepared'") == 1
    inv.execute("EXECUTE take")
    assert scalar(inv, "SELECT count(*) FROM differential_snapshots('inv') WHERE snapshot_name = 'prepared'") == 1
