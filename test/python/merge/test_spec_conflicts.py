"""Typed conflicts, resolution tables and durable requests: the spec's retail walkthrough from snapshot 4 to 7."""
from decimal import Decimal

import duckdb
import pytest

from differential_testing import refused, repository_state, scalar
from retail_walkthrough import (
    AFTER_PRICING,
    NOOP_ATTACHED,
    PRICE_DECISION_ROWS,
    PRICE_DECISIONS,
    RESOLUTIONS,
    merge_cleanup,
    merge_pricing,
    pricing,
)
from three_way import diverge, merge_sql, preview_sql

MERGE_PRICING = f"""SELECT branch_name, snapshot_id, merge_action
FROM differential_merge_branch('retail', 'main', 'pricing', 'main',
    request_id        => 'merge-pricing',
    resolution_tables => {RESOLUTIONS})"""


def test_spec_walkthrough_to_snapshot_6(con):
    pricing(con)
    assert con.execute("SELECT snapshot_id, parent_snapshot_ids FROM differential_snapshots('retail') ORDER BY 1").fetchall() == [
        (1, []), (2, [1]), (3, [1]), (4, [3, 2]), (5, [4]), (6, [4])]


def test_spec_conflict_details(con):
    pricing(con)
    assert con.execute(
        """SELECT c.key[1].integer_value AS order_id, c.kind, c.columns
        FROM (SELECT unnest(conflict_details) AS c
              FROM differential_merge_branch_preview('retail', 'main', 'pricing'))"""
    ).fetchall() == [(5, "cell", ["amount"]), (7, "delete_update", ["amount"])]
    # Order 6 was touched by both sides in different cells: no conflict.
    assert scalar(con, "SELECT conflicts FROM differential_merge_branch_preview('retail', 'main', 'pricing')") == 2


def test_conflict_details_carry_typed_values_and_presence_flags(con):
    pricing(con)
    details = scalar(con, "SELECT conflict_details FROM differential_merge_branch_preview('retail', 'main', 'pricing')")
    assert [d["key"][0]["integer_value"] for d in details] == [5, 7]
    five, seven = details
    for detail in details:
        (key,) = detail["key"]
        assert key["column_name"] == "order_id" and key["sql_type"] == "INTEGER" and key["is_null"] is False
        assert key["text_value"] == str(key["integer_value"])
        assert [cell["column_name"] for cell in detail["cells"]] == ["amount"]

    assert (five["kind"], five["in_base"], five["in_ours"], five["in_theirs"]) == ("cell", True, True, True)
    (cell,) = five["cells"]
    assert [cell[side]["text_value"] for side in ("base", "ours", "theirs")] == ["15.00", "16.50", "18.00"]
    assert [cell[side]["is_null"] for side in ("base", "ours", "theirs")] == [False, False, False]
    assert all(cell[side]["column_name"] == "amount" for side in ("base", "ours", "theirs"))

    # Main deleted order 7: ours has no row, which is not a row of NULLs.
    assert (seven["kind"], seven["in_base"], seven["in_ours"], seven["in_theirs"]) == ("delete_update", True, False, True)
    (cell,) = seven["cells"]
    assert cell["base"]["text_value"] == "12.00" and cell["base"]["is_null"] is False
    assert cell["ours"]["is_null"] is True and cell["ours"]["text_value"] is None
    assert cell["theirs"]["text_value"] == "13.50" and cell["theirs"]["is_null"] is False


def test_spec_time_travel_on_the_three_inputs(con):
    pricing(con)
    assert con.execute(
        """SELECT order_id, b.amount AS base, o.amount AS ours, t.amount AS theirs
        FROM (FROM retail.orders AT (VERSION => 4)) AS b
        FULL JOIN (FROM retail.orders AT (VERSION => 6)) AS o USING (order_id)
        FULL JOIN (FROM retail.orders AT (VERSION => 5)) AS t USING (order_id)
        WHERE order_id IN (5, 7)
        ORDER BY order_id"""
    ).fetchall() == [(5, Decimal("15.00"), Decimal("16.50"), Decimal("18.00")), (7, Decimal("12.00"), None, Decimal("13.50"))]


def test_spec_unresolved_merge_refuses_and_changes_nothing(con):
    pricing(con)
    con.execute("DETACH retail")
    before = repository_state(con)
    message = refused(
        con,
        "SELECT * FROM differential_merge_branch('retail', 'main', 'pricing', 'main', "
        "request_id => 'merge-pricing-unresolved')",
        "merge_conflict",
    )
    assert message.startswith("Invalid Input Error: [differential:merge_conflict] 2 conflicting rows; use "
                              "differential_merge_snapshots_preview"), message
    assert repository_state(con) == before


def test_spec_preview_with_decisions(con):
    pricing(con)
    con.execute("DETACH retail")
    con.execute(PRICE_DECISIONS)
    con.execute(PRICE_DECISION_ROWS)
    assert scalar(con, "SELECT current_database()") == "memory"
    assert con.execute(
        f"""SELECT conflicts, resolved_conflicts, validation_state
        FROM differential_merge_branch_preview('retail', 'main', 'pricing', validate => true,
            resolution_tables => {RESOLUTIONS})"""
    ).fetchall() == [(0, 2, "valid")]


def test_spec_merge_with_decisions(con):
    pricing(con)
    con.execute("DETACH retail")
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'pricing', 'main', "
                 "request_id => 'merge-pricing-unresolved')", "merge_conflict")
    con.execute(PRICE_DECISIONS)
    con.execute(PRICE_DECISION_ROWS)
    assert con.execute(MERGE_PRICING).fetchall() == [("main", 7, "merged")]
    con.execute("ATTACH 'differential:retail' AS retail")
    assert con.execute("FROM retail.orders ORDER BY order_id").fetchall() == AFTER_PRICING
    assert scalar(con, "SELECT parent_snapshot_ids FROM differential_snapshots('retail') WHERE snapshot_id = 7") == [6, 5]


def test_spec_resolutions_are_kept_as_an_audit(con):
    merge_pricing(con)
    assert con.execute(
        """SELECT table_name, key[1].integer_value AS order_id, action, columns
        FROM differential_merge_resolutions('retail', 'merge-pricing')"""
    ).fetchall() == [("orders", 5, "cells", {"amount": "custom"}), ("orders", 7, "ours", None)]


def test_decisions_are_frozen_with_the_request(con):
    merge_pricing(con)
    con.execute("DETACH retail")
    con.execute("DROP TABLE price_decisions")
    before = repository_state(con)
    assert con.execute(MERGE_PRICING).fetchall() == [("main", 7, "merged")]
    assert repository_state(con) == before
    # Changed decisions do not change the request either.
    con.execute(PRICE_DECISIONS)
    con.execute("INSERT INTO price_decisions VALUES (5, NULL, NULL, NULL, 'cells', map {'amount': 'theirs'}), "
                "(7, NULL, NULL, NULL, 'theirs', NULL)")
    assert con.execute(MERGE_PRICING).fetchall() == [("main", 7, "merged")]
    con.execute("ATTACH 'differential:retail' AS retail")
    assert con.execute("FROM retail.orders ORDER BY order_id").fetchall() == AFTER_PRICING


def test_spec_request_table(con):
    merge_pricing(con)
    assert con.execute(
        """SELECT request_id, state, merge_action, destination,
               base_snapshot_id AS base, ours_snapshot_id AS ours, theirs_snapshot_id AS theirs,
               result_snapshot_id AS result
        FROM differential_merge_requests('retail')
        ORDER BY created_at"""
    ).fetchall() == [
        ("merge-cleanup", "complete", "merged", "main", 1, 3, 2, 4),
        ("update-cleanup", "complete", "fast_forward", "cleanup", 2, 2, 4, 4),
        ("noop-attached", "pending", "already_up_to_date", "main", 4, 4, 4, None),
        ("merge-cleanup-again", "complete", "already_up_to_date", "main", 4, 4, 4, 4),
        ("merge-pricing-unresolved", "pending", "merged", "main", 4, 6, 5, None),
        ("merge-pricing", "complete", "merged", "main", 4, 6, 5, 7),
    ]
    assert con.execute(
        "SELECT request_id, last_error_code FROM differential_merge_requests('retail') "
        "WHERE state = 'pending' ORDER BY created_at"
    ).fetchall() == [("noop-attached", "active_attachment_or_transaction"), ("merge-pricing-unresolved", "merge_conflict")]


def test_spec_abort_a_pending_request(con):
    merge_pricing(con)
    con.execute("DETACH retail")
    con.execute(
        """SET VARIABLE stale = (SELECT operation_id
                      FROM differential_merge_requests('retail', request_id => 'merge-pricing-unresolved'))"""
    )
    abort = ("SELECT state, snapshot_id "
             "FROM differential_abort_merge('retail', getvariable('stale'), request_id => 'abort-unresolved')")
    before = repository_state(con)
    assert con.execute(abort).fetchall() == [("aborted", None)]
    assert repository_state(con) == before
    # An aborted request is terminal.
    refused(con, "SELECT * FROM differential_merge_branch('retail', 'main', 'pricing', 'main', "
                 "request_id => 'merge-pricing-unresolved')", "merge_aborted")
    assert repository_state(con) == before
    # The abort is a request too: the same call again returns the same answer.
    assert con.execute(abort).fetchall() == [("aborted", None)]
    # A completed request still replays its result.
    assert con.execute(MERGE_PRICING).fetchall() == [("main", 7, "merged")]


# Resolution tables that are refused as a whole. Each entry: the statements creating the table in
# the default `memory` catalog, and the table the mapping names.
ORDER_COLUMNS = "order_id INTEGER, customer VARCHAR, amount DECIMAL(10, 2), status VARCHAR"
CONTROL_COLUMNS = "_merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR)"
GOOD_5 = "(5, NULL, 17.00, NULL, 'cells', map {'amount': 'custom'})"
GOOD_7 = "(7, NULL, NULL, NULL, 'ours', NULL)"


def decisions(*rows):
    return [f"CREATE TABLE d ({ORDER_COLUMNS}, {CONTROL_COLUMNS})", "INSERT INTO d VALUES " + ", ".join(rows)]


INVALID_RESOLUTIONS = {
    "missing_table": ([], "memory.main.no_such_decisions"),
    "temporary_table": ([f"CREATE TEMP TABLE d ({ORDER_COLUMNS}, {CONTROL_COLUMNS})",
                         f"INSERT INTO d VALUES {GOOD_5}, {GOOD_7}"], "temp.main.d"),
    "view": (decisions(GOOD_5, GOOD_7) + ["CREATE VIEW d_view AS FROM d"], "memory.main.d_view"),
    "missing_column": ([f"CREATE TABLE d (order_id INTEGER, customer VARCHAR, amount DECIMAL(10, 2), {CONTROL_COLUMNS})",
                        "INSERT INTO d VALUES (5, NULL, 17.00, 'cells', map {'amount': 'custom'}), "
                        "(7, NULL, NULL, 'ours', NULL)"], "memory.main.d"),
    "extra_column": ([f"CREATE TABLE d ({ORDER_COLUMNS}, note VARCHAR, {CONTROL_COLUMNS})",
                      "INSERT INTO d VALUES (5, NULL, 17.00, NULL, NULL, 'cells', map {'amount': 'custom'}), "
                      "(7, NULL, NULL, NULL, NULL, 'ours', NULL)"], "memory.main.d"),
    "missing_control_column": ([f"CREATE TABLE d ({ORDER_COLUMNS}, _merge_action VARCHAR)",
                                "INSERT INTO d VALUES (7, NULL, NULL, NULL, 'ours')"], "memory.main.d"),
    "cells_for_delete_update": (decisions(GOOD_5, "(7, NULL, 13.50, NULL, 'cells', map {'amount': 'theirs'})"),
                                "memory.main.d"),
    "unknown_action": (decisions(GOOD_5, "(7, NULL, NULL, NULL, 'maybe', NULL)"), "memory.main.d"),
    "unknown_column_choice": (decisions("(5, NULL, 17.00, NULL, 'cells', map {'amount': 'mine'})", GOOD_7),
                              "memory.main.d"),
    "key_of_a_row_without_conflict": (decisions(GOOD_5, GOOD_7, "(6, NULL, NULL, NULL, 'ours', NULL)"), "memory.main.d"),
    "key_of_no_row": (decisions(GOOD_5, GOOD_7, "(99, NULL, NULL, NULL, 'theirs', NULL)"), "memory.main.d"),
}


@pytest.mark.parametrize("case", list(INVALID_RESOLUTIONS))
def test_invalid_resolution_tables_are_refused(con, case):
    statements, table = INVALID_RESOLUTIONS[case]
    pricing(con)
    con.execute("DETACH retail")
    for statement in statements:
        con.execute(statement)
    mapping = f"map {{'main.orders': '{table}'}}"
    before = repository_state(con)
    refused(con, f"SELECT * FROM differential_merge_branch_preview('retail', 'main', 'pricing', resolution_tables => {mapping})",
            "merge_resolution_invalid")
    refused(con, f"SELECT * FROM differential_merge_branch('retail', 'main', 'pricing', 'main', resolution_tables => {mapping})",
            "merge_resolution_invalid")
    refused(con, f"SELECT * FROM differential_merge_branch('retail', 'main', 'pricing', 'main', request_id => 'bad-{case}', "
                 f"resolution_tables => {mapping})", "merge_resolution_invalid")
    assert repository_state(con) == before


def test_incomplete_decisions_leave_the_merge_failing(con):
    pricing(con)
    con.execute("DETACH retail")
    for statement in decisions(GOOD_5):
        con.execute(statement)
    mapping = "map {'main.orders': 'memory.main.d'}"
    assert con.execute(
        f"SELECT conflicts, resolved_conflicts FROM differential_merge_branch_preview('retail', 'main', 'pricing', "
        f"resolution_tables => {mapping})"
    ).fetchall() == [(1, 1)]
    before = repository_state(con)
    refused(con, f"SELECT * FROM differential_merge_branch('retail', 'main', 'pricing', 'main', resolution_tables => {mapping})",
            "merge_conflict")
    assert repository_state(con) == before


def test_insert_insert_resolved_with_theirs_delete_and_custom(con):
    diverge(
        con,
        base=["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (0, 'base')"],
        ours=["INSERT INTO t VALUES (1, 'o1'), (2, 'o2'), (3, 'o3')"],
        theirs=["INSERT INTO t VALUES (1, 't1'), (2, 't2'), (3, 't3')"],
    )
    before = repository_state(con)
    refused(con, merge_sql(), "merge_conflict")
    assert repository_state(con) == before
    assert con.execute(
        "SELECT c.key[1].integer_value, c.kind, c.in_base, c.in_ours, c.in_theirs "
        "FROM (SELECT unnest(conflict_details) AS c FROM differential_merge_branch_preview('shop', 'main', 'b'))"
    ).fetchall() == [(1, "insert_insert", False, True, True), (2, "insert_insert", False, True, True),
                     (3, "insert_insert", False, True, True)]
    con.execute("CREATE TABLE decisions (id INTEGER, v VARCHAR, _merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO decisions VALUES (1, NULL, 'theirs', NULL), (2, NULL, 'delete', NULL), (3, 'c3', 'custom', NULL)")
    mapping = "map {'main.t': 'memory.main.decisions'}"
    assert con.execute(preview_sql("conflicts, resolved_conflicts", resolution_tables=mapping)).fetchall() == [(0, 3)]
    assert con.execute(merge_sql(resolution_tables=mapping)).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("FROM shop.t ORDER BY id").fetchall() == [(0, "base"), (1, "t1"), (3, "c3")]


def test_delete_update_resolved_with_theirs_brings_the_row_back(con):
    diverge(
        con,
        base=["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR, n INTEGER)", "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)"],
        ours=["DELETE FROM t WHERE id = 1", "UPDATE t SET n = 20 WHERE id = 2"],
        theirs=["UPDATE t SET v = 'changed' WHERE id = 1"],
    )
    assert con.execute(preview_sql("conflicts")).fetchall() == [(1,)]
    con.execute("CREATE TABLE decisions (id INTEGER, v VARCHAR, n INTEGER, _merge_action VARCHAR, "
                "_merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO decisions VALUES (1, NULL, NULL, 'theirs', NULL)")
    assert con.execute(merge_sql(resolution_tables="map {'main.t': 'memory.main.decisions'}")).fetchall() == [
        ("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("FROM shop.t ORDER BY id").fetchall() == [(1, "changed", 1), (2, "b", 20)]


def test_cell_decisions_leave_the_other_cells_to_the_merge(con):
    diverge(
        con,
        base=["CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c INTEGER)", "INSERT INTO t VALUES (1, 0, 0, 0)"],
        ours=["UPDATE t SET a = 1, b = 1 WHERE id = 1"],
        theirs=["UPDATE t SET a = 2, b = 2, c = 2 WHERE id = 1"],
    )
    assert con.execute(
        "SELECT c.kind, c.columns FROM (SELECT unnest(conflict_details) AS c "
        "FROM differential_merge_branch_preview('shop', 'main', 'b'))"
    ).fetchall() == [("cell", ["a", "b"])]
    con.execute("CREATE TABLE decisions (id INTEGER, a INTEGER, b INTEGER, c INTEGER, _merge_action VARCHAR, "
                "_merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO decisions VALUES (1, NULL, NULL, NULL, 'cells', map {'a': 'ours', 'b': 'theirs'})")
    assert con.execute(merge_sql(resolution_tables="map {'main.t': 'memory.main.decisions'}")).fetchall() == [
        ("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("FROM shop.t").fetchall() == [(1, 1, 2, 2)]


def test_spec_merge_into_attached_main_is_refused(con):
    merge_cleanup(con)
    con.execute("ATTACH 'differential:retail' AS retail")
    before = repository_state(con)
    message = refused(con, NOOP_ATTACHED, "active_attachment_or_transaction")
    # The spec's line. Its "Invalid Error" type reaches Python as the plain duckdb.Error, without a prefix.
    assert message.startswith("[differential:active_attachment_or_transaction] Merge target must "
                              "be detached with no transaction holding it"), message
    with pytest.raises(duckdb.Error) as info:
        con.execute("SELECT * FROM differential_merge_branch('retail', 'main', 'cleanup', 'main')")
    assert type(info.value) is duckdb.Error
    assert repository_state(con) == before


def test_merge_cleanup_steps_leave_four_requests(con):
    merge_cleanup(con)
    assert [r[0] for r in con.execute("SELECT request_id FROM differential_merge_requests('retail') ORDER BY created_at").fetchall()] == [
        "merge-cleanup", "update-cleanup", "noop-attached", "merge-cleanup-again"]
