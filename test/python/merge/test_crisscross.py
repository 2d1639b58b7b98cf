"""The spec's criss-cross history: automatic base selection refuses; an explicit base merges."""
from crisscross_history import crisscross
from differential_testing import refused, repository_state, scalar


def test_spec_crisscross(con):
    crisscross(con)
    message = refused(con, "SELECT * FROM differential_merge_branch_preview('crisscross', 'ab', 'ba')", "merge_base_ambiguous")
    # The spec's "Invalid Error" type reaches Python as the plain duckdb.Error, without a prefix.
    assert message.startswith("[differential:merge_base_ambiguous] Multiple best common ancestors; "
                              "use differential_merge_snapshots with an explicit base"), message
    assert "differential_merge_snapshots" in message
    rows = con.execute(
        "SELECT snapshot_id, kind, parents, reachable_from, candidate, selection_state "
        "FROM differential_merge_ancestry('crisscross', 6, 7)"
    ).fetchall()
    assert rows == [
        (1, "root", [], "both", False, "ambiguous"),
        (2, "linear", [1], "both", True, "ambiguous"),
        (3, "linear", [1], "both", True, "ambiguous"),
        (4, "merge", [2, 3], "ours", False, "ambiguous"),
        (5, "merge", [3, 2], "theirs", False, "ambiguous"),
        (6, "linear", [4], "ours", False, "ambiguous"),
        (7, "linear", [5], "theirs", False, "ambiguous"),
    ]
    assert con.execute(
        "SELECT branch_name, snapshot_id, merge_action FROM differential_merge_snapshots("
        "'crisscross', 4, 6, 7, 'combined', request_id => 'combine-ab-ba')"
    ).fetchall() == [("combined", 8, "created_branch")]
    con.execute("ATTACH 'differential:crisscross' AS combined (BRANCH 'combined', READ_ONLY)")
    assert con.execute("FROM combined.orders ORDER BY order_id").fetchall() == [
        (1, 10, "refunded"), (2, 21, "paid"), (3, 30, "open"), (4, 40, "open")]
    assert scalar(con, "SELECT parent_snapshot_ids FROM differential_snapshots('crisscross') WHERE snapshot_id = 8") == [6, 7]
    # Retrying the request returns the same result.
    assert con.execute(
        "SELECT snapshot_id FROM differential_merge_snapshots('crisscross', 4, 6, 7, 'combined', request_id => 'combine-ab-ba')"
    ).fetchall() == [(8,)]


def test_merge_snapshots_refusals(con):
    crisscross(con)
    before = repository_state(con)
    refused(con, "SELECT * FROM differential_merge_snapshots('crisscross', 1, 6, 99, 'x')", "snapshot_not_found")
    refused(con, "SELECT * FROM differential_merge_snapshots('crisscross', 4, 6, 7, 'ab')", "branch_exists")
    refused(con, "SELECT * FROM differential_merge_snapshots('crisscross', NULL, 6, 7, 'x')", "invalid_argument")
    assert repository_state(con) == before
