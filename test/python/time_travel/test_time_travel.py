"""AT (VERSION | TIMESTAMP) on tables of a differential database, on other data than the spec's."""
import datetime

import duckdb
import pytest

from differential_testing import refused, scalar


def setup_history(con):
    con.execute("ATTACH 'differential:sales' AS sales")
    con.execute("CREATE TABLE sales.orders AS SELECT range AS id, range * 10 AS amount FROM range(1000)")
    con.execute("CALL differential_create_snapshot('sales')")
    con.execute("DELETE FROM sales.orders WHERE id % 2 = 0")
    con.execute("CREATE TABLE sales.refunds AS SELECT 7 AS id")
    con.execute("CALL differential_create_snapshot('sales')")
    con.execute("UPDATE sales.orders SET amount = 0")


def test_versions_read_their_own_state(con):
    setup_history(con)
    assert scalar(con, "SELECT count(*) FROM sales.orders") == 500
    assert scalar(con, "SELECT sum(amount) FROM sales.orders") == 0
    assert scalar(con, "SELECT count(*) FROM sales.orders AT (VERSION => 1)") == 1000
    assert scalar(con, "SELECT sum(amount) FROM sales.orders AT (VERSION => 1)") == 4995000
    assert scalar(con, "SELECT sum(amount) FROM sales.orders AT (VERSION => 2)") == 2500000
    # Joins across versions and with the head in one query.
    assert (
        scalar(
            con,
            "SELECT count(*) FROM sales.orders o1 AT (VERSION => 1) "
            "JOIN sales.orders o2 AT (VERSION => 2) USING (id) JOIN sales.orders o3 USING (id)",
        )
        == 500
    )
    # A table that did not exist yet is not found in the older version: DuckDB's own catalog error.
    with pytest.raises(duckdb.CatalogException, match="refunds"):
        con.execute("SELECT * FROM sales.refunds AT (VERSION => 1)")
    assert scalar(con, "SELECT id FROM sales.refunds AT (VERSION => 2)") == 7


def test_timestamp_picks_the_newest_snapshot_at_or_before(con):
    setup_history(con)
    rows = con.execute("SELECT snapshot_id, created_at FROM sales.snapshots() ORDER BY 1").fetchall()
    second = rows[1][1]
    assert scalar(con, "SELECT count(*) FROM sales.orders AT (TIMESTAMP => ?)", [second]) == 500
    assert (
        scalar(
            con,
            "SELECT count(*) FROM sales.orders AT (TIMESTAMP => ?)",
            [second - datetime.timedelta(microseconds=1)],
        )
        == 1000
    )
    refused(
        con,
        "SELECT count(*) FROM sales.orders AT (TIMESTAMP => TIMESTAMPTZ '2000-01-01 00:00:00+00')",
        "snapshot_not_found",
    )


def test_unknown_versions_are_refused(con):
    setup_history(con)
    message = refused(con, "SELECT * FROM sales.orders AT (VERSION => 99)", "snapshot_not_found")
    assert "sales.snapshots()" in message
    refused(con, "SELECT * FROM sales.orders AT (VERSION => 'abc')", "invalid_at_clause")


def test_snapshot_attachments_are_hidden_and_reused(con):
    setup_history(con)
    for _ in range(3):
        assert scalar(con, "SELECT count(*) FROM sales.orders AT (VERSION => 1)") == 1000
    names = [r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()]
    assert not any("__differential" in n for n in names), names


def test_attach_a_snapshot_read_only(con, repository):
    setup_history(con)
    con.execute("ATTACH 'differential:sales' AS first (SNAPSHOT 1)")
    assert scalar(con, "SELECT count(*) FROM first.orders") == 1000
    # DuckDB's own refusal for a read-only attachment.
    with pytest.raises(duckdb.InvalidInputException, match='database "first" which is attached in read-only mode'):
        con.execute("DELETE FROM first.orders")
    assert scalar(con, "SELECT count(*) FROM first.orders") == 1000


def test_snapshot_attachments_are_released_when_the_database_is_detached(con):
    setup_history(con)
    open_snapshots = "SELECT snapshot_id FROM differential_snapshots('sales') WHERE open_in_process ORDER BY 1"
    assert con.execute(open_snapshots).fetchall() == []
    assert scalar(con, "SELECT count(*) FROM sales.orders AT (VERSION => 1)") == 1000
    assert scalar(con, "SELECT count(*) FROM sales.orders AT (VERSION => 2)") == 500
    assert con.execute(open_snapshots).fetchall() == [(1,), (2,)]
    con.execute("ATTACH 'differential:sales' AS other_view (SNAPSHOT 2)")
    con.execute("DETACH sales")
    # Another attachment of the database is left, so time travel keeps its snapshots.
    assert con.execute(open_snapshots).fetchall() == [(1,), (2,)]
    con.execute("DETACH other_view")
    assert con.execute(open_snapshots).fetchall() == []
