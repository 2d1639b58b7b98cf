"""The spec's whole local lifecycle ("That's the whole local lifecycle"), every number, in one test."""
from differential_testing import refused, scalar


def test_whole_local_lifecycle(con):
    con.execute("ATTACH 'differential:analytics' AS analytics")
    con.execute("CREATE TABLE analytics.pageviews (day DATE, page VARCHAR, views INTEGER)")
    con.execute(
        """INSERT INTO analytics.pageviews VALUES
        ('2026-10-01', '/pricing', 120), ('2026-10-01', '/docs', 340),
        ('2026-10-02', '/pricing', 95),  ('2026-10-02', '/docs', 410)"""
    )
    assert scalar(con, "CALL differential_create_snapshot('analytics', name => 'october-import')") == 1
    con.execute("DELETE FROM analytics.pageviews WHERE page = '/pricing'")
    assert (
        scalar(con, "CALL differential_create_snapshot('analytics', name => 'docs-only', message => 'dropped pricing rows')")
        == 2
    )
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews") == 750
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews AT (VERSION => 1)") == 965

    con.execute("CALL differential_create_branch('analytics', 'what-if', snapshot => 1)")
    con.execute("ATTACH 'differential:analytics' AS whatif (BRANCH 'what-if')")
    con.execute("UPDATE whatif.pageviews SET views = views * 2 WHERE page = '/pricing'")
    assert scalar(con, "SELECT sum(views) FROM whatif.pageviews") == 1180
    assert scalar(con, "CALL differential_create_snapshot('whatif', name => 'double-pricing')") == 3
    con.execute("DETACH whatif")
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews") == 750

    # Restore needs the branch detached, and preserves the replaced state.
    refused(con, "CALL differential_restore('analytics', 1)", "active_attachment_or_transaction")
    con.execute("DETACH analytics")
    assert scalar(con, "CALL differential_restore('analytics', 1)") == 4
    con.execute("ATTACH 'differential:analytics' AS analytics")
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews") == 965

    con.execute("CALL differential_clone_database('analytics', 'analytics_sandbox', snapshot => 1)")
    con.execute("ATTACH 'differential:analytics_sandbox' AS sandbox")
    assert scalar(con, "SELECT count(*) FROM sandbox.pageviews") == 4
    con.execute("DETACH sandbox")

    con.execute("DETACH analytics")
    con.execute("CALL differential_drop_branch('analytics', 'what-if')")
    con.execute("CALL differential_expire_snapshots('analytics', versions => [2, 3])")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    assert con.execute("SELECT database_name FROM differential_databases()").fetchall() == [
        ("analytics",),
        ("analytics_sandbox",),
    ]

    # What is left still reads, and the repository verifies clean.
    con.execute("ATTACH 'differential:analytics' AS analytics")
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews") == 965
    assert scalar(con, "SELECT sum(views) FROM analytics.pageviews AT (VERSION => 1)") == 965
    refused(con, "SELECT sum(views) FROM analytics.pageviews AT (VERSION => 2)", "snapshot_expired")
    assert con.execute("SELECT snapshot_id, commit_message, parent_snapshot_ids FROM analytics.snapshots()").fetchall() == [
        (1, None, []),
        (4, "restored from snapshot 1", [2, 1]),
    ]
    con.execute("ATTACH 'differential:analytics_sandbox' AS sandbox")
    assert scalar(con, "SELECT count(*) FROM sandbox.pageviews") == 4
    assert con.execute("SELECT count(*) FROM sandbox.snapshots()").fetchone()[0] == 0
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
