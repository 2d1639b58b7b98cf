"""differential_merge_ancestry: base selection from recorded parent edges only."""
from differential_testing import refused


def test_spec_ancestry_table(con):
    # The spec's retail graph: 1 on main, 2 on a branch from 1, 3 on main, 4 with parents [3, 2]
    # (here made by restoring main to snapshot 2, which records both heads as parents).
    con.execute("ATTACH 'differential:retail' AS retail")
    con.execute("CREATE TABLE retail.orders AS SELECT range AS order_id FROM range(5)")
    con.execute("CALL differential_create_snapshot('retail')")
    con.execute("CALL differential_create_branch('retail', 'cleanup', snapshot => 1)")
    con.execute("ATTACH 'differential:retail' AS cleanup (BRANCH 'cleanup')")
    con.execute("DELETE FROM cleanup.orders WHERE order_id = 3")
    con.execute("CALL differential_create_snapshot('cleanup', name => 'cleanup_done')")
    con.execute("DETACH cleanup")
    con.execute("INSERT INTO retail.orders VALUES (7)")
    con.execute("CALL differential_create_snapshot('retail')")
    con.execute("DETACH retail")
    assert con.execute("SELECT snapshot_id FROM differential_restore('retail', 2)").fetchone()[0] == 4
    rows = con.execute(
        "SELECT snapshot_id, kind, parents, reachable_from, selected_base FROM differential_merge_ancestry('retail', 4, 2)"
    ).fetchall()
    assert rows == [
        (1, "root", [], "both", 2),
        (2, "linear", [1], "both", 2),
        (3, "linear", [1], "ours", 2),
        (4, "merge", [3, 2], "ours", 2),
    ]
    # Before the restore, the branches forked at 1.
    rows = con.execute(
        "SELECT snapshot_id, reachable_from, candidate, selected_base, selection_state "
        "FROM differential_merge_ancestry('retail', 3, 2)"
    ).fetchall()
    assert rows == [(1, "both", True, 1, "selected"), (2, "theirs", False, 1, "selected"), (3, "ours", False, 1, "selected")]


def test_expired_snapshots_keep_the_graph_connected(con):
    con.execute("ATTACH 'differential:hist' AS hist")
    con.execute("CREATE TABLE hist.t AS SELECT 1 AS x")
    for _ in range(3):
        con.execute("INSERT INTO hist.t VALUES (1)")
        con.execute("CALL differential_create_snapshot('hist')")
    con.execute("CALL differential_create_branch('hist', 'side', snapshot => 1)")
    con.execute("CALL differential_expire_snapshots('hist', versions => [2])")
    rows = con.execute(
        "SELECT snapshot_id, parents, expired, selected_base FROM differential_merge_ancestry('hist', 3, 1)"
    ).fetchall()
    assert rows == [(1, [], False, 1), (2, [1], True, 1), (3, [2], False, 1)]


def test_ancestry_refusals(con):
    con.execute("ATTACH 'differential:hist' AS hist")
    con.execute("CREATE TABLE hist.t AS SELECT 1 AS x")
    con.execute("CALL differential_create_snapshot('hist')")
    refused(con, "SELECT * FROM differential_merge_ancestry('hist', 1, 9)", "snapshot_not_found")
    refused(con, "SELECT * FROM differential_merge_ancestry('nope', 1, 1)", "database_not_found")
    refused(con, "SELECT * FROM differential_merge_ancestry('hist', NULL, 1)", "invalid_argument")
    refused(con, "SELECT * FROM differential_merge_ancestry('../x', 1, 1)", "invalid_name")
