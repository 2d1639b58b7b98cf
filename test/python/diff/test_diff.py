"""differential_diff: the row diff of one table between two versions, streamed as typed rows."""
import duckdb
import pytest

from differential_testing import refused, repository_state, scalar


@pytest.fixture
def shop(con):
    """Snapshot 1: items and notes on main. Branch `fix` then changes items (snapshot 2); main moves on (3)."""
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items (id INTEGER PRIMARY KEY, name VARCHAR, price DECIMAL(10, 2))")
    con.execute("INSERT INTO shop.items SELECT i, 'item ' || i, i * 1.5 FROM range(1, 6) t(i)")
    con.execute("CREATE TABLE shop.notes (line VARCHAR, n INTEGER)")
    con.execute("INSERT INTO shop.notes VALUES ('a', 1), ('a', 1), ('b', 2)")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'fix')")
    con.execute("ATTACH 'differential:shop' AS fix (BRANCH 'fix')")
    con.execute("UPDATE fix.items SET price = 99 WHERE id = 2")
    con.execute("UPDATE fix.items SET name = NULL WHERE id = 3")
    con.execute("DELETE FROM fix.items WHERE id = 4")
    con.execute("INSERT INTO fix.items VALUES (10, 'new', 7)")
    con.execute("UPDATE fix.notes SET n = 3 WHERE line = 'b'")
    con.execute("DELETE FROM fix.notes WHERE rowid = (SELECT min(rowid) FROM fix.notes WHERE line = 'a')")
    con.execute("CREATE TABLE fix.fresh (k INTEGER PRIMARY KEY)")
    con.execute("INSERT INTO fix.fresh VALUES (1), (2)")
    con.execute("CALL differential_create_snapshot('fix')")
    con.execute("DETACH fix")
    con.execute("INSERT INTO shop.items VALUES (6, 'main only', 1)")
    con.execute("CALL differential_create_snapshot('shop')")
    return con


def test_rows_by_primary_key_with_typed_before_and_after(shop):
    rows = shop.execute("SELECT kind, key, before, after FROM differential_diff('shop', 1, 'fix', 'items')").fetchall()
    assert [(kind, key["id"]) for kind, key, _, _ in rows] == [
        ("update", 2), ("update", 3), ("delete", 4), ("insert", 10)]
    _, _, before, after = rows[0]
    assert (str(before["price"]), str(after["price"])) == ("3.00", "99.00")
    assert rows[1][3]["name"] is None and rows[2][3] is None and rows[3][2] is None
    types = dict(shop.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "
                              "differential_diff('shop', 1, 'fix', 'items'))").fetchall())
    assert types["key"] == "STRUCT(id INTEGER)"
    assert types["after"] == "STRUCT(id INTEGER, \"name\" VARCHAR, price DECIMAL(10,2))"


def test_versions_are_snapshot_ids_or_branch_heads(shop):
    # main's head (3) against the branch's head (2): main's own insert reads as a delete from main's side.
    by_branch = shop.execute("SELECT kind, key.id FROM differential_diff('shop', 'main', 'fix', 'items')").fetchall()
    by_id = shop.execute("SELECT kind, key.id FROM differential_diff('shop', 3, 2, 'ITEMS')").fetchall()
    assert by_branch == by_id and ("delete", 6) in by_branch
    assert shop.execute("SELECT count(*) FROM differential_diff('shop', 2, 2, 'items')").fetchone()[0] == 0


def test_a_table_on_one_side_is_all_inserts_or_all_deletes(shop):
    assert shop.execute("SELECT kind, key.k, before FROM differential_diff('shop', 1, 2, 'main.fresh')"
                        ).fetchall() == [("insert", 1, None), ("insert", 2, None)]
    assert [r[0] for r in shop.execute("SELECT kind FROM differential_diff('shop', 2, 1, 'fresh')").fetchall()] == [
        "delete", "delete"]


def test_a_table_without_primary_key_matches_whole_rows(shop):
    rows = shop.execute("SELECT kind, key, before, after FROM differential_diff('shop', 1, 2, 'notes')").fetchall()
    assert rows == [("delete", {"line": "a", "n": 1}, {"line": "a", "n": 1}, None),
                    ("delete", {"line": "b", "n": 2}, {"line": "b", "n": 2}, None),
                    ("insert", {"line": "b", "n": 3}, None, {"line": "b", "n": 3})]


def test_a_table_without_primary_key_and_other_columns_reads_as_replaced(con):
    """A dbt model that gained a column: no row of one version is a row of the other."""
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id INTEGER, v VARCHAR, gone INTEGER)")
    con.execute("INSERT INTO db.t VALUES (1, 'a', 7), (1, 'a', 7)")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CREATE OR REPLACE TABLE db.t AS SELECT 1 AS id, 'a' AS v, 2.5::DOUBLE AS extra")
    con.execute("CALL differential_create_snapshot('db')")
    rows = con.execute("SELECT kind, key, before, after FROM differential_diff('db', 1, 2, 't')").fetchall()
    assert rows == [
        ("insert", {"id": 1, "v": "a", "extra": 2.5, "gone": None}, None, {"id": 1, "v": "a", "extra": 2.5}),
        ("delete", {"id": 1, "v": "a", "extra": None, "gone": 7}, {"id": 1, "v": "a", "gone": 7}, None),
        ("delete", {"id": 1, "v": "a", "extra": None, "gone": 7}, {"id": 1, "v": "a", "gone": 7}, None)]
    con.execute("CREATE OR REPLACE TABLE db.t AS SELECT 'x' AS id")
    con.execute("CALL differential_create_snapshot('db')")
    message = refused(con, "SELECT * FROM differential_diff('db', 2, 3, 't')", "diff_unsupported")
    assert "'id'" in message and "type" in message


def test_changed_columns_make_every_row_an_update(con):
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id INTEGER PRIMARY KEY, v INTEGER)")
    con.execute("INSERT INTO db.t VALUES (1, 10), (2, 20)")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("ALTER TABLE db.t ADD COLUMN w VARCHAR")
    con.execute("CALL differential_create_snapshot('db')")
    rows = con.execute("SELECT kind, before, after FROM differential_diff('db', 1, 2, 't')").fetchall()
    assert rows == [("update", {"id": 1, "v": 10}, {"id": 1, "v": 10, "w": None}),
                    ("update", {"id": 2, "v": 20}, {"id": 2, "v": 20, "w": None})]


def test_the_diff_streams_a_large_table(con):
    """More rows than one vector, consumed lazily: a LIMIT stops reading, the full count is exact."""
    con.execute("ATTACH 'differential:big' AS big")
    con.execute("CREATE TABLE big.t (id BIGINT PRIMARY KEY, v BIGINT)")
    con.execute("INSERT INTO big.t SELECT range, range FROM range(300000)")
    con.execute("CALL differential_create_snapshot('big')")
    con.execute("UPDATE big.t SET v = v + 1 WHERE id % 3 = 0")
    con.execute("CALL differential_create_snapshot('big')")
    assert scalar(con, "SELECT count(*) FROM differential_diff('big', 1, 2, 't')") == 100000
    assert con.execute("SELECT key.id FROM differential_diff('big', 1, 2, 't') LIMIT 3").fetchall() == [
        (0,), (3,), (6,)]
    # The private attachments are gone once the query ends.
    assert scalar(con, "SELECT count(*) FROM duckdb_databases() WHERE database_name LIKE '__diff_%'") == 0


def test_refusals_name_what_to_do_and_change_nothing(shop):
    before = repository_state(shop)
    refused(shop, "SELECT * FROM differential_diff('nope', 1, 2, 'items')", "database_not_found")
    refused(shop, "SELECT * FROM differential_diff('shop', 1, 42, 'items')", "snapshot_not_found")
    refused(shop, "SELECT * FROM differential_diff('shop', 'gone', 1, 'items')", "branch_not_found")
    refused(shop, "SELECT * FROM differential_diff('shop', 1, 2, 'missing')", "table_not_found")
    refused(shop, "SELECT * FROM differential_diff('shop', NULL, 2, 'items')", "invalid_argument")
    refused(shop, "SELECT * FROM differential_diff('shop', 1.5, 2, 'items')", "invalid_argument")
    refused(shop, "SELECT * FROM differential_diff('shop', 1, 2, NULL)", "invalid_argument")
    refused(shop, "SELECT * FROM differential_diff('shop', '../x', 2, 'items')", "invalid_name")
    message = refused(shop, "SELECT * FROM differential_diff('shop', 1, 2, 'missing')", "table_not_found")
    assert "SHOW TABLES" in message
    assert repository_state(shop) == before
    assert scalar(shop, "SELECT count(*) FROM duckdb_databases() WHERE database_name LIKE '__diff_%'") == 0


def test_an_expired_snapshot_and_a_changed_key_are_refused(con):
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id INTEGER PRIMARY KEY, v INTEGER)")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("DROP TABLE db.t")
    con.execute("CREATE TABLE db.t (id INTEGER, v INTEGER PRIMARY KEY)")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CALL differential_create_snapshot('db')")
    refused(con, "SELECT * FROM differential_diff('db', 1, 2, 't')", "diff_unsupported")
    con.execute("CALL differential_expire_snapshots('db', versions => [1])")
    refused(con, "SELECT * FROM differential_diff('db', 1, 3, 't')", "snapshot_expired")


def test_the_repository_setting_is_needed(tmp_path):
    from differential_testing import connect
    bare = connect()
    with pytest.raises(duckdb.Error, match=r"\[differential:repository_not_set\]"):
        bare.execute("SELECT * FROM differential_diff('db', 1, 2, 't')")


def test_the_working_state_of_an_attached_branch(shop):
    """'<branch>@working' is what `git diff` shows before a commit: writes since the branch's last snapshot."""
    shop.execute("UPDATE shop.items SET price = 5 WHERE id = 1")
    shop.execute("INSERT INTO shop.items VALUES (7, 'unsnapshotted', 2)")
    shop.execute("CREATE TABLE shop.draft (k INTEGER PRIMARY KEY)")
    shop.execute("INSERT INTO shop.draft VALUES (1)")
    rows = shop.execute("SELECT kind, key.id, before.price, after.price FROM "
                        "differential_diff('shop', 'main', 'main@working', 'items')").fetchall()
    assert [(k, i, str(b), str(a)) for k, i, b, a in rows] == [("update", 1, "1.50", "5.00"),
                                                                ("insert", 7, "None", "2.00")]
    assert shop.execute("SELECT kind, key.k FROM differential_diff('shop', 3, 'main@working', 'draft')").fetchall() == [
        ("insert", 1)]
    # Reversed, and against itself.
    assert [r[0] for r in shop.execute("SELECT kind FROM differential_diff('shop', 'main@working', 'main', 'items')"
                                       ).fetchall()] == ["update", "delete"]
    assert scalar(shop, "SELECT count(*) FROM differential_diff('shop', 'main@working', 'main@working', 'items')") == 0
    # A snapshot makes the working state a version: main's new head equals it.
    shop.execute("CALL differential_create_snapshot('shop')")
    assert scalar(shop, "SELECT count(*) FROM differential_diff('shop', 'main', 'main@working', 'items')") == 0


def test_the_working_state_is_found_by_branch_under_any_alias(shop):
    shop.execute("ATTACH 'differential:shop' AS elsewhere (BRANCH 'fix')")
    shop.execute("DELETE FROM elsewhere.items WHERE id = 10")
    assert shop.execute("SELECT kind, key.id FROM differential_diff('shop', 'fix', 'fix@working', 'items')"
                        ).fetchall() == [("delete", 10)]
    # Two working states of one database side by side: main has id 6 and 4, fix has neither now.
    rows = shop.execute("SELECT kind, key.id FROM differential_diff('shop', 'main@working', 'fix@working', 'items') "
                        "WHERE kind = 'delete'").fetchall()
    assert rows == [("delete", 4), ("delete", 6)]
    assert scalar(shop, "SELECT count(*) FROM duckdb_databases() WHERE database_name LIKE '__diff_%'") == 0


def test_the_working_state_is_what_is_committed_when_the_query_starts(shop):
    shop.execute("BEGIN")
    shop.execute("INSERT INTO shop.items VALUES (8, 'open transaction', 1)")
    assert scalar(shop, "SELECT count(*) FROM differential_diff('shop', 'main', 'main@working', 'items')") == 0
    shop.execute("COMMIT")
    assert shop.execute("SELECT kind, key.id FROM differential_diff('shop', 'main', 'main@working', 'items')"
                        ).fetchall() == [("insert", 8)]
    # Rows stream from one transaction: a write by another connection while they stream is not in them.
    shop.execute("INSERT INTO shop.items SELECT 100 + i, 'bulk', 1 FROM range(5000) t(i)")
    stream = shop.cursor()
    stream.execute("SELECT key.id FROM differential_diff('shop', 'main', 'main@working', 'items')")
    first = stream.fetchmany(10)
    other = shop.cursor()
    other.execute("DELETE FROM shop.items WHERE id >= 100")
    assert len(first) + len(stream.fetchall()) == 5001
    assert scalar(shop, "SELECT count(*) FROM differential_diff('shop', 'main', 'main@working', 'items')") == 1


def test_a_working_state_not_attached_is_refused_and_changes_nothing(shop):
    before = repository_state(shop)
    message = refused(shop, "SELECT * FROM differential_diff('shop', 'fix', 'fix@working', 'items')",
                      "database_not_attached")
    assert "ATTACH 'differential:shop'" in message and "(BRANCH 'fix')" in message
    refused(shop, "SELECT * FROM differential_diff('shop', 'main', 'gone@working', 'items')", "database_not_attached")
    refused(shop, "SELECT * FROM differential_diff('shop', '../x@working', 1, 'items')", "invalid_name")
    refused(shop, "SELECT * FROM differential_diff('shop', '@working', 1, 'items')", "invalid_name")
    # A snapshot attachment of the branch is history, not its working state.
    shop.execute("ATTACH 'differential:shop' AS fix_then (SNAPSHOT 2)")
    refused(shop, "SELECT * FROM differential_diff('shop', 'fix', 'fix@working', 'items')", "database_not_attached")
    shop.execute("DETACH fix_then")
    assert repository_state(shop) == before
    assert scalar(shop, "SELECT count(*) FROM duckdb_databases() WHERE database_name LIKE '__diff_%'") == 0
