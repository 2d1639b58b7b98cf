"""dbt on a branch, end to end: seed main with source data, `dbt build` on a branch, show each model
table's row diff, merge the branch into main in one step, then `dbt build` on main and check that it
yields the same tables. Prints one JSON document (the results) on stdout; dbt's output goes to stderr.

Usage: run_loop.py [--repository DIR] [--extension-repository DIR] [--branch NAME]
The repository must be new (or absent); the extension repository defaults to build/repository.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import duckdb

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATABASE = "warehouse"
# The pipeline's model tables (views hold no rows of their own, their SQL is compared instead).
MODEL_TABLES = ["country_names", "customer_revenue", "daily_orders"]
VIEWS = ["stg_customers", "stg_orders"]

SOURCES = [
    "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name VARCHAR, country VARCHAR)",
    ("CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER, ordered_on DATE, "
     "amount_cents BIGINT, status VARCHAR)"),
    "INSERT INTO customers VALUES (1, ' Ada ', 'de'), (2, 'Grace', 'us'), (3, 'Edsger', 'nl'), (4, 'Barbara', 'fr')",
    ("INSERT INTO orders VALUES (10, 1, DATE '2026-11-30', 1250, 'shipped'), (11, 1, DATE '2026-12-01', 800, 'shipped'),"
     " (12, 2, DATE '2026-12-01', 4300, 'cancelled'), (13, 3, DATE '2026-12-02', 1999, 'open'),"
     " (14, 4, DATE '2026-12-02', 500, 'shipped'), (15, 2, DATE '2026-12-03', 7100, 'open')"),
    "CREATE TABLE notes (note_id INTEGER PRIMARY KEY, body VARCHAR)",
]
# Main moves on while the branch is in review, in a table the pipeline does not read: the merge is
# then a real three-way merge (not a fast-forward), and rebuilding on main still gives the branch's tables.
MAIN_MEANWHILE = ["INSERT INTO notes VALUES (1, 'quarter closed')"]


def log(message):
    print(f"[run_loop] {message}", file=sys.stderr, flush=True)


def connect(extension_repository, extension_directory, repository):
    """A DuckDB session that installs and loads the extension the way the dbt profile does."""
    con = duckdb.connect(config={"allow_unsigned_extensions": "true", "extension_directory": extension_directory})
    con.execute("SET enable_progress_bar_print = false")
    con.execute(f"INSTALL differential FROM '{extension_repository}'")
    con.execute("LOAD differential")
    con.execute(f"SET differential_repository = '{repository}'")
    return con


def dbt(command, branch, env):
    """Runs a dbt command on `branch` (the profile attaches that branch); fails loudly with its output."""
    run_env = dict(env, DBT_BRANCH=branch)
    exe = pathlib.Path(sys.executable).with_name("dbt")
    # dbt's target/ and logs/ go to the run's own directory, not into the example.
    work = pathlib.Path(env["DIFFERENTIAL_REPOSITORY"]).parent
    cmd = [str(exe), *command, "--project-dir", str(HERE), "--profiles-dir", str(HERE),
           "--target-path", str(work / "dbt-target"), "--log-path", str(work / "dbt-logs")]
    log(f"{' '.join(command)} on branch {branch}")
    result = subprocess.run(cmd, env=run_env, capture_output=True, text=True, check=False)
    sys.stderr.write(result.stdout + result.stderr)
    if result.returncode != 0:
        raise SystemExit(f"dbt {' '.join(command)} on branch {branch} failed ({result.returncode})")


def table_rows(con, alias, table):
    return [list(map(str, row)) for row in con.execute(f"SELECT * FROM {alias}.main.{table} ORDER BY ALL").fetchall()]


def contents(con, branch=None, snapshot=None):
    """Every model table's rows and every view's SQL, of a branch or a snapshot (read-only)."""
    option = f"SNAPSHOT {snapshot}" if snapshot is not None else f"BRANCH '{branch}', READ_ONLY"
    con.execute(f"ATTACH 'differential:{DATABASE}' AS probe ({option})")
    try:
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'probe'").fetchall()}
        out = {t: table_rows(con, "probe", t) for t in MODEL_TABLES if t in tables}
        out["views"] = {r[0]: r[1] for r in con.execute(
            "SELECT view_name, sql FROM duckdb_views() WHERE database_name = 'probe' AND NOT internal").fetchall()}
        out["tables"] = sorted(tables)
        return out
    finally:
        con.execute("DETACH probe")


def run_on(con, branch, statements):
    """Runs statements on a branch with USE, so their names are unqualified."""
    con.execute(f"ATTACH 'differential:{DATABASE}' AS side (BRANCH '{branch}')")
    con.execute("USE side")
    try:
        for sql in statements:
            con.execute(sql)
    finally:
        con.execute("USE memory")
        con.execute("DETACH side")


def snapshot(con, branch, message):
    con.execute(f"ATTACH 'differential:{DATABASE}' AS snap (BRANCH '{branch}')")
    try:
        return con.execute("SELECT * FROM differential_create_snapshot('snap', message => ?)", [message]).fetchone()[0]
    finally:
        con.execute("DETACH snap")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repository", default=None)
    parser.add_argument("--extension-repository", default=str(ROOT / "build" / "repository"))
    parser.add_argument("--branch", default="dbt-change")
    args = parser.parse_args()
    repository = pathlib.Path(args.repository or tempfile.mkdtemp(prefix="dbt-loop-")) / "repository"
    if repository.exists() and any(repository.iterdir()):
        raise SystemExit(f"{repository} is not empty: the loop starts from a fresh repository")
    extension_repository = str(pathlib.Path(args.extension_repository).resolve())
    # A fresh extension directory: INSTALL keeps an installed copy, so a shared one would hold a stale build.
    extension_directory = str(repository.parent / "extensions")
    env = dict(os.environ, DIFFERENTIAL_REPOSITORY=str(repository), DUCKDB_EXTENSION_DIRECTORY=extension_directory,
               DIFFERENTIAL_EXTENSION_REPOSITORY=extension_repository, DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    con = connect(extension_repository, extension_directory, repository)
    results = {"repository": str(repository), "branch": args.branch}

    log("seeding main with the source tables")
    run_on(con, "main", SOURCES)
    results["main_seeded_snapshot"] = snapshot(con, "main", "source data")
    results["main_before"] = contents(con, branch="main")

    log(f"creating branch {args.branch} and building the pipeline there")
    con.execute(f"CALL differential_create_branch('{DATABASE}', '{args.branch}')")
    dbt(["build"], args.branch, env)
    results["branch_snapshot"] = snapshot(con, args.branch, "dbt build")
    results["branch"] = contents(con, branch=args.branch)
    results["main_after_branch_build"] = contents(con, branch="main")

    log("meanwhile, main moves on in a table the pipeline does not read")
    run_on(con, "main", MAIN_MEANWHILE)
    results["main_meanwhile_snapshot"] = snapshot(con, "main", "a note")

    log("what the branch changed, per model table (differential_diff main -> branch)")
    results["diff"] = {}
    for table in MODEL_TABLES:
        rows = con.execute(
            "SELECT kind, count(*) FROM differential_diff(?, 'main', ?, ?) GROUP BY kind ORDER BY kind",
            [DATABASE, args.branch, table]).fetchall()
        results["diff"][table] = dict(rows)
        log(f"  {table}: {dict(rows)}")

    log(f"merging {args.branch} into main")
    merged = con.execute(
        "SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch(?, 'main', ?, 'main', "
        "schema_mode => 'catalog')", [DATABASE, args.branch]).fetchone()
    results["merge"] = {"branch": merged[0], "snapshot_id": merged[1], "merge_action": merged[2]}
    results["main_after_merge"] = contents(con, branch="main")

    log("building the pipeline on main after the merge")
    dbt(["build"], "main", env)
    results["main_rebuilt_snapshot"] = snapshot(con, "main", "dbt build on main")
    results["main_rebuilt"] = contents(con, branch="main")
    results["same_after_rebuild"] = all(
        results["main_rebuilt"].get(t) == results["branch"].get(t) for t in MODEL_TABLES + ["views"])
    log(f"main after the merge and a rebuild equals the branch: {results['same_after_rebuild']}")
    print(json.dumps(results, indent=1))
    return 0 if results["same_after_rebuild"] else 1


if __name__ == "__main__":
    sys.exit(main())
