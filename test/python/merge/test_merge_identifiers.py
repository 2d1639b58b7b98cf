"""User identifiers inside the SQL a merge builds: tables and columns named like the merge's own
aliases and flags, and table names that need quoting, must merge correctly or be refused by name."""
from differential_testing import refused, repository_state
from three_way import diverge, merge_sql, preflight_sql, preview_sql

# Every database here is built with three_way.diverge: snapshot 1 is the base on main, branch 'b'
# (theirs) is snapshot 2, main (ours) is snapshot 3, and both end detached.


def rows(con, sql):
    return con.execute(sql).fetchall()


def test_table_named_d_with_a_column_named_action_merges(con):
    """The merge applies its decisions with `DELETE ... USING <decisions> d` and `UPDATE ... FROM
    <decisions> d`; a user table named "d" with a column named like a decision column (action) must
    not make `d.action` ambiguous. Both sides changed different rows without conflict, so the merge
    must succeed and combine them."""
    diverge(con, ["CREATE TABLE d (id INTEGER PRIMARY KEY, action VARCHAR)", "INSERT INTO d VALUES (1, 'a'), (2, 'b'), (3, 'c')"],
            ["UPDATE d SET action = 'x' WHERE id = 1"],
            ["UPDATE d SET action = 'y' WHERE id = 2", "DELETE FROM d WHERE id = 3"])
    assert rows(con, merge_sql()) == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS s")
    assert rows(con, "FROM s.d ORDER BY id") == [(1, "x"), (2, "y")]


def test_a_column_named_like_the_presence_flag_is_refused_by_name(con):
    """Each side's rows carry a `__differential_present` flag telling a deleted row from a row of
    NULLs; a user column of that name would shadow it and lose theirs' deletion of row 1. Such
    names are reserved (MERGES.md §12): preview, preflight and merge refuse with merge_unsupported
    naming the column, and the refusal changes nothing."""
    diverge(con, ["CREATE TABLE p (id INTEGER PRIMARY KEY, __differential_present BOOLEAN)",
                  "INSERT INTO p VALUES (1, NULL), (2, NULL)"],
            ["INSERT INTO p VALUES (3, NULL)"], ["DELETE FROM p WHERE id = 1"])
    message = refused(con, preview_sql("*"), "merge_unsupported")
    assert "__differential_present" in message, message
    ready, issues = rows(con, preflight_sql("ready, issues"))[0]
    assert ready is False and issues.startswith("merge_unsupported") and "__differential_present" in issues, issues
    before = repository_state(con)
    message = refused(con, merge_sql(), "merge_unsupported")
    assert "__differential_present" in message, message
    assert repository_state(con) == before


def cell_conflict_on(con, table, value_column):
    """Row 1 of `table` is a cell conflict on value_column (ours 'x', theirs 'y'); row 2 is untouched."""
    diverge(con, [f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, {value_column} VARCHAR)",
                  f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"],
            [f"UPDATE {table} SET {value_column} = 'x' WHERE id = 1"],
            [f"UPDATE {table} SET {value_column} = 'y' WHERE id = 1"])


def test_resolution_table_with_a_column_named_r_resolves(con):
    """Resolution rows are read as whole-row STRUCTs through a table alias; a target column named
    like that alias (here `r`) must not be taken for the row. A valid 'cells' decision choosing
    theirs resolves the conflict, and the merge takes theirs' value."""
    cell_conflict_on(con, "t", "r")
    con.execute("CREATE TABLE dec (id INTEGER, r VARCHAR, _merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO dec VALUES (1, NULL, 'cells', map {'r': 'theirs'})")
    mapping = "map {'main.t': 'memory.main.dec'}"
    assert rows(con, preview_sql("conflicts, resolved_conflicts", resolution_tables=mapping)) == [(0, 1)]
    assert rows(con, merge_sql(resolution_tables=mapping)) == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS s")
    assert rows(con, "FROM s.t ORDER BY id") == [(1, "y"), (2, "b")]


def test_conflicts_of_a_table_with_a_dot_in_its_name_can_be_resolved(con):
    """A table named "a.b" is a valid main-schema table with a key, inside the supported scope; the
    quoted form 'main."a.b"' in resolution_tables must name it (not split on every '.'), or its
    conflicts could never be resolved."""
    cell_conflict_on(con, '"a.b"', "v")
    con.execute("CREATE TABLE dec (id INTEGER, v VARCHAR, _merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO dec VALUES (1, 'z', 'cells', map {'v': 'custom'})")
    result = rows(con, merge_sql(resolution_tables="""map {'main."a.b"': 'memory.main.dec'}"""))
    assert result == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS s")
    assert rows(con, 'FROM s."a.b" ORDER BY id') == [(1, "z"), (2, "b")]
