"""A small database whose main (ours) and branch 'b' (theirs) both moved on from snapshot 1."""
from differential_testing import scalar


def run(con, catalog, statements):
    """Runs statements with `USE catalog`, so unqualified names (and views' references) are local."""
    con.execute(f"USE {catalog}")
    try:
        for statement in statements:
            con.execute(statement)
    finally:
        con.execute("USE memory")


def diverge(con, base, ours, theirs, database="shop"):
    """base on main is snapshot 1; branch 'b' forks there and runs theirs (snapshot 2); main runs
    ours (snapshot 3). Ends with both detached, so main is a valid merge target."""
    con.execute(f"ATTACH 'differential:{database}' AS {database}")
    run(con, database, base)
    assert scalar(con, f"CALL differential_create_snapshot('{database}')") == 1
    con.execute(f"CALL differential_create_branch('{database}', 'b', snapshot => 1)")
    con.execute(f"ATTACH 'differential:{database}' AS b (BRANCH 'b')")
    run(con, "b", theirs)
    assert scalar(con, "CALL differential_create_snapshot('b')") == 2
    con.execute("DETACH b")
    run(con, database, ours)
    assert scalar(con, f"CALL differential_create_snapshot('{database}')") == 3
    con.execute(f"DETACH {database}")


def options_sql(options):
    """Named arguments as SQL: options maps a name to SQL text, e.g. schema_mode="'catalog'"."""
    return "".join(f", {name} => {value}" for name, value in options.items())


def merge_sql(database="shop", **options):
    """The merge of branch b into main."""
    return ("SELECT branch_name, snapshot_id, merge_action "
            f"FROM differential_merge_branch('{database}', 'main', 'b', 'main'{options_sql(options)})")


def preview_sql(columns, database="shop", **options):
    return f"SELECT {columns} FROM differential_merge_branch_preview('{database}', 'main', 'b'{options_sql(options)})"


def preflight_sql(columns, database="shop", **options):
    return (f"SELECT {columns} "
            f"FROM differential_merge_branch_preflight('{database}', 'main', 'b', 'main'{options_sql(options)})")
