"""The spec's "What's supported" table: every unsupported object stops preview, preflight and merge; supported ones merge."""
import pytest

from differential_testing import refused, repository_state
from three_way import diverge, merge_sql, preflight_sql, preview_sql

BASE = ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"]
OURS_EDIT = ["UPDATE t SET v = 'A' WHERE id = 1"]
THEIRS_EDIT = ["UPDATE t SET v = 'B' WHERE id = 2"]

# Each entry: the statements creating the object (run with USE on the database), and the names of
# which the refusal must mention one.
UNSUPPORTED = {
    "table_in_another_schema": (["CREATE SCHEMA archive", "CREATE TABLE archive.old_orders (id INTEGER PRIMARY KEY)"],
                                ["old_orders", "archive"]),
    "enum_column": (["CREATE TABLE moods (id INTEGER PRIMARY KEY, m ENUM('ok', 'bad'))"], ["moods"]),
    "json_column": (["CREATE TABLE docs (id INTEGER PRIMARY KEY, j JSON)"], ["docs"]),
    "nocase_collation": (["CREATE TABLE people (id INTEGER PRIMARY KEY, name VARCHAR COLLATE NOCASE)"], ["people"]),
    # Foreign keys merge (test_foreign_keys.py), but not one of a table referencing itself: no order of the
    # tables puts every parent before its children.
    "foreign_key_to_itself": (["CREATE TABLE tree (id INTEGER PRIMARY KEY, up INTEGER REFERENCES tree (id))"],
                              ["tree"]),
    "foreign_key_to_a_unique_column": (["CREATE TABLE customers (id INTEGER PRIMARY KEY, code INTEGER UNIQUE)",
                                        "CREATE TABLE orders_fk (id INTEGER PRIMARY KEY, "
                                        "customer_code INTEGER REFERENCES customers (code))"], ["orders_fk"]),
    "generated_column": (["CREATE TABLE lines (id INTEGER PRIMARY KEY, qty INTEGER, "
                          "total INTEGER GENERATED ALWAYS AS (qty * 2) VIRTUAL)"], ["lines"]),
    "sequence": (["CREATE SEQUENCE order_ids"], ["order_ids"]),
    "macro": (["CREATE MACRO double_it(x) AS x * 2"], ["double_it"]),
    # Read from the input's own schemas (merge_catalog.cpp), as scalar macros are.
    "table_macro": (["CREATE MACRO first_rows(n) AS TABLE SELECT * FROM t LIMIT n"], ["first_rows"]),
    "view_with_cte": (["CREATE VIEW v_cte AS WITH x AS (SELECT id, v FROM t) SELECT id, v FROM x"], ["v_cte"]),
    "view_with_window_function": (["CREATE VIEW v_window AS SELECT id, row_number() OVER (ORDER BY id) AS rn FROM t"],
                                  ["v_window"]),
    "view_with_subquery": (["CREATE VIEW v_subquery AS SELECT id FROM t WHERE v IN (SELECT v FROM t WHERE id = 1)"],
                           ["v_subquery"]),
    "view_with_table_function": (["CREATE VIEW v_range AS SELECT range AS n FROM range(3)"], ["v_range"]),
    "check_calling_random": (["CREATE TABLE lottery (id INTEGER PRIMARY KEY, x DOUBLE CHECK (x < random() + 1))"],
                             ["lottery"]),
    "default_now": (["CREATE TABLE stamps (id INTEGER PRIMARY KEY, created TIMESTAMPTZ DEFAULT now())"], ["stamps"]),
}


def names_one_of(message, names):
    return any(name in message for name in names)


@pytest.mark.parametrize("placement", ["base", "theirs"])
@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_unsupported_object_stops_preview_preflight_and_merge(con, case, placement):
    """In the base the object is on every side and strict mode applies; added by theirs, catalog mode
    would take the addition, so the object itself must be what refuses."""
    statements, names = UNSUPPORTED[case]
    diverge(
        con,
        base=BASE + (statements if placement == "base" else []),
        ours=OURS_EDIT,
        theirs=THEIRS_EDIT + (statements if placement == "theirs" else []),
    )
    options = {} if placement == "base" else {"schema_mode": "'catalog'"}
    message = refused(con, preview_sql("*", **options), "merge_unsupported")
    assert names_one_of(message, names), message
    ready, issues = con.execute(preflight_sql("ready, issues", **options)).fetchone()
    assert ready is False and issues.startswith("merge_unsupported"), issues
    assert names_one_of(issues, names), issues
    before = repository_state(con)
    message = refused(con, merge_sql(**options), "merge_unsupported")
    assert names_one_of(message, names), message
    message = refused(con, merge_sql(**options, request_id="'scope'"), "merge_unsupported")
    assert names_one_of(message, names), message
    assert repository_state(con) == before


def merged(con, **options):
    assert con.execute(preflight_sql("ready, issues", **options)).fetchall() == [(True, None)]
    assert con.execute(preview_sql("sum(conflicts)::BIGINT, bool_and(validation_state = 'valid')", validate="true",
                                   **options)).fetchall() == [(0, True)]
    assert con.execute(merge_sql(**options)).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")


def test_composite_primary_key_merges(con):
    diverge(
        con,
        base=["CREATE TABLE k (a INTEGER, b INTEGER, v VARCHAR, PRIMARY KEY (a, b))",
              "INSERT INTO k VALUES (1, 1, 'a'), (1, 2, 'b'), (2, 1, 'c')"],
        ours=["UPDATE k SET v = 'B' WHERE a = 1 AND b = 2"],
        theirs=["DELETE FROM k WHERE a = 2 AND b = 1", "INSERT INTO k VALUES (2, 2, 'd')"],
    )
    merged(con)
    assert con.execute("FROM shop.k ORDER BY a, b").fetchall() == [(1, 1, "a"), (1, 2, "B"), (2, 2, "d")]


def test_composite_primary_key_conflicts_name_the_whole_key(con):
    diverge(
        con,
        base=["CREATE TABLE k (a INTEGER, b VARCHAR, v VARCHAR, PRIMARY KEY (a, b))", "INSERT INTO k VALUES (1, 'x', 'a')"],
        ours=["UPDATE k SET v = 'o' WHERE a = 1"],
        theirs=["UPDATE k SET v = 't' WHERE a = 1"],
    )
    details = con.execute(preview_sql("conflict_details")).fetchone()[0]
    assert [(d["kind"], [(k["column_name"], k["text_value"]) for k in d["key"]]) for d in details] == [
        ("cell", [("a", "1"), ("b", "x")])]
    assert details[0]["key"][1]["varchar_value"] == "x"


PREFS = ["CREATE TABLE prefs (id INTEGER PRIMARY KEY, s STRUCT(theme VARCHAR, language VARCHAR), l INTEGER[], "
         "m MAP(VARCHAR, INTEGER))",
         "INSERT INTO prefs VALUES (1, {'theme': 'light', 'language': 'en'}, [1, 2], map {'a': 1}), "
         "(2, {'theme': 'light', 'language': 'en'}, [1], map {'a': 1})"]


def test_nested_values_merge_as_whole_values(con):
    diverge(
        con,
        base=PREFS,
        ours=["UPDATE prefs SET l = [1, 2, 3] WHERE id = 1", "UPDATE prefs SET m = map {'a': 1, 'b': 2} WHERE id = 2"],
        theirs=["UPDATE prefs SET s = {'theme': 'dark', 'language': 'en'} WHERE id = 1", "UPDATE prefs SET l = [] WHERE id = 2"],
    )
    merged(con)
    assert con.execute("FROM shop.prefs ORDER BY id").fetchall() == [
        (1, {"theme": "dark", "language": "en"}, [1, 2, 3], {"a": 1}),
        (2, {"theme": "light", "language": "en"}, [], {"a": 1, "b": 2}),
    ]


def test_different_fields_of_one_struct_are_one_cell_conflict(con):
    diverge(
        con,
        base=PREFS,
        ours=["UPDATE prefs SET s = {'theme': 'dark', 'language': 'en'} WHERE id = 1"],
        theirs=["UPDATE prefs SET s = {'theme': 'light', 'language': 'de'} WHERE id = 1"],
    )
    assert con.execute(
        "SELECT c.key[1].integer_value, c.kind, c.columns "
        "FROM (SELECT unnest(conflict_details) AS c FROM differential_merge_branch_preview('shop', 'main', 'b'))"
    ).fetchall() == [(1, "cell", ["s"])]
    before = repository_state(con)
    refused(con, merge_sql(), "merge_conflict")
    assert repository_state(con) == before
    # The conflict is resolved by supplying the whole value.
    con.execute("CREATE TABLE decisions (id INTEGER, s STRUCT(theme VARCHAR, language VARCHAR), l INTEGER[], "
                "m MAP(VARCHAR, INTEGER), _merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO decisions VALUES (1, {'theme': 'dark', 'language': 'de'}, NULL, NULL, 'cells', map {'s': 'custom'})")
    assert con.execute(merge_sql(resolution_tables="map {'main.prefs': 'memory.main.decisions'}")).fetchall() == [
        ("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("SELECT s, l FROM shop.prefs WHERE id = 1").fetchall() == [({"theme": "dark", "language": "de"}, [1, 2])]


def test_unique_check_and_default_on_existing_columns_merge(con):
    diverge(
        con,
        base=["CREATE TABLE acct (id INTEGER PRIMARY KEY, email VARCHAR UNIQUE, amount INTEGER CHECK (amount > 0), "
              "qty INTEGER DEFAULT 0)",
              "INSERT INTO acct VALUES (1, 'a@x', 10, 1), (2, 'b@x', 20, 2)"],
        ours=["INSERT INTO acct (id, email, amount) VALUES (3, 'c@x', 30)"],
        theirs=["UPDATE acct SET amount = 11 WHERE id = 1", "UPDATE acct SET email = 'bb@x' WHERE id = 2"],
    )
    merged(con)
    assert con.execute("FROM shop.acct ORDER BY id").fetchall() == [(1, "a@x", 11, 1), (2, "bb@x", 20, 2), (3, "c@x", 30, 0)]
    kinds = {r[0] for r in con.execute(
        "SELECT constraint_type FROM duckdb_constraints() WHERE database_name = 'shop' AND table_name = 'acct'").fetchall()}
    assert {"PRIMARY KEY", "UNIQUE", "CHECK"} <= kinds, kinds
    assert con.execute(
        "SELECT column_default FROM duckdb_columns() WHERE database_name = 'shop' AND table_name = 'acct' AND column_name = 'qty'"
    ).fetchone()[0] is not None


def test_view_with_join_and_aggregates_merges(con):
    diverge(
        con,
        base=["CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name VARCHAR)",
              "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER, amount INTEGER)",
              "INSERT INTO customers VALUES (1, 'Ada'), (2, 'Lin')",
              "INSERT INTO orders VALUES (1, 1, 10), (2, 2, 20)",
              "CREATE VIEW totals AS SELECT c.name, count(*) AS n, sum(o.amount) AS total "
              "FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id GROUP BY c.name"],
        ours=["INSERT INTO orders VALUES (3, 1, 5)"],
        theirs=["INSERT INTO customers VALUES (3, 'Jo')", "INSERT INTO orders VALUES (4, 3, 7)"],
    )
    merged(con)
    assert con.execute("FROM shop.totals ORDER BY name").fetchall() == [("Ada", 2, 15), ("Jo", 1, 7), ("Lin", 1, 20)]
