"""The local lifecycle of the 1.0 specification, block by block, up to the what-if branch."""
from differential_testing import connect, scalar


def test_spec_blocks_reproduce_the_spec_numbers(con):
    con.execute("ATTACH 'differential:analytics' AS analytics")
    con.execute("CREATE TABLE analytics.pageviews (day DATE, page VARCHAR, views INTEGER)")
    con.execute(
        """INSERT INTO analytics.pageviews VALUES
        ('2026-10-01', '/pricing', 120), ('2026-10-01', '/docs', 340),
        ('2026-10-02', '/pricing', 95),  ('2026-10-02', '/docs', 410)"""
    )
    assert con.execute("CALL differential_create_snapshot('analytics', name => 'october-import')").fetchone()[0] == 1

    con.execute("DELETE FROM analytics.pageviews WHERE page = '/pricing'")
    assert (
        con.execute(
            "CALL differential_create_snapshot('analytics', name => 'docs-only', message => 'dropped pricing rows')"
        ).fetchone()[0]
        == 2
    )
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews") == 750
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews AT (VERSION => 1)") == 965
    assert con.execute("SELECT snapshot_id, snapshot_name, commit_message FROM analytics.snapshots()").fetchall() == [
        (1, "october-import", None),
        (2, "docs-only", "dropped pricing rows"),
    ]

    con.execute("CALL differential_create_branch('analytics', 'what-if', snapshot => 1)")
    con.execute("ATTACH 'differential:analytics' AS whatif (BRANCH 'what-if')")
    con.execute("UPDATE whatif.pageviews SET views = views * 2 WHERE page = '/pricing'")
    assert scalar(con, "SELECT sum(views) FROM whatif.pageviews") == 1180
    assert con.execute("CALL differential_create_snapshot('whatif', name => 'double-pricing')").fetchone()[0] == 3
    con.execute("DETACH whatif")
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews") == 750

    # The history is the repository's: a new instance sees all of it.
    con.execute("DETACH analytics")
    other = connect(con.execute("SELECT current_setting('differential_repository')").fetchone()[0])
    other.execute("ATTACH 'differential:analytics' AS analytics (READ_ONLY)")
    assert scalar(other, "SELECT sum(views) FROM analytics.pageviews") == 750
    assert scalar(other, "SELECT sum(views) FROM analytics.pageviews AT (VERSION => 3)") == 1180
    assert scalar(other, "SELECT sum(views) FROM analytics.pageviews AT (VERSION => 1)") == 965
    assert other.execute(
        "SELECT branch_name, base_snapshot_id, head_snapshot_id FROM differential_branches('analytics')"
    ).fetchall() == [("main", None, 2), ("what-if", 1, 3)]
    assert other.execute("SELECT database_name FROM differential_databases()").fetchall() == [("analytics",)]
    verify = other.execute("SELECT check_name, objects_checked, problems FROM differential_verify()").fetchall()
    assert all(problems == 0 for _, _, problems in verify), verify
    assert dict((name, checked) for name, checked, _ in verify)["chunks"] > 0


def test_snapshot_ids_and_parents_are_per_database(con):
    con.execute("ATTACH 'differential:a' AS a")
    con.execute("ATTACH 'differential:b' AS b")
    con.execute("CREATE TABLE a.t AS SELECT 1 AS x")
    con.execute("CREATE TABLE b.t AS SELECT 2 AS x")
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('a')") == 1
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('b')") == 1
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('a', author => 'ana')") == 2
    rows = con.execute(
        "SELECT snapshot_id, author, branch_name, parent_snapshot_ids FROM differential_snapshots('a')"
    ).fetchall()
    assert rows == [(1, None, "main", []), (2, "ana", "main", [1])]
