"""The main job: walks through the local lifecycle on a fresh repository, printing each step, then
opens the DuckDB CLI (build/release/duckdb) on the same repository, the extension installed from the
build's extension repository and loaded by name (when run from a terminal)."""
import os
import pathlib
import sys
import tempfile

import duckdb

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"
SHELL = REPO_ROOT / "build" / "release" / "duckdb"
EXTENSION_REPOSITORY = REPO_ROOT / "build" / "repository"

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
    ("Restore main to snapshot 1 (the replaced state stays in the history)", [
        "DETACH analytics",
        "CALL differential_restore('analytics', 1)",
        "ATTACH 'differential:analytics' AS analytics",
        "SELECT sum(views) FROM analytics.pageviews",
    ]),
    ("Clone an independent sandbox that shares every unchanged chunk", [
        "CALL differential_clone_database('analytics', 'analytics_sandbox', snapshot => 1)",
        "ATTACH 'differential:analytics_sandbox' AS sandbox",
        "SELECT count(*) FROM sandbox.pageviews",
        "DETACH sandbox",
    ]),
    ("Merge a branch cell by cell, and settle a conflict with a table of decisions", [
        "ATTACH 'differential:shop' AS shop",
        "CREATE TABLE shop.orders (order_id INTEGER PRIMARY KEY, amount DECIMAL(10, 2), status VARCHAR)",
        "INSERT INTO shop.orders VALUES (1, 40.00, 'paid'), (2, 60.00, 'paid'), (3, 25.00, 'open')",
        "CALL differential_create_snapshot('shop', name => 'baseline')",
        "CALL differential_create_branch('shop', 'pricing', snapshot => 1)",
        "ATTACH 'differential:shop' AS pricing (BRANCH 'pricing')",
        "UPDATE pricing.orders SET amount = 45.00 WHERE order_id IN (1, 3)",
        "CALL differential_create_snapshot('pricing', name => 'new-prices')",
        "DETACH pricing",
        "UPDATE shop.orders SET status = 'refunded' WHERE order_id = 1",
        "UPDATE shop.orders SET amount = 20.00 WHERE order_id = 3",
        "CALL differential_create_snapshot('shop', name => 'corrections')",
        "DETACH shop",
        "SELECT table_name, ours_updates, theirs_updates, conflicts, "
        "[c.key[1].integer_value FOR c IN conflict_details] AS conflicting_orders "
        "FROM differential_merge_branch_preview('shop', 'main', 'pricing')",
        "CREATE TABLE decisions (order_id INTEGER, amount DECIMAL(10, 2), status VARCHAR, _merge_action VARCHAR, "
        "_merge_columns MAP(VARCHAR, VARCHAR))",
        "INSERT INTO decisions VALUES (3, 22.50, NULL, 'cells', map {'amount': 'custom'})",
        "SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch('shop', 'main', 'pricing', "
        "'main', request_id => 'pricing-1', resolution_tables => map {'main.orders': 'decisions'})",
        "ATTACH 'differential:shop' AS shop",
        "FROM shop.orders ORDER BY order_id",
        "SELECT request_id, state, merge_action, result_snapshot_id FROM differential_merge_requests('shop')",
    ]),
    ("Maintain the history: drop a branch, expire snapshots, reclaim space", [
        "DETACH analytics",
        "CALL differential_drop_branch('analytics', 'what-if')",
        "CALL differential_expire_snapshots('analytics', versions => [2, 3])",
        "SELECT bytes_freed, segments_deleted, segments_compacted FROM differential_cleanup_old_files(cleanup_all => true)",
        "SELECT database_name, branch_count, snapshot_count FROM differential_databases()",
        "SELECT logical_bytes, stored_bytes, live_bytes, dedup_ratio FROM differential_storage_info()",
        "SELECT check_name, objects_checked, problems FROM differential_verify()",
        "ATTACH 'differential:analytics' AS analytics",
    ]),
]


def show(con, sql):
    print(f"D {sql};")
    if sql.split()[0].upper() in ("SELECT", "CALL", "FROM"):
        con.sql(sql).show()
    else:
        con.execute(sql)


def open_cli(repository):
    """Replaces this process with the CLI, set up the way a CLI user does it: install from the extension
    repository, load by name, point at the demo's repository and attach what the demo left attached."""
    # A directory of the demo's own, so the demo never touches ~/.duckdb; users leave the SET out.
    setup = [
        f"SET extension_directory = '{repository}-extensions'",
        f"INSTALL differential FROM '{EXTENSION_REPOSITORY}'",
        "LOAD differential",
        f"SET differential_repository = '{repository}'",
        "ATTACH 'differential:analytics' AS analytics",
        "ATTACH 'differential:shop' AS shop",
    ]
    print("\nOpening the DuckDB CLI on the same repository ('.quit' or Ctrl-D to leave):")
    print(f"{SHELL.relative_to(REPO_ROOT)} -unsigned")
    for sql in setup:
        print(f"D {sql};")
    arguments = [str(SHELL), "-unsigned"]
    for sql in setup:
        arguments += ["-cmd", sql]
    sys.stdout.flush()
    os.execv(str(SHELL), arguments)


def main():
    repository = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="differential-demo-"))
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    con.execute(f"SET differential_repository = '{repository}'")
    print(f"differential demo on duckdb {duckdb.__version__}; repository: {repository}\n")
    for title, statements in STEPS:
        print(f"-- {title}")
        for sql in statements:
            show(con, sql)
        print()
    # The CLI opens the repository's databases itself: this process lets go of them first.
    con.close()
    if sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("CI") is None:
        open_cli(repository)


if __name__ == "__main__":
    main()
