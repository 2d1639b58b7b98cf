"""Catalog planning of names DuckDB treats as one object (a view and a table of one name, names that
differ only in case): each case says whether the merge succeeds, and with what, or which code refuses it."""
import pytest

from differential_testing import refused, repository_state
from three_way import diverge, merge_sql, preflight_sql, preview_sql

# Every database here is built with three_way.diverge: snapshot 1 is the base on main, branch 'b'
# (theirs) is snapshot 2, main (ours) is snapshot 3, and both end detached.


def rows(con, sql):
    return con.execute(sql).fetchall()


def test_a_view_replaced_by_a_table_of_the_same_name_merges(con):
    """Catalog mode: theirs dropped view x and created a table x; ours left x alone. The plan is
    conflict-free (table x: add, view x: drop), so the result must drop the view before it creates
    the table: the merge produces table x with theirs' rows, beside ours' new row in t."""
    diverge(con, ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
                  "CREATE VIEW x AS SELECT id, v FROM t"],
            ["INSERT INTO t VALUES (3, 'c')"],
            ["DROP VIEW x", "CREATE TABLE x (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO x SELECT * FROM t"])
    assert rows(con, preflight_sql("ready, issues", schema_mode="'catalog'")) == [(True, None)]
    assert rows(con, merge_sql(schema_mode="'catalog'")) == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS s")
    assert rows(con, "SELECT table_name FROM duckdb_tables() WHERE database_name = 's' ORDER BY 1") == [("t",), ("x",)]
    assert rows(con, "SELECT view_name FROM duckdb_views() WHERE database_name = 's' AND NOT internal") == []
    assert rows(con, "FROM s.x ORDER BY id") == [(1, "a"), (2, "b")]
    assert rows(con, "FROM s.t ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]


def test_a_table_and_a_view_added_with_one_name_are_a_schema_conflict(con):
    """Ours added view x, theirs added table x. Tables and views share one namespace, so the result
    cannot hold both: the preview lists exactly one schema conflict (on the view), the preflight is
    not ready and names it, and the merge refuses with merge_schema_conflict, changing nothing."""
    diverge(con, ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a')"],
            ["CREATE VIEW x AS SELECT id FROM t"],
            ["CREATE TABLE x (id INTEGER PRIMARY KEY)", "INSERT INTO x VALUES (1)"])
    assert rows(con, preview_sql("object_type, object_name, schema_conflicts", schema_mode="'catalog'")
                + " ORDER BY object_type, object_name") == [("table", "t", 0), ("table", "x", 0), ("view", "x", 1)]
    ready, issues = rows(con, preflight_sql("ready, issues", schema_mode="'catalog'"))[0]
    assert ready is False and issues.startswith("merge_schema_conflict"), issues
    before = repository_state(con)
    message = refused(con, merge_sql(schema_mode="'catalog'"), "merge_schema_conflict")
    assert "table and the other a view" in message, message
    assert repository_state(con) == before


# DuckDB identifiers are case-insensitive, so names differing only in case are one object to the
# merge (MERGES.md §12), never two that collide when the result is built. Each case: base, ours,
# theirs, schema mode, and the outcome: ("merged", SQL reading the result, its rows, the table's
# column names) or ("refused", code).
CASE_CLASHES = {
    # Both sides add one table, spelled Foo and foo: one table, whose definitions (their CREATE
    # statements, which spell the name) differ, so a schema conflict refuses the merge.
    "table_added_on_both_sides": (
        ["CREATE TABLE t (id INTEGER PRIMARY KEY)"],
        ["CREATE TABLE Foo (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO Foo VALUES (1, 'x')"],
        ["CREATE TABLE foo (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO foo VALUES (2, 'y')"],
        "additive",
        ("refused", "merge_schema_conflict")),
    # Both sides add one nullable column, spelled Note and note: one column (named as ours spells
    # it), holding both sides' values.
    "column_added_on_both_sides": (
        ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"],
        ["ALTER TABLE t ADD COLUMN Note VARCHAR", "UPDATE t SET Note = 'o' WHERE id = 1"],
        ["ALTER TABLE t ADD COLUMN note VARCHAR", "UPDATE t SET note = 't' WHERE id = 2"],
        "additive",
        ("merged", "SELECT id, v, note FROM s.t ORDER BY id", [(1, "a", "o"), (2, "b", "t")],
         ["id", "v", "Note"])),
    # Theirs renames a column by case only: the same column, so nothing changed on theirs' side.
    "column_renamed_by_case": (
        ["CREATE TABLE t (id INTEGER PRIMARY KEY, Note VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"],
        ["INSERT INTO t VALUES (3, NULL)"],
        ["ALTER TABLE t RENAME COLUMN Note TO note"],
        "catalog",
        ("merged", "SELECT id, note FROM s.t ORDER BY id", [(1, "a"), (2, "b"), (3, None)], ["id", "Note"])),
}


@pytest.mark.parametrize("case", sorted(CASE_CLASHES))
def test_names_differing_only_in_case_are_one_object(con, case):
    base, ours, theirs, mode, expected = CASE_CLASHES[case]
    diverge(con, base, ours, theirs)
    options = {"schema_mode": f"'{mode}'"}
    if expected[0] == "refused":
        code = expected[1]
        assert rows(con, preview_sql("sum(schema_conflicts)::BIGINT", **options)) == [(1,)]
        assert rows(con, preflight_sql("ready, split_part(issues, ':', 1)", **options)) == [(False, code)]
        before = repository_state(con)
        refused(con, merge_sql(**options), code)
        assert repository_state(con) == before
        return
    # No conflict of any kind: the two spellings are planned as one object.
    assert rows(con, preview_sql("sum(conflicts + schema_conflicts)::BIGINT", **options)) == [(0,)]
    assert rows(con, preflight_sql("ready, issues", **options)) == [(True, None)]
    assert rows(con, merge_sql(**options)) == [("main", 4, "merged")]
    _, query, result, columns = expected
    con.execute("ATTACH 'differential:shop' AS s (READ_ONLY)")
    assert rows(con, query) == result
    assert [r[0] for r in rows(con, "DESCRIBE s.t")] == columns
