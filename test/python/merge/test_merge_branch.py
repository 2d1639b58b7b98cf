"""differential_merge_branch on the 1.1 specification's retail walkthrough, and its refusals."""
import json
import textwrap

import pytest

from differential_testing import refused, repository_state, run_python, scalar

ORDERS = """CREATE TABLE retail.orders (
    order_id INTEGER PRIMARY KEY,
    customer VARCHAR,
    amount   DECIMAL(10, 2),
    status   VARCHAR
)"""


def retail(con):
    con.execute("ATTACH 'differential:retail' AS retail")
    con.execute(ORDERS)
    con.execute(
        """INSERT INTO retail.orders VALUES
        (1, 'Ada', 40.00, 'paid'), (2, 'Lin', 60.00, 'paid'), (3, 'Jo', 25.00, 'open'),
        (4, 'Kim', NULL, 'open'), (5, 'Max', 15.00, 'paid')"""
    )
    assert scalar(con, "CALL differential_create_snapshot('retail', name => 'baseline')") == 1
    con.execute("CALL differential_create_branch('retail', 'cleanup', snapshot => 1)")
    con.execute("ATTACH 'differential:retail' AS cleanup (BRANCH 'cleanup')")
    con.execute("UPDATE cleanup.orders SET amount = 54.00 WHERE order_id = 2")
    con.execute("DELETE FROM cleanup.orders WHERE order_id = 3")
    con.execute("UPDATE cleanup.orders SET amount = 20.00, status = 'paid' WHERE order_id = 4")
    con.execute("INSERT INTO cleanup.orders VALUES (6, 'Sam', 30.00, 'open')")
    assert scalar(con, "CALL differential_create_snapshot('cleanup', name => 'cleanup_done')") == 2
    con.execute("INSERT INTO retail.orders VALUES (7, 'Eve', 12.00, 'open')")
    con.execute("UPDATE retail.orders SET status = 'refunded' WHERE order_id = 1")
    assert scalar(con, "CALL differential_create_snapshot('retail', name => 'monday')") == 3


MERGED = [
    (1, "Ada", 40.00, "refunded"),
    (2, "Lin", 54.00, "paid"),
    (4, "Kim", 20.00, "paid"),
    (5, "Max", 15.00, "paid"),
    (6, "Sam", 30.00, "open"),
    (7, "Eve", 12.00, "open"),
]


def rows(con, table):
    return [(a, b, float(c) if c is not None else None, d) for a, b, c, d in con.execute(f"FROM {table} ORDER BY order_id").fetchall()]


def test_spec_walkthrough(con):
    retail(con)
    # The target must be detached.
    message = refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'early')",
                      "active_attachment_or_transaction")
    assert "DETACH" in message
    con.execute("DETACH retail")
    # Guards: reviewed ids that no longer hold refuse the merge.
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', "
                 "expected_ours_snapshot_id => 2)", "merge_inputs_changed")
    result = con.execute(
        """SELECT branch_name, snapshot_id, merge_action
        FROM differential_merge_branch('retail', 'main', 'cleanup', 'main',
            request_id                  => 'merge-cleanup',
            expected_base_snapshot_id   => 1,
            expected_ours_snapshot_id   => 3,
            expected_theirs_snapshot_id => 2)"""
    ).fetchall()
    assert result == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:retail' AS retail")
    assert rows(con, "retail.orders") == MERGED
    assert con.execute("SELECT parent_snapshot_ids FROM differential_snapshots('retail') WHERE snapshot_id = 4").fetchone()[0] == [3, 2]
    # The same request again returns the original result and merges nothing twice.
    con.execute("DETACH retail")
    again = con.execute("SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch("
                        "'retail', 'main', 'cleanup', 'main', request_id => 'merge-cleanup', expected_base_snapshot_id => 1, "
                        "expected_ours_snapshot_id => 3, expected_theirs_snapshot_id => 2)").fetchall()
    assert again == [("main", 4, "merged")]
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('retail')") == 4
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'merge-cleanup')",
            "merge_request_mismatch")

    # The graph behind the coming fast-forward, exactly as the spec shows it.
    assert con.execute(
        "SELECT snapshot_id, kind, parents, reachable_from, selected_base FROM differential_merge_ancestry('retail', 4, 2)"
    ).fetchall() == [(1, "root", [], "both", 2), (2, "linear", [1], "both", 2), (3, "linear", [1], "ours", 2),
                     (4, "merge", [3, 2], "ours", 2)]

    # Fast-forward: cleanup is behind main.
    con.execute("DETACH cleanup")
    assert con.execute("SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch("
                       "'retail', 'cleanup', 'main', 'cleanup', request_id => 'update-cleanup')").fetchall() == [
        ("cleanup", 4, "fast_forward")]
    con.execute("ATTACH 'differential:retail' AS cleanup (BRANCH 'cleanup')")
    assert rows(con, "cleanup.orders") == MERGED
    con.execute("DETACH cleanup")
    # Already up to date.
    assert con.execute("SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch("
                       "'retail', 'main', 'cleanup', 'main', request_id => 'merge-cleanup-again')").fetchall() == [
        ("main", 4, "already_up_to_date")]
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('retail')") == 4
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def test_merge_into_a_new_branch_leaves_both_inputs(con):
    retail(con)
    con.execute("DETACH cleanup")
    before = rows(con, "retail.orders")
    result = con.execute("SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch("
                         "'retail', 'main', 'cleanup', 'main-with-cleanup')").fetchall()
    assert result == [("main-with-cleanup", 4, "created_branch")]
    assert rows(con, "retail.orders") == before  # main is attached and untouched
    con.execute("ATTACH 'differential:retail' AS review (BRANCH 'main-with-cleanup')")
    assert rows(con, "review.orders") == MERGED
    names = [r[0] for r in con.execute("SELECT branch_name FROM differential_branches('retail')").fetchall()]
    assert names == ["main", "cleanup", "main-with-cleanup"]


def test_conflicts_refuse_and_change_nothing(con):
    retail(con)
    con.execute("UPDATE retail.orders SET amount = 61.00 WHERE order_id = 2")   # cleanup set 54.00: cell conflict
    con.execute("UPDATE retail.orders SET customer = 'Joe' WHERE order_id = 3")  # cleanup deleted 3: delete_update
    con.execute("CALL differential_create_snapshot('retail')")
    con.execute("DETACH retail")
    before = repository_state(con)
    message = refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main')", "merge_conflict")
    assert message.split("] ")[1].startswith("2 conflicting rows")
    assert repository_state(con) == before


def test_dirty_target_and_other_refusals(con):
    retail(con)
    con.execute("INSERT INTO retail.orders VALUES (8, 'Ned', 1.00, 'open')")  # committed after snapshot 3
    con.execute("DETACH retail")
    con.execute("DETACH cleanup")
    before = repository_state(con)
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main')", "merge_target_dirty")
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'nope', 'main')", "branch_not_found")
    refused(con, "SELECT * FROM differential_merge_branch('nope', 'main', 'cleanup', 'main')", "database_not_found")
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'cleanup')", "branch_exists")
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'a/b')", "invalid_name")
    assert repository_state(con) == before
    # A merge into a new branch does not need a clean target: it merges main's snapshot 3, without
    # order 8, which no snapshot holds yet.
    assert con.execute("SELECT merge_action FROM differential_merge_branch('retail', 'main', 'cleanup', 'side')").fetchone()[0] == "created_branch"
    con.execute("ATTACH 'differential:retail' AS side (BRANCH 'side', READ_ONLY)")
    assert rows(con, "side.orders") == MERGED


def test_tables_without_primary_key_are_unsupported(con):
    con.execute("ATTACH 'differential:nokey' AS nokey")
    con.execute("CREATE TABLE nokey.t AS SELECT range AS x FROM range(3)")
    con.execute("CALL differential_create_snapshot('nokey')")
    con.execute("CALL differential_create_branch('nokey', 'b', snapshot => 1)")
    con.execute("ATTACH 'differential:nokey' AS b (BRANCH 'b')")
    con.execute("INSERT INTO b.t VALUES (10)")
    con.execute("CALL differential_create_snapshot('b')")
    con.execute("INSERT INTO nokey.t VALUES (11)")
    con.execute("CALL differential_create_snapshot('nokey')")
    con.execute("DETACH nokey")
    message = refused(con, "SELECT * FROM differential_merge_branch('nokey', 'main', 'b', 'main')", "merge_unsupported")
    assert "'t'" in message and "primary key" in message


def test_repeated_merges_give_the_expected_content_with_either_method(con):
    """The same merge, run again into new branches with the storage shortcut and with the reference
    method (differential_merge_skip_unchanged = false), gives the spec's merged orders every time."""
    retail(con)
    con.execute("DETACH cleanup")
    for i, shortcut in enumerate(("true", "false", "true", "false")):
        con.execute(f"SET differential_merge_skip_unchanged = {shortcut}")
        assert con.execute(f"SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch("
                           f"'retail', 'main', 'cleanup', 'result_{i}')").fetchall() == [(f"result_{i}", 4 + i, "created_branch")]
        con.execute(f"ATTACH 'differential:retail' AS r{i} (BRANCH 'result_{i}', READ_ONLY)")
        assert rows(con, f"r{i}.orders") == MERGED, (i, shortcut)
        con.execute(f"DETACH r{i}")


def test_spec_preview_block(con):
    retail(con)
    rows_ = con.execute(
        """SELECT table_name,
               base_snapshot_id AS base, ours_snapshot_id AS ours, theirs_snapshot_id AS theirs,
               [ours_inserts, ours_updates, ours_deletes]       AS ours_ins_upd_del,
               [theirs_inserts, theirs_updates, theirs_deletes] AS theirs_ins_upd_del,
               conflicts, validation_state
        FROM differential_merge_branch_preview('retail', 'main', 'cleanup', validate => true)"""
    ).fetchall()
    assert rows_ == [("orders", 1, 3, 2, [1, 1, 0], [1, 2, 1], 0, "valid")]
    # Without validate the preview only compares; and a preview writes nothing anyone can see.
    before = repository_state(con)
    assert con.execute(
        "SELECT conflicts, validation_state FROM differential_merge_branch_preview('retail', 'main', 'cleanup')"
    ).fetchall() == [(0, "not_checked")]
    assert repository_state(con) == before


TIMINGS = ["selection_ms", "planning_ms", "comparison_ms", "application_ms", "publication_ms", "target_check_ms"]
PAUSE_MS = 400


def test_merge_reports_where_its_time_went(con, repository):
    """The merge's timing columns are BIGINT, each measures its own phase, and together they fit in
    the call. A pause injected at the start of the comparison (DIFFERENTIAL_PAUSE_POINT, another
    process) must show up in comparison_ms; the phases are disjoint parts of the call, so their sum
    cannot exceed the call's duration as the caller measures it. A replay reports zero timings."""
    retail(con)
    con.execute("DETACH retail")
    con.execute("DETACH cleanup")
    merge = ("SELECT {columns} FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', "
             "request_id => 'timed')")
    # Binding does no merge work, so DESCRIBE shows the columns' types and changes nothing.
    before = repository_state(con)
    described = con.execute("DESCRIBE " + merge.format(columns=", ".join(TIMINGS))).fetchall()
    assert [(name, sql_type) for name, sql_type, *_ in described] == [(name, "BIGINT") for name in TIMINGS]
    assert repository_state(con) == before
    code = textwrap.dedent(f"""
        import json, time
        from differential_testing import connect
        con = connect({str(repository)!r})
        sql = {merge.format(columns=", ".join(TIMINGS))!r}
        started = time.monotonic()
        timings = con.execute(sql).fetchone()
        elapsed_ms = (time.monotonic() - started) * 1000
        replay = con.execute(sql).fetchone()
        print(json.dumps({{"timings": timings, "elapsed_ms": elapsed_ms, "replay": replay}}))
    """)
    out = json.loads(run_python(code, env={"DIFFERENTIAL_PAUSE_POINT": f"merge.comparison:{PAUSE_MS}"}).splitlines()[-1])
    timings = dict(zip(TIMINGS, out["timings"]))
    assert all(isinstance(v, int) and v >= 0 for v in timings.values()), timings
    assert timings["comparison_ms"] >= PAUSE_MS, timings
    assert sum(timings.values()) <= out["elapsed_ms"], (timings, out["elapsed_ms"])
    assert out["replay"] == [0] * len(TIMINGS), out["replay"]


def test_trivial_merges_report_zero_for_the_phases_they_skip(con, repository):
    """A fast-forward compares nothing and counts its planning in no column (planning_ms and
    comparison_ms 0), and a merge into a new destination checks no target (target_check_ms 0). A
    pause injected at the start of planning (another process) shows that planning_ms does measure
    planning in the merge that does plan, so the fast-forward's zeros are not just fast phases."""
    retail(con)
    con.execute("DETACH retail")
    con.execute("DETACH cleanup")
    code = textwrap.dedent(f"""
        import json
        from differential_testing import connect
        con = connect({str(repository)!r})
        sql = "SELECT merge_action, planning_ms, comparison_ms, target_check_ms FROM differential_merge_branch('retail', {{}})"
        merged = con.execute(sql.format("'main', 'cleanup', 'reviewed'")).fetchone()
        forward = con.execute(sql.format("'cleanup', 'reviewed', 'cleanup'")).fetchone()
        print(json.dumps({{"merged": merged, "forward": forward}}))
    """)
    out = json.loads(run_python(code, env={"DIFFERENTIAL_PAUSE_POINT": f"merge.planning:{PAUSE_MS}"}).splitlines()[-1])
    action, planning_ms, _, target_check_ms = out["merged"]
    assert (action, target_check_ms) == ("created_branch", 0) and planning_ms >= PAUSE_MS, out
    # (Its target_check_ms measures a real check of the existing target: no claim on its value.)
    assert out["forward"][:3] == ["fast_forward", 0, 0], out


def test_preview_reports_conflicts_and_invalid_results(con):
    retail(con)
    con.execute("UPDATE retail.orders SET amount = 61.00 WHERE order_id = 2")
    con.execute("CALL differential_create_snapshot('retail')")
    assert con.execute(
        "SELECT conflicts, validation_state FROM differential_merge_branch_preview('retail', 'main', 'cleanup', validate => true)"
    ).fetchall() == [(1, "not_checked")]


def test_a_result_that_breaks_a_constraint_is_refused(con):
    con.execute("ATTACH 'differential:uniq' AS uniq")
    con.execute("CREATE TABLE uniq.people (id INTEGER PRIMARY KEY, email VARCHAR UNIQUE)")
    con.execute("INSERT INTO uniq.people VALUES (1, 'a@x')")
    con.execute("CALL differential_create_snapshot('uniq')")
    con.execute("CALL differential_create_branch('uniq', 'b', snapshot => 1)")
    con.execute("ATTACH 'differential:uniq' AS b (BRANCH 'b')")
    con.execute("INSERT INTO b.people VALUES (3, 'same@x')")
    con.execute("CALL differential_create_snapshot('b')")
    con.execute("DETACH b")
    con.execute("INSERT INTO uniq.people VALUES (2, 'same@x')")
    con.execute("CALL differential_create_snapshot('uniq')")
    preview = con.execute(
        "SELECT conflicts, validation_state FROM differential_merge_branch_preview('uniq', 'main', 'b', validate => true)"
    ).fetchall()
    assert preview == [(0, "invalid")]
    con.execute("DETACH uniq")
    before = repository_state(con)
    refused(con, "SELECT * FROM differential_merge_branch('uniq', 'main', 'b', 'main')", "merge_validation_failed")
    assert repository_state(con) == before


def test_internal_names_are_reserved_and_views_are_not_tables(con):
    retail(con)
    refused(con, "CALL differential_create_branch('retail', '__merge-notes', snapshot => 1)", "reserved_name")
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', '__mine')", "reserved_name")
    con.execute("USE retail")
    con.execute("CREATE VIEW open_orders AS SELECT order_id, status FROM orders WHERE status = 'open'")
    con.execute("USE memory")
    con.execute("CALL differential_create_snapshot('retail')")
    con.execute("DETACH retail")
    con.execute("DETACH cleanup")
    # A view added on one side is a catalog change: strict mode refuses it, catalog mode adds it.
    before = repository_state(con)
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main')", "merge_unsupported")
    assert repository_state(con) == before
    assert con.execute("SELECT merge_action FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', "
                       "schema_mode => 'catalog')").fetchone()[0] == "merged"
    con.execute("ATTACH 'differential:retail' AS retail (READ_ONLY)")
    assert con.execute("SELECT order_id FROM retail.open_orders ORDER BY 1").fetchall() == [(6,), (7,)]


def test_refused_merges_leave_no_attachments(con):
    con.execute("ATTACH 'differential:nokey' AS nokey")
    con.execute("CREATE TABLE nokey.t AS SELECT range AS x FROM range(3)")
    con.execute("CALL differential_create_snapshot('nokey')")
    con.execute("CALL differential_create_branch('nokey', 'b', snapshot => 1)")
    con.execute("ATTACH 'differential:nokey' AS b (BRANCH 'b')")
    con.execute("INSERT INTO b.t VALUES (10)")
    con.execute("CALL differential_create_snapshot('b')")
    con.execute("INSERT INTO nokey.t VALUES (11)")
    con.execute("CALL differential_create_snapshot('nokey')")
    con.execute("DETACH nokey")
    refused(con, "SELECT * FROM differential_merge_branch('nokey', 'main', 'b', 'main')", "merge_unsupported")
    names = [r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()]
    assert not any(n.startswith("__merge") for n in names), names
    open_snapshots = con.execute("SELECT snapshot_id FROM differential_snapshots('nokey') WHERE open_in_process").fetchall()
    assert open_snapshots == []


def test_expired_base_is_named(con):
    retail(con)
    con.execute("DETACH retail")
    con.execute("DETACH cleanup")
    con.execute("CALL differential_expire_snapshots('retail', versions => [1])")
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main')", "snapshot_expired")


def test_spec_preflight_block(con):
    retail(con)
    attached = con.execute(
        "SELECT ready, target_state, issues FROM differential_merge_branch_preflight('retail', 'main', 'cleanup', 'main')"
    ).fetchone()
    assert attached[0] is False and attached[1] == "attached" and attached[2].startswith("active_attachment_or_transaction")
    con.execute("DETACH retail")
    before = repository_state(con)
    assert con.execute(
        """SELECT ready, merge_action, target_state, validation_state,
               base_snapshot_id, ours_snapshot_id, theirs_snapshot_id
        FROM differential_merge_branch_preflight('retail', 'main', 'cleanup', 'main')"""
    ).fetchall() == [(True, "merged", "clean", "valid", 1, 3, 2)]
    assert repository_state(con) == before
    con.execute("DETACH cleanup")
    assert con.execute(
        "SELECT ready, merge_action, target_state FROM differential_merge_branch_preflight('retail', 'cleanup', 'main', 'cleanup')"
    ).fetchall() == [(True, "merged", "clean")]


def test_preflight_names_the_first_issue(con):
    retail(con)
    con.execute("UPDATE retail.orders SET amount = 61.00 WHERE order_id = 2")
    con.execute("CALL differential_create_snapshot('retail')")
    con.execute("INSERT INTO retail.orders VALUES (9, 'Ivy', 1.00, 'open')")  # after the snapshot: dirty
    con.execute("DETACH retail")
    row = con.execute(
        "SELECT ready, target_state, validation_state, issues "
        "FROM differential_merge_branch_preflight('retail', 'main', 'cleanup', 'main')"
    ).fetchone()
    assert row[:3] == (False, "dirty", "not_checked") and row[3].startswith("merge_target_dirty"), row


def test_spec_request_table(con):
    retail(con)
    con.execute("DETACH retail")
    con.execute("SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'merge-cleanup', "
                "expected_base_snapshot_id => 1, expected_ours_snapshot_id => 3, expected_theirs_snapshot_id => 2)")
    con.execute("DETACH cleanup")
    con.execute("SELECT * FROM differential_merge_branch('retail', 'cleanup', 'main', 'cleanup', request_id => 'update-cleanup')")
    con.execute("ATTACH 'differential:retail' AS retail")
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'noop-attached')",
            "active_attachment_or_transaction")
    con.execute("DETACH retail")
    con.execute("SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'merge-cleanup-again')")
    assert con.execute(
        """SELECT request_id, state, merge_action, destination,
               base_snapshot_id AS base, ours_snapshot_id AS ours, theirs_snapshot_id AS theirs,
               result_snapshot_id AS result
        FROM differential_merge_requests('retail') ORDER BY created_at"""
    ).fetchall() == [
        ("merge-cleanup", "complete", "merged", "main", 1, 3, 2, 4),
        ("update-cleanup", "complete", "fast_forward", "cleanup", 2, 2, 4, 4),
        ("noop-attached", "pending", "already_up_to_date", "main", 4, 4, 4, None),
        ("merge-cleanup-again", "complete", "already_up_to_date", "main", 4, 4, 4, 4),
    ]
    assert con.execute("SELECT last_error_code, attempts FROM differential_merge_requests('retail') "
                       "WHERE request_id = 'noop-attached'").fetchone() == ("active_attachment_or_transaction", 1)
    # Retrying the pending request with the same arguments completes it from its frozen inputs.
    assert con.execute("SELECT snapshot_id, merge_action FROM differential_merge_branch("
                       "'retail', 'main', 'cleanup', 'main', request_id => 'noop-attached')").fetchone() == (4, "already_up_to_date")
    assert con.execute("SELECT state, result_snapshot_id, attempts, last_error_code FROM differential_merge_requests('retail') "
                       "WHERE request_id = 'noop-attached'").fetchone() == ("complete", 4, 2, None)


def test_pending_retry_uses_frozen_inputs(con):
    retail(con)
    con.execute("UPDATE retail.orders SET amount = 61.00 WHERE order_id = 2")  # conflicts with cleanup's 54.00
    con.execute("CALL differential_create_snapshot('retail')")                 # snapshot 4
    con.execute("DETACH retail")
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'r')", "merge_conflict")
    assert con.execute("SELECT state, ours_snapshot_id, last_error_code FROM differential_merge_requests('retail')").fetchall() == [
        ("pending", 4, "merge_conflict")]
    # main moves on (the conflict is resolved there); the pending request still means snapshot 4.
    con.execute("ATTACH 'differential:retail' AS retail")
    con.execute("UPDATE retail.orders SET amount = 54.00 WHERE order_id = 2")
    con.execute("CALL differential_create_snapshot('retail')")                 # snapshot 5
    con.execute("DETACH retail")
    # Publishing a result built on snapshot 4 would drop main's snapshot 5: the retry refuses.
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'r')",
            "merge_inputs_changed")
    # A new request sees the new head and merges.
    assert con.execute("SELECT merge_action, ours_snapshot_id FROM differential_merge_branch("
                       "'retail', 'main', 'cleanup', 'main', request_id => 'r2')").fetchone() == ("merged", 5)


def test_merge_snapshot_records_its_provenance(con):
    """The spec: a merge snapshot's commit_extra_info records the merge algorithm, the operation and all
    three inputs with their content roots."""
    import json
    retail(con)
    con.execute("DETACH retail")
    con.execute("SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'm')")
    info = json.loads(scalar(con, "SELECT commit_extra_info FROM differential_snapshots('retail') WHERE snapshot_id = 4"))
    assert info["algorithm"] == "differential-three-way-cell-1"
    assert info["operation"] == "merge_branch" and info["request_id"] == "m" and info["schema_mode"] == "strict"
    assert [info[side]["snapshot_id"] for side in ("base", "ours", "theirs")] == [1, 3, 2]
    roots = [info[side]["content_root"] for side in ("base", "ours", "theirs")]
    assert all(len(r) == 64 for r in roots) and len(set(roots)) == 3, roots
    # The commit message and the parent edges tell the same story (MERGES.md §11).
    assert con.execute("SELECT commit_message, parent_snapshot_ids FROM differential_snapshots('retail') "
                       "WHERE snapshot_id = 4").fetchone() == ("merge of snapshot 2 into snapshot 3 (base 1)", [3, 2])
    # Ordinary snapshots have none; a root names a snapshot's content, the same in every merge that reads it.
    assert scalar(con, "SELECT count(commit_extra_info) FROM differential_snapshots('retail') WHERE snapshot_id < 4") == 0
    con.execute("SELECT * FROM differential_merge_snapshots('retail', 1, 3, 2, 'replayed')")
    again = json.loads(scalar(con, "SELECT commit_extra_info FROM differential_snapshots('retail') "
                                   "WHERE branch_name = 'replayed'"))
    assert again["operation"] == "merge_snapshots" and again["request_id"] is None
    assert [again[side]["content_root"] for side in ("base", "ours", "theirs")] == roots
