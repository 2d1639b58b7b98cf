"""Review findings for the 1.1 merges: each test fails on the reviewed code and states what a fixed
merge must do. The databases are built with three_way.diverge: snapshot 1 is the base on main,
branch 'b' (theirs) is snapshot 2, main (ours) is snapshot 3, and both end detached."""
import re

import duckdb
import pytest

from differential_testing import refused, repository_state, scalar
from three_way import diverge, merge_sql, preflight_sql, preview_sql


def differential_error(con, sql):
    """Runs sql, which must fail with one of our own codes (never a raw DuckDB error); returns the code."""
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql)
    message = str(info.value)
    match = re.match(r"^[A-Za-z ]*Error: \[differential:([a-z_]+)\] ", message)
    assert match, f"not a differential refusal: {message}"
    return match.group(1)


def rows(con, sql):
    return con.execute(sql).fetchall()


# --- SQL built from user identifiers that collide with the merge's own aliases -------------------


def test_table_named_d_with_a_column_named_action_merges(con):
    """ApplyStatements (table_merge.cpp:189-193) aliases the decision table as `d` in
    `DELETE ... USING <decisions> d` and `UPDATE ... FROM <decisions> d`. For a user table named "d"
    with a column named like a decision column (action, k_0, m_0), `d.action` is ambiguous and the
    merge dies with a raw Binder Error. Both sides changed different rows without conflict, so the
    merge must succeed and combine them."""
    diverge(con, ["CREATE TABLE d (id INTEGER PRIMARY KEY, action VARCHAR)", "INSERT INTO d VALUES (1, 'a'), (2, 'b'), (3, 'c')"],
            ["UPDATE d SET action = 'x' WHERE id = 1"],
            ["UPDATE d SET action = 'y' WHERE id = 2", "DELETE FROM d WHERE id = 3"])
    assert rows(con, merge_sql()) == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS s")
    assert rows(con, "FROM s.d ORDER BY id") == [(1, "x"), (2, "y")]


def test_a_column_named_like_the_presence_flag_does_not_hide_a_deletion(con):
    """SideRelation (table_merge.cpp:55-70) appends `true AS __differential_present` to a SELECT of
    all user columns; a user column of that name shadows the flag, so in_b/in_o/in_t read the user's
    value. Here theirs deleted row 1 and ours inserted row 3: today the merge reports `merged` but
    silently keeps row 1 (theirs' deletion is lost). A fixed merge either refuses the name with its
    own error code or deletes row 1."""
    diverge(con, ["CREATE TABLE p (id INTEGER PRIMARY KEY, __differential_present BOOLEAN)",
                  "INSERT INTO p VALUES (1, NULL), (2, NULL)"],
            ["INSERT INTO p VALUES (3, NULL)"], ["DELETE FROM p WHERE id = 1"])
    try:
        con.execute(merge_sql()).fetchall()
    except duckdb.Error as error:
        assert re.match(r"^[A-Za-z ]*Error: \[differential:", str(error)), str(error)
        return
    con.execute("ATTACH 'differential:shop' AS s")
    assert [r[0] for r in rows(con, "SELECT id FROM s.p ORDER BY id")] == [2, 3]


def cell_conflict_on(con, table, value_column):
    diverge(con, [f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, {value_column} VARCHAR)",
                  f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"],
            [f"UPDATE {table} SET {value_column} = 'x' WHERE id = 1"],
            [f"UPDATE {table} SET {value_column} = 'y' WHERE id = 1"])


def test_resolution_table_with_a_column_named_r_does_not_crash(con):
    """ReadResolutionTables (resolutions.cpp:130-131) reads `SELECT r FROM <source> AS r` to get the
    whole row as a STRUCT. A resolution table must have the target's columns, so for a target with a
    column named r, `r` binds to that column (VARCHAR), and CheckColumns calls
    StructType::GetChildTypes on it: an INTERNAL error that invalidates the whole DuckDB instance.
    A valid 'cells' decision must resolve the conflict."""
    cell_conflict_on(con, "t", "r")
    con.execute("CREATE TABLE dec (id INTEGER, r VARCHAR, _merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO dec VALUES (1, NULL, 'cells', map {'r': 'theirs'})")
    assert rows(con, preview_sql("conflicts, resolved_conflicts",
                                 resolution_tables="map {'main.t': 'memory.main.dec'}")) == [(0, 1)]


def test_conflicts_of_a_table_with_a_dot_in_its_name_can_be_resolved(con):
    """TargetTable (resolutions.cpp:36-47) splits the resolution_tables key on every '.', so a table
    named "a.b" (a valid main-schema table with a key, inside the supported scope) can never be
    named: 'main."a.b"' splits into three parts and is refused with invalid_argument. Its conflicts
    can therefore never be resolved. The quoted form must name the table."""
    cell_conflict_on(con, '"a.b"', "v")
    con.execute("CREATE TABLE dec (id INTEGER, v VARCHAR, _merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO dec VALUES (1, 'z', 'cells', map {'v': 'custom'})")
    result = rows(con, merge_sql(resolution_tables="""map {'main."a.b"': 'memory.main.dec'}"""))
    assert result == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS s")
    assert rows(con, 'FROM s."a.b" ORDER BY id') == [(1, "z"), (2, "b")]


# --- Catalog planning: names that DuckDB treats as one object -----------------------------------


def test_a_view_replaced_by_a_table_of_the_same_name_merges(con):
    """Catalog mode: theirs dropped view x and created a table x; ours left x alone. The plan is
    conflict-free (table x: add, view x: drop), but PrepareStage (merge_session.cpp:359-397) creates
    theirs' new tables before ApplyViews (merge_session.cpp:399-408) drops theirs' removed views, so
    CREATE TABLE x fails with a raw Catalog Error ("View with name x already exists") in the merge,
    the validating preview and the preflight. The merge must produce table x with theirs' rows."""
    diverge(con, ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
                  "CREATE VIEW x AS SELECT id, v FROM t"],
            ["INSERT INTO t VALUES (3, 'c')"],
            ["DROP VIEW x", "CREATE TABLE x (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO x SELECT * FROM t"])
    assert rows(con, merge_sql(schema_mode="'catalog'")) == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS s")
    assert rows(con, "SELECT table_name FROM duckdb_tables() WHERE database_name = 's' ORDER BY 1") == [("t",), ("x",)]
    assert rows(con, "FROM s.x ORDER BY id") == [(1, "a"), (2, "b")]


def test_a_table_and_a_view_added_with_one_name_are_a_schema_conflict(con):
    """Ours added view x, theirs added table x. PlanTables and PlanViews (schema_plan.cpp:194-335)
    plan tables and views separately, so the preview reports no schema conflict, and building the
    result fails with a raw Catalog Error (a validating preview and the preflight raise it too,
    the preflight does not list it as an issue). The clash must be reported as a schema conflict:
    the preview lists it and the merge refuses with a differential code, changing nothing."""
    diverge(con, ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a')"],
            ["CREATE VIEW x AS SELECT id FROM t"],
            ["CREATE TABLE x (id INTEGER PRIMARY KEY)", "INSERT INTO x VALUES (1)"])
    conflicts = scalar(con, preview_sql("sum(schema_conflicts)", schema_mode="'catalog'"))
    assert conflicts > 0
    ready = rows(con, preflight_sql("ready", schema_mode="'catalog'"))
    assert ready == [(False,)]
    before = repository_state(con)
    differential_error(con, merge_sql(schema_mode="'catalog'"))
    assert repository_state(con) == before


CASE_CLASHES = {
    # Both sides add a table; DuckDB names are case-insensitive, so these are one table.
    "table_added_on_both_sides": (
        ["CREATE TABLE t (id INTEGER PRIMARY KEY)"],
        ["CREATE TABLE Foo (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO Foo VALUES (1, 'x')"],
        ["CREATE TABLE foo (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO foo VALUES (2, 'y')"],
        "additive"),
    # Both sides add a column to the same table.
    "column_added_on_both_sides": (
        ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"],
        ["ALTER TABLE t ADD COLUMN Note VARCHAR", "UPDATE t SET Note = 'o' WHERE id = 1"],
        ["ALTER TABLE t ADD COLUMN note VARCHAR", "UPDATE t SET note = 't' WHERE id = 2"],
        "additive"),
    # Theirs renames a column by case only (a drop plus an add for the merge); ours left it alone.
    "column_renamed_by_case": (
        ["CREATE TABLE t (id INTEGER PRIMARY KEY, Note VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"],
        ["INSERT INTO t VALUES (3, NULL)"],
        ["ALTER TABLE t RENAME COLUMN Note TO note"],
        "catalog"),
}


@pytest.mark.parametrize("case", sorted(CASE_CLASHES))
def test_names_differing_only_in_case_never_end_in_a_raw_duckdb_error(con, case):
    """The merge catalog (merge_catalog.cpp, schema_plan.cpp) keys tables in a case-sensitive
    std::map and matches columns with ==, while DuckDB identifiers are case-insensitive. Names that
    differ only in case are planned as two objects: the preview itself fails ("Table with name
    __merge_decisions@...@foo already exists", from the decision temp table, merge_session.cpp:252)
    or staging fails with "Column with name note already exists". Such a merge must either merge or
    refuse with a differential code (e.g. merge_schema_conflict), the preview must answer, and a
    refusal must change nothing."""
    base, ours, theirs, mode = CASE_CLASHES[case]
    diverge(con, base, ours, theirs)
    rows(con, preview_sql("object_name, schema_conflicts", schema_mode=f"'{mode}'"))
    rows(con, preflight_sql("ready, issues", schema_mode=f"'{mode}'"))
    before = repository_state(con)
    try:
        con.execute(merge_sql(schema_mode=f"'{mode}'")).fetchall()
    except duckdb.Error as error:
        assert re.match(r"^[A-Za-z ]*Error: \[differential:", str(error)), str(error)
        assert repository_state(con) == before


# --- Requests ---------------------------------------------------------------------------------


def test_merge_inside_an_explicit_transaction_is_refused(con):
    """The specification: "Binding, PREPARE and EXPLAIN of a merge function do nothing at all; the
    work starts when the function is scanned, and merges require autocommit." differential_merge_branch
    does not check it (differential_create_snapshot does, with autocommit_required): inside BEGIN it
    publishes snapshot 4 and moves main, and the ROLLBACK undoes none of it. It must refuse with
    autocommit_required and change nothing. (docs/SQL_REFERENCE.md, edited in the working tree,
    says the merges do not check; that contradicts the specification.)"""
    diverge(con, ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"],
            ["UPDATE t SET v = 'x' WHERE id = 1"], ["UPDATE t SET v = 'y' WHERE id = 2"])
    before = repository_state(con)
    con.execute("BEGIN")
    try:
        refused(con, merge_sql(request_id="'in-transaction'"), "autocommit_required")
    finally:
        con.execute("ROLLBACK")
    assert repository_state(con) == before
