"""Schema modes strict, additive and catalog: the spec's walkthrough from snapshot 8 to 14, and each rule on a small database."""
from decimal import Decimal

import pytest

from differential_testing import refused, repository_state, scalar
from retail_walkthrough import channels, merge_channels, tidy
from three_way import diverge, merge_sql, preview_sql

ADDITIVE_PREVIEW = """SELECT object_name, schema_changes, table_action, conflicts, validation_state
FROM differential_merge_branch_preview('retail', 'main', 'channels',
    schema_mode => 'additive', validate => true)"""

CATALOG_PREVIEW = """SELECT object_type, object_name, table_action, view_change.action AS view_action,
       schema_conflicts, validation_state
FROM differential_merge_branch_preview('retail', 'main', 'tidy',
    schema_mode => 'catalog', validate => true)"""


def test_spec_strict_mode_refuses_schema_changes(con):
    channels(con)
    message = refused(con, "SELECT * FROM differential_merge_branch_preview('retail', 'main', 'channels')", "merge_unsupported")
    assert "schema mismatch" in message, message
    con.execute("DETACH retail")
    before = repository_state(con)
    for mode in ("", ", schema_mode => 'strict'"):
        message = refused(con, f"SELECT * FROM differential_merge_branch('retail', 'main', 'channels', 'main'{mode})",
                          "merge_unsupported")
        assert "schema mismatch" in message, message
    assert repository_state(con) == before


def test_spec_additive_preview(con):
    channels(con)
    assert con.execute(ADDITIVE_PREVIEW).fetchall() == [
        ("customers", [], "add", 0, "valid"),
        ("import_log", [], None, 0, "valid"),
        ("orders", [{"column_name": "channel", "source": "theirs", "sql_type": "VARCHAR", "action": "add"}], None, 0, "valid"),
    ]


def test_spec_additive_merge(con):
    merge_channels(con)  # the spec's merge block, asserting ('main', 11, 'merged')
    assert con.execute("FROM retail.orders ORDER BY order_id").fetchall() == [
        (1, "Ada", Decimal("40.00"), "refunded", "web"),
        (2, "Lin", Decimal("54.00"), "paid", "web"),
        (4, "Kim", Decimal("20.00"), "paid", "web"),
        (5, "Max", Decimal("17.00"), "paid", None),
        (6, "Sam", Decimal("33.00"), "paid", None),
        (8, "Ada", Decimal("22.00"), "open", None),
    ]
    # The customers table came over with its definition, primary key and rows.
    assert con.execute("FROM retail.customers ORDER BY customer").fetchall() == [("Ada", "UK"), ("Lin", "SG"), ("Max", "DE")]
    assert con.execute(
        "SELECT constraint_column_names FROM duckdb_constraints() "
        "WHERE database_name = 'retail' AND table_name = 'customers' AND constraint_type = 'PRIMARY KEY'"
    ).fetchall() == [(["customer"],)]
    # Main's view and log table are still there.
    assert con.execute("FROM retail.open_orders").fetchall() == [(8, "Ada", Decimal("22.00"))]
    assert scalar(con, "SELECT parent_snapshot_ids FROM differential_snapshots('retail') WHERE snapshot_id = 11") == [10, 9]


def test_spec_catalog_preview(con):
    tidy(con)
    assert con.execute(CATALOG_PREVIEW).fetchall() == [
        ("table", "customers", None, None, 0, "valid"),
        ("table", "import_log", "drop", None, 0, "valid"),
        ("table", "orders", None, None, 0, "valid"),
        ("view", "open_orders", None, "replace", 0, "valid"),
    ]


def test_spec_catalog_merge(con):
    tidy(con)
    con.execute("DETACH retail")
    assert con.execute(
        """SELECT branch_name, snapshot_id, merge_action
        FROM differential_merge_branch('retail', 'main', 'tidy', 'main',
            schema_mode => 'catalog', request_id => 'merge-tidy')"""
    ).fetchall() == [("main", 14, "merged")]
    con.execute("ATTACH 'differential:retail' AS retail")
    assert con.execute("FROM retail.open_orders").fetchall() == [(8, "Ada", Decimal("22.00"), "store")]
    assert con.execute("SHOW TABLES FROM retail").fetchall() == [("customers",), ("open_orders",), ("orders",)]


def test_spec_catalog_changes_need_catalog_mode(con):
    tidy(con)
    con.execute("DETACH retail")
    before = repository_state(con)
    for mode in ("", ", schema_mode => 'additive'"):
        refused(con, f"SELECT * FROM differential_merge_branch('retail', 'main', 'tidy', 'main'{mode})", "merge_unsupported")
    assert repository_state(con) == before


def test_additive_merge_is_a_request_like_any_other(con):
    merge_channels(con)
    assert con.execute(
        "SELECT state, merge_action, result_snapshot_id FROM differential_merge_requests('retail') WHERE request_id = 'merge-channels'"
    ).fetchall() == [("complete", "merged", 11)]


# Additive mode, on a small database: t (id, v) with two rows on every side.

BASE = ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"]
OURS_EDIT = ["UPDATE t SET v = 'A' WHERE id = 1"]


def assert_refused(con, code, **options):
    """Merging b into main is refused with code, and the repository is left as it was."""
    before = repository_state(con)
    message = refused(con, merge_sql(**options), code)
    assert repository_state(con) == before
    return message


ADDITIVE_REFUSALS = {
    "not_null": ["ALTER TABLE t ADD COLUMN c INTEGER", "UPDATE t SET c = 0", "ALTER TABLE t ALTER COLUMN c SET NOT NULL"],
    "default": ["ALTER TABLE t ADD COLUMN c INTEGER DEFAULT 5"],
    "part_of_the_key": ["DROP TABLE t", "CREATE TABLE t (id INTEGER, c INTEGER, v VARCHAR, PRIMARY KEY (id, c))",
                        "INSERT INTO t VALUES (1, 0, 'a'), (2, 0, 'b')"],
}


@pytest.mark.parametrize("case", list(ADDITIVE_REFUSALS))
def test_additive_added_column_must_be_nullable_keyless_and_without_default(con, case):
    diverge(con, base=BASE, ours=OURS_EDIT, theirs=ADDITIVE_REFUSALS[case])
    refused(con, preview_sql("*", schema_mode="'additive'"), "merge_unsupported")
    assert_refused(con, "merge_unsupported", schema_mode="'additive'")
    assert_refused(con, "merge_unsupported", schema_mode="'catalog'")


def test_additive_same_column_added_on_both_sides_merges(con):
    diverge(
        con,
        base=BASE,
        ours=["ALTER TABLE t ADD COLUMN c VARCHAR", "UPDATE t SET c = 'x' WHERE id = 1"],
        theirs=["ALTER TABLE t ADD COLUMN c VARCHAR", "UPDATE t SET c = 'y' WHERE id = 2"],
    )
    assert con.execute(preview_sql("object_name, conflicts, schema_conflicts", schema_mode="'additive'")).fetchall() == [
        ("t", 0, 0)]
    assert con.execute(merge_sql(schema_mode="'additive'")).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("FROM shop.t ORDER BY id").fetchall() == [(1, "a", "x"), (2, "b", "y")]


def test_additive_same_column_added_with_different_types_is_a_schema_conflict(con):
    diverge(
        con,
        base=BASE,
        ours=["ALTER TABLE t ADD COLUMN c VARCHAR"],
        theirs=["ALTER TABLE t ADD COLUMN c INTEGER"],
    )
    assert con.execute(preview_sql("object_name, schema_conflicts", schema_mode="'additive'")).fetchall() == [("t", 1)]
    assert_refused(con, "merge_schema_conflict", schema_mode="'additive'")


def test_additive_same_table_added_with_different_definitions_is_a_schema_conflict(con):
    diverge(
        con,
        base=BASE,
        ours=["CREATE TABLE n (id INTEGER PRIMARY KEY, x VARCHAR)"],
        theirs=["CREATE TABLE n (id INTEGER PRIMARY KEY, x INTEGER)"],
    )
    assert_refused(con, "merge_schema_conflict", schema_mode="'additive'")


def test_additive_same_table_added_identically_merges_its_rows(con):
    diverge(
        con,
        base=BASE,
        ours=["CREATE TABLE n (id INTEGER PRIMARY KEY, x VARCHAR)", "INSERT INTO n VALUES (1, 'o')"],
        theirs=["CREATE TABLE n (id INTEGER PRIMARY KEY, x VARCHAR)", "INSERT INTO n VALUES (2, 't')"],
    )
    assert con.execute(merge_sql(schema_mode="'additive'")).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("FROM shop.n ORDER BY id").fetchall() == [(1, "o"), (2, "t")]


@pytest.mark.parametrize("mode", [None, "'strict'", "'additive'"])
def test_dropped_table_needs_catalog_mode(con, mode):
    diverge(
        con,
        base=BASE + ["CREATE TABLE gone (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO gone VALUES (1, 'x')"],
        ours=OURS_EDIT,
        theirs=["DROP TABLE gone"],
    )
    options = {} if mode is None else {"schema_mode": mode}
    refused(con, preview_sql("*", **options), "merge_unsupported")
    assert_refused(con, "merge_unsupported", **options)


# Catalog mode: removals that keep the other side's work, and whole-view changes.

GONE = BASE + ["CREATE TABLE gone (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO gone VALUES (1, 'x'), (2, 'y')"]


@pytest.mark.parametrize("dropping_side", ["ours", "theirs"])
def test_catalog_table_dropped_while_the_other_side_updated_it(con, dropping_side):
    drop = ["DROP TABLE gone", "UPDATE t SET v = 'A' WHERE id = 1"]
    edit = ["UPDATE gone SET v = 'z' WHERE id = 1"]
    diverge(con, base=GONE, ours=drop if dropping_side == "ours" else edit, theirs=edit if dropping_side == "ours" else drop)
    assert con.execute(
        preview_sql("object_name, schema_conflicts", schema_mode="'catalog'") + " WHERE object_name = 'gone'"
    ).fetchall() == [("gone", 1)]
    assert_refused(con, "table_delete_modify", schema_mode="'catalog'")


@pytest.mark.parametrize("dropping_side", ["ours", "theirs"])
def test_catalog_table_dropped_while_the_other_side_left_it_is_dropped(con, dropping_side):
    drop = ["DROP TABLE gone"]
    edit = ["UPDATE t SET v = 'B' WHERE id = 2"]
    diverge(con, base=GONE, ours=drop if dropping_side == "ours" else edit, theirs=edit if dropping_side == "ours" else drop)
    if dropping_side == "theirs":
        assert con.execute(
            preview_sql("object_name, table_action, schema_conflicts", schema_mode="'catalog'") + " WHERE object_name = 'gone'"
        ).fetchall() == [("gone", "drop", 0)]
    assert con.execute(merge_sql(schema_mode="'catalog'")).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("SHOW TABLES FROM shop").fetchall() == [("t",)]
    assert con.execute("FROM shop.t ORDER BY id").fetchall() == [(1, "a"), (2, "B")]


NOTED = ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR, note VARCHAR)", "INSERT INTO t VALUES (1, 'a', NULL), (2, 'b', 'n')"]


def test_catalog_column_dropped_while_the_other_side_changed_it(con):
    diverge(con, base=NOTED, ours=["ALTER TABLE t DROP COLUMN note"], theirs=["UPDATE t SET note = 'new' WHERE id = 1"])
    assert_refused(con, "column_delete_modify", schema_mode="'catalog'")


def test_catalog_column_dropped_while_the_other_side_left_it_is_dropped(con):
    diverge(con, base=NOTED, ours=["ALTER TABLE t DROP COLUMN note"],
            theirs=["UPDATE t SET v = 'B' WHERE id = 2", "INSERT INTO t VALUES (3, 'c', NULL)"])
    assert con.execute(merge_sql(schema_mode="'catalog'")).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("FROM shop.t ORDER BY id").fetchall() == [(1, "a"), (2, "B"), (3, "c")]


def test_catalog_column_dropped_needs_catalog_mode(con):
    diverge(con, base=NOTED, ours=["ALTER TABLE t DROP COLUMN note"], theirs=["UPDATE t SET v = 'B' WHERE id = 2"])
    assert_refused(con, "merge_unsupported", schema_mode="'additive'")


VIEWED = BASE + ["CREATE VIEW w AS SELECT id, v FROM t"]


def test_catalog_view_changed_differently_on_both_sides(con):
    diverge(con, base=VIEWED, ours=["CREATE OR REPLACE VIEW w AS SELECT id FROM t"],
            theirs=["CREATE OR REPLACE VIEW w AS SELECT v FROM t"])
    assert_refused(con, "view_definition", schema_mode="'catalog'")


@pytest.mark.parametrize("changing_side", ["ours", "theirs"])
def test_catalog_view_changed_on_one_side_wins(con, changing_side):
    change = ["CREATE OR REPLACE VIEW w AS SELECT id, v FROM t WHERE id > 1"]
    edit = ["INSERT INTO t VALUES (3, 'c')"]
    diverge(con, base=VIEWED, ours=change if changing_side == "ours" else edit,
            theirs=edit if changing_side == "ours" else change)
    if changing_side == "theirs":
        assert con.execute(
            preview_sql("object_type, view_change.action", schema_mode="'catalog'") + " WHERE object_name = 'w'"
        ).fetchall() == [("view", "replace")]
    assert con.execute(merge_sql(schema_mode="'catalog'")).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("FROM shop.w ORDER BY id").fetchall() == [(2, "b"), (3, "c")]


def test_catalog_view_referencing_a_column_dropped_by_the_other_side(con):
    diverge(
        con,
        base=NOTED + ["CREATE VIEW w AS SELECT id, v FROM t"],
        ours=["ALTER TABLE t DROP COLUMN note"],
        theirs=["CREATE OR REPLACE VIEW w AS SELECT id, v, note FROM t"],
    )
    assert_refused(con, "view_binding", schema_mode="'catalog'")


@pytest.mark.parametrize("mode", ["'additive'", "'catalog'"])
def test_star_view_that_would_gain_the_other_sides_column(con, mode):
    diverge(
        con,
        base=BASE + ["CREATE VIEW everything AS SELECT * FROM t"],
        ours=OURS_EDIT,
        theirs=["ALTER TABLE t ADD COLUMN c VARCHAR"],
    )
    assert_refused(con, "view_output", schema_mode=mode)


def test_catalog_new_view_on_one_side_is_added(con):
    diverge(con, base=BASE, ours=OURS_EDIT, theirs=["CREATE VIEW w AS SELECT id, v FROM t WHERE id = 1"])
    assert con.execute(merge_sql(schema_mode="'catalog'")).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("FROM shop.w").fetchall() == [(1, "A")]
