"""The 1.1 specification's retail walkthrough as cumulative steps, for the tests that continue it.

Each step runs the spec's SQL in order, asserts the snapshot numbers and results the spec gives,
and leaves the attachments as the spec has them at that point. Every later step runs the earlier
ones first, so a test starts from a fresh repository and calls only the step it needs."""
from decimal import Decimal

from differential_testing import refused, scalar
from test_merge_branch import retail

RESOLUTIONS = "map {'main.orders': 'memory.main.price_decisions'}"

PRICE_DECISIONS = """CREATE TABLE price_decisions (
    order_id INTEGER, customer VARCHAR, amount DECIMAL(10, 2), status VARCHAR,
    _merge_action  VARCHAR,
    _merge_columns MAP(VARCHAR, VARCHAR)
)"""

PRICE_DECISION_ROWS = """INSERT INTO price_decisions VALUES
    (5, NULL, 17.00, NULL, 'cells', map {'amount': 'custom'}),
    (7, NULL, NULL,  NULL, 'ours',  NULL)"""

NOOP_ATTACHED = ("SELECT branch_name, snapshot_id, merge_action "
                 "FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'noop-attached')")

AFTER_PRICING = [
    (1, "Ada", Decimal("40.00"), "refunded"),
    (2, "Lin", Decimal("54.00"), "paid"),
    (4, "Kim", Decimal("20.00"), "paid"),
    (5, "Max", Decimal("17.00"), "paid"),
    (6, "Sam", Decimal("33.00"), "paid"),
]


def merge_cleanup(con):
    """Snapshot 4 (cleanup merged into main), the fast-forward of cleanup, the refused no-op while
    main is attached and the no-op itself: requests merge-cleanup, update-cleanup, noop-attached and
    merge-cleanup-again. Ends with main and cleanup detached."""
    retail(con)  # snapshots 1 to 3; main and cleanup attached
    con.execute("DETACH retail")
    assert con.execute(
        """SELECT branch_name, snapshot_id, merge_action
        FROM differential_merge_branch('retail', 'main', 'cleanup', 'main',
            request_id                  => 'merge-cleanup',
            expected_base_snapshot_id   => 1,
            expected_ours_snapshot_id   => 3,
            expected_theirs_snapshot_id => 2)"""
    ).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:retail' AS retail")
    con.execute("DETACH cleanup")
    assert con.execute(
        "SELECT branch_name, snapshot_id, merge_action "
        "FROM differential_merge_branch('retail', 'cleanup', 'main', 'cleanup', request_id => 'update-cleanup')"
    ).fetchall() == [("cleanup", 4, "fast_forward")]
    refused(con, NOOP_ATTACHED, "active_attachment_or_transaction")
    con.execute("DETACH retail")
    assert con.execute(
        "SELECT branch_name, snapshot_id, merge_action "
        "FROM differential_merge_branch('retail', 'main', 'cleanup', 'main', request_id => 'merge-cleanup-again')"
    ).fetchall() == [("main", 4, "already_up_to_date")]


def pricing(con):
    """The pricing branch (snapshot 5, forked from 4) and main's tuesday (snapshot 6): order 5 is a
    cell conflict, order 7 a delete_update conflict, order 6 merges. Ends with main and pricing attached."""
    merge_cleanup(con)
    con.execute("CALL differential_create_branch('retail', 'pricing')")
    con.execute("ATTACH 'differential:retail' AS pricing (BRANCH 'pricing')")
    con.execute("UPDATE pricing.orders SET amount = 18.00 WHERE order_id = 5")
    con.execute("UPDATE pricing.orders SET amount = 13.50 WHERE order_id = 7")
    con.execute("UPDATE pricing.orders SET amount = 33.00 WHERE order_id = 6")
    assert scalar(con, "CALL differential_create_snapshot('pricing', name => 'new_prices')") == 5
    con.execute("ATTACH 'differential:retail' AS retail")
    con.execute("UPDATE retail.orders SET amount = 16.50 WHERE order_id = 5")
    con.execute("DELETE FROM retail.orders WHERE order_id = 7")
    con.execute("UPDATE retail.orders SET status = 'paid' WHERE order_id = 6")
    assert scalar(con, "CALL differential_create_snapshot('retail', name => 'tuesday')") == 6


def merge_pricing(con):
    """The refused merge-pricing-unresolved, the price_decisions table in the default `memory`
    catalog, and merge-pricing (snapshot 7). Ends with main and pricing attached."""
    pricing(con)
    con.execute("DETACH retail")
    refused(
        con,
        "SELECT * FROM differential_merge_branch('retail', 'main', 'pricing', 'main', "
        "request_id => 'merge-pricing-unresolved')",
        "merge_conflict",
    )
    con.execute(PRICE_DECISIONS)
    con.execute(PRICE_DECISION_ROWS)
    assert con.execute(
        f"""SELECT branch_name, snapshot_id, merge_action
        FROM differential_merge_branch('retail', 'main', 'pricing', 'main',
            request_id        => 'merge-pricing',
            resolution_tables => {RESOLUTIONS})"""
    ).fetchall() == [("main", 7, "merged")]
    con.execute("ATTACH 'differential:retail' AS retail")
    assert con.execute("FROM retail.orders ORDER BY order_id").fetchall() == AFTER_PRICING


def channels(con):
    """Main's view open_orders and table import_log (snapshot 8), the channels branch adding a
    column and the customers table (9), main's order 8 (10). Ends with main and channels attached."""
    merge_pricing(con)
    con.execute("USE retail")
    con.execute(
        """CREATE VIEW open_orders AS
        SELECT order_id, customer, amount FROM orders WHERE status = 'open'"""
    )
    con.execute("CREATE TABLE import_log (batch_id INTEGER PRIMARY KEY, note VARCHAR)")
    con.execute("USE memory")
    assert scalar(con, "CALL differential_create_snapshot('retail', name => 'reporting')") == 8
    con.execute("CALL differential_create_branch('retail', 'channels')")
    con.execute("ATTACH 'differential:retail' AS channels (BRANCH 'channels')")
    con.execute("ALTER TABLE channels.orders ADD COLUMN channel VARCHAR")
    con.execute("UPDATE channels.orders SET channel = 'web' WHERE order_id IN (1, 2, 4)")
    con.execute("CREATE TABLE channels.customers (customer VARCHAR PRIMARY KEY, country VARCHAR)")
    con.execute("INSERT INTO channels.customers VALUES ('Ada', 'UK'), ('Lin', 'SG'), ('Max', 'DE')")
    assert scalar(con, "CALL differential_create_snapshot('channels')") == 9
    con.execute("INSERT INTO retail.orders VALUES (8, 'Ada', 22.00, 'open')")
    assert scalar(con, "CALL differential_create_snapshot('retail')") == 10


def merge_channels(con):
    """merge-channels in additive mode (snapshot 11). Ends with main and channels attached."""
    channels(con)
    con.execute("DETACH retail")
    assert con.execute(
        """SELECT branch_name, snapshot_id, merge_action
        FROM differential_merge_branch('retail', 'main', 'channels', 'main',
            schema_mode => 'additive', request_id => 'merge-channels')"""
    ).fetchall() == [("main", 11, "merged")]
    con.execute("ATTACH 'differential:retail' AS retail")


def tidy(con):
    """The tidy branch dropping import_log and replacing open_orders (snapshot 12), and main's
    channel for order 8 (13). Ends with main, channels and tidy attached."""
    merge_channels(con)
    con.execute("CALL differential_create_branch('retail', 'tidy')")
    con.execute("ATTACH 'differential:retail' AS tidy (BRANCH 'tidy')")
    con.execute("DROP TABLE tidy.import_log")
    con.execute("USE tidy")
    con.execute(
        """CREATE OR REPLACE VIEW open_orders AS
        SELECT order_id, customer, amount, channel FROM orders WHERE status = 'open'"""
    )
    con.execute("USE memory")
    assert scalar(con, "CALL differential_create_snapshot('tidy')") == 12
    con.execute("UPDATE retail.orders SET channel = 'store' WHERE order_id = 8")
    assert scalar(con, "CALL differential_create_snapshot('retail')") == 13
