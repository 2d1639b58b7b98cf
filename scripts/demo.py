"""The main job: walks through the local lifecycle on a fresh repository, printing each step, then
opens a SQL prompt with the extension loaded (when run from a terminal)."""
import os
import pathlib
import sys
import tempfile

import duckdb

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"

STEPS = [
    ("Create a database on first ATTACH and load data", [
        "ATTACH 'differential:analytics' AS analytics",
        "CREATE TABLE analytics.pageviews (day DATE, page VARCHAR, views INTEGER)",
        "INSERT INTO analytics.pageviews VALUES ('2026-10-01', '/pricing', 120), ('2026-10-01', '/docs', 340), "
        "('2026-10-02', '/pricing', 95), ('2026-10-02', '/docs', 410)",
        "CALL differential_create_snapshot('analytics', name => 'october-import')",
    ]),
    ("Change the data, snapshot again, and time travel", [
        "DELETE FROM analytics.pageviews WHERE page = '/pricing'",
        "CALL differential_create_snapshot('analytics', name => 'docs-only', message => 'dropped pricing rows')",
        "SELECT sum(views) FROM analytics.pageviews",
        "SELECT sum(views) FROM analytics.pageviews AT (VERSION => 1)",
        "SELECT snapshot_id, snapshot_name, commit_message FROM analytics.snapshots()",
    ]),
    ("Branch from snapshot 1 and try a what-if without touching main", [
        "CALL differential_create_branch('analytics', 'what-if', snapshot => 1)",
        "ATTACH 'differential:analytics' AS whatif (BRANCH 'what-if')",
        "UPDATE whatif.pageviews SET views = views * 2 WHERE page = '/pricing'",
        "SELECT sum(views) FROM whatif.pageviews",
        "CALL differential_create_snapshot('whatif', name => 'double-pricing')",
        "DETACH whatif",
        "SELECT sum(views) FROM analytics.pageviews",
    ]),
    ("Inspect the repository", [
        "SELECT branch_name, base_snapshot_id, head_snapshot_id FROM differential_branches('analytics')",
        "SELECT database_name, branch_count, snapshot_count FROM differential_databases()",
        "SELECT check_name, objects_checked, problems FROM differential_verify()",
    ]),
]


def show(con, sql):
    print(f"D {sql};")
    result = con.sql(sql)
    if result is not None:
        result.show()


def prompt(con):
    print("\nSQL prompt with the extension loaded ('.quit' or Ctrl-D to leave). The demo databases are attached.")
    buffer = ""
    while True:
        try:
            line = input("D " if not buffer else "> ")
        except EOFError:
            print()
            return
        if not buffer and line.strip() in (".quit", ".exit"):
            return
        buffer += line + "\n"
        if not buffer.strip().endswith(";"):
            continue
        try:
            show_result = con.sql(buffer)
            if show_result is not None:
                show_result.show()
        except duckdb.Error as error:
            print(error)
        buffer = ""


def main():
    repository = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="differential-demo-")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    con.execute(f"SET differential_repository = '{repository}'")
    print(f"differential demo on duckdb {duckdb.__version__}; repository: {repository}\n")
    for title, statements in STEPS:
        print(f"-- {title}")
        for sql in statements:
            show(con, sql)
        print()
    if sys.stdin.isatty() and os.environ.get("CI") is None:
        prompt(con)


if __name__ == "__main__":
    main()
