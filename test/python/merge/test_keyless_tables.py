"""Tables without a primary key (dbt's model tables) merge whole: taken from the one side that changed them."""
import pytest

from differential_testing import refused, repository_state, scalar, tree_fingerprint
from three_way import diverge, merge_sql, preflight_sql, preview_sql

KEYED = ["CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"]
# Both sides change the keyed table, so every merge below is a real three-way merge (no fast-forward).
OURS_EDIT = ["UPDATE t SET v = 'A' WHERE id = 1"]
THEIRS_EDIT = ["UPDATE t SET v = 'B' WHERE id = 2"]
LOOSE = ["CREATE TABLE loose (x INTEGER, y VARCHAR)", "INSERT INTO loose VALUES (1, 'one'), (1, 'one'), (2, NULL)"]
CATALOG = {"schema_mode": "'catalog'"}


def merged(con, **options):
    assert con.execute(preflight_sql("ready, issues", **options)).fetchall() == [(True, None)]
    assert con.execute(merge_sql(**options)).fetchall() == [("main", 4, "merged")]
    con.execute("ATTACH 'differential:shop' AS shop")
    # The keyed table merged row by row alongside.
    assert con.execute("SELECT id, v FROM shop.t ORDER BY id").fetchall() == [(1, "A"), (2, "B")]


def rows(con, table):
    return con.execute(f"SELECT * FROM shop.{table} ORDER BY ALL").fetchall()


def preview_row(con, table, **options):
    return con.execute(
        preview_sql("table_action, ours_inserts, ours_deletes, theirs_inserts, theirs_deletes, unchanged_sides",
                    **options) + f" WHERE object_name = '{table}'").fetchone()


def tables(con):
    return [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'shop' ORDER BY 1").fetchall()]


@pytest.mark.parametrize("mode", ["strict", "additive", "catalog"])
def test_keyless_table_unchanged_on_both_sides_stays(con, mode):
    diverge(con, base=KEYED + LOOSE, ours=OURS_EDIT, theirs=THEIRS_EDIT)
    assert preview_row(con, "loose", schema_mode=f"'{mode}'") == (None, 0, 0, 0, 0, ["ours", "theirs"])
    merged(con, schema_mode=f"'{mode}'")
    assert rows(con, "loose") == [(1, "one"), (1, "one"), (2, None)]


@pytest.mark.parametrize("mode", ["additive", "catalog"])
def test_keyless_table_created_on_branch_appears_on_main(con, mode):
    diverge(con, base=KEYED, ours=OURS_EDIT, theirs=THEIRS_EDIT + LOOSE)
    assert preview_row(con, "loose", schema_mode=f"'{mode}'") == ("add", 0, 0, 3, 0, ["ours"])
    merged(con, schema_mode=f"'{mode}'")
    assert rows(con, "loose") == [(1, "one"), (1, "one"), (2, None)]


def test_keyless_table_created_on_branch_is_refused_in_strict_mode(con):
    diverge(con, base=KEYED, ours=OURS_EDIT, theirs=THEIRS_EDIT + LOOSE)
    before = repository_state(con)
    message = refused(con, merge_sql(), "merge_unsupported")
    assert "loose" in message and "schema_mode" in message
    assert repository_state(con) == before


def test_keyless_table_dropped_on_branch_is_dropped_on_main(con):
    diverge(con, base=KEYED + LOOSE, ours=OURS_EDIT, theirs=THEIRS_EDIT + ["DROP TABLE loose"])
    assert preview_row(con, "loose", **CATALOG) == ("drop", 0, 0, 0, 3, ["ours"])
    refused(con, merge_sql(schema_mode="'additive'"), "merge_unsupported")
    merged(con, **CATALOG)
    assert tables(con) == ["t"]


def test_keyless_table_replaced_on_branch_is_replaced_on_main(con):
    replace = ["CREATE OR REPLACE TABLE loose AS SELECT 10 AS x, 'ten' AS y UNION ALL SELECT 1, 'one'"]
    diverge(con, base=KEYED + LOOSE, ours=OURS_EDIT, theirs=THEIRS_EDIT + replace)
    # The rows compare as whole rows: (1, 'one') twice became once, (2, NULL) went, (10, 'ten') came.
    assert preview_row(con, "loose", **CATALOG) == ("replace", 0, 0, 1, 2, ["ours"])
    merged(con, **CATALOG)
    assert rows(con, "loose") == [(1, "one"), (10, "ten")]


def test_keyless_table_replaced_with_other_columns_on_branch(con):
    replace = ["CREATE OR REPLACE TABLE loose AS SELECT 'z' AS label, 3.5::DOUBLE AS amount",
               "CREATE INDEX loose_label ON loose (label)"]
    diverge(con, base=KEYED + LOOSE, ours=OURS_EDIT, theirs=THEIRS_EDIT + replace)
    assert preview_row(con, "loose", **CATALOG) == ("replace", 0, 0, 1, 3, ["ours"])
    refused(con, merge_sql(schema_mode="'additive'"), "merge_unsupported")
    merged(con, **CATALOG)
    assert rows(con, "loose") == [("z", 3.5)]
    assert con.execute("SELECT index_name FROM duckdb_indexes() WHERE database_name = 'shop'").fetchall() == [
        ("loose_label",)]


def test_keyless_table_changed_on_main_only_keeps_mains_version(con):
    diverge(con, base=KEYED + LOOSE, ours=OURS_EDIT + ["DELETE FROM loose WHERE x = 2", "INSERT INTO loose VALUES (7, 'o')"],
            theirs=THEIRS_EDIT)
    assert preview_row(con, "loose") == ("replace", 1, 1, 0, 0, ["theirs"])
    merged(con)
    assert rows(con, "loose") == [(1, "one"), (1, "one"), (7, "o")]


def test_keyless_table_rewritten_with_the_same_rows_counts_as_unchanged(con):
    """CREATE OR REPLACE with the same contents (a dbt rebuild of an unchanged model) is no change."""
    rebuild = ["CREATE OR REPLACE TABLE loose AS SELECT * FROM loose ORDER BY x DESC"]
    diverge(con, base=KEYED + LOOSE, ours=OURS_EDIT + rebuild, theirs=THEIRS_EDIT + rebuild + ["DROP TABLE loose",
                                                                                          *LOOSE])
    assert preview_row(con, "loose") == (None, 0, 0, 0, 0, ["ours", "theirs"])
    merged(con)
    assert rows(con, "loose") == [(1, "one"), (1, "one"), (2, None)]


def test_keyless_table_changed_the_same_way_on_both_sides_merges(con):
    change = ["INSERT INTO loose VALUES (3, 'three')"]
    diverge(con, base=KEYED + LOOSE, ours=OURS_EDIT + change, theirs=THEIRS_EDIT + change)
    merged(con)
    assert rows(con, "loose") == [(1, "one"), (1, "one"), (2, None), (3, "three")]


CHANGED_ON_BOTH = {
    "rows": (["INSERT INTO loose VALUES (3, 'ours')"], ["DELETE FROM loose WHERE x = 1"], {}),
    "replaced_and_updated": (["UPDATE loose SET y = 'uno' WHERE x = 1"],
                             ["CREATE OR REPLACE TABLE loose AS SELECT 5 AS x, 'five' AS y"], {}),
    "dropped_and_updated": (["DROP TABLE loose"], ["UPDATE loose SET y = 'uno' WHERE x = 1"], CATALOG),
    "created_differently": ([], [], {}),
    "other_definitions": (["ALTER TABLE loose ADD COLUMN z INTEGER"], ["ALTER TABLE loose ADD COLUMN w INTEGER"],
                          CATALOG),
}


@pytest.mark.parametrize("case", list(CHANGED_ON_BOTH))
def test_keyless_table_changed_on_both_sides_is_refused_and_changes_nothing(con, repository, case):
    ours, theirs, options = CHANGED_ON_BOTH[case]
    if case == "created_differently":
        diverge(con, base=KEYED, ours=OURS_EDIT + LOOSE, theirs=THEIRS_EDIT + LOOSE[:1])
        options = CATALOG
    else:
        diverge(con, base=KEYED + LOOSE, ours=OURS_EDIT + ours, theirs=THEIRS_EDIT + theirs)
    before = tree_fingerprint(repository)
    for sql in (preview_sql("*", **options), merge_sql(**options)):
        message = refused(con, sql, "merge_unsupported")
        assert "'loose'" in message and "no primary key" in message and "both sides changed it" in message, message
        assert "primary_key" in message and "one side's version" in message, message
    ready, issues = con.execute(preflight_sql("ready, issues", **options)).fetchone()
    assert ready is False and issues.startswith("merge_unsupported"), issues
    assert tree_fingerprint(repository) == before
    # A durable request records its refused attempt (MERGES.md, requests), and nothing else.
    state = repository_state(con)
    refused(con, merge_sql(**options, request_id="'loose'"), "merge_unsupported")
    assert repository_state(con) == state


def test_fast_forward_takes_a_branch_with_new_keyless_tables(con):
    """dbt on a branch while main stood still: the merge fast-forwards, keyless tables and all."""
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.t (id INTEGER PRIMARY KEY, v VARCHAR)")
    assert scalar(con, "CALL differential_create_snapshot('shop')") == 1
    con.execute("CALL differential_create_branch('shop', 'b', snapshot => 1)")
    con.execute("ATTACH 'differential:shop' AS b (BRANCH 'b')")
    con.execute("CREATE TABLE b.loose AS SELECT range AS x FROM range(5)")
    assert scalar(con, "CALL differential_create_snapshot('b')") == 2
    con.execute("DETACH b")
    con.execute("DETACH shop")
    assert con.execute(merge_sql(schema_mode="'additive'")).fetchall() == [("main", 2, "fast_forward")]
    con.execute("ATTACH 'differential:shop' AS shop")
    assert scalar(con, "SELECT sum(x) FROM shop.loose") == 10


@pytest.mark.parametrize("skip_unchanged", ["true", "false"])
def test_storage_shortcut_and_contents_decide_alike(con, skip_unchanged):
    """A side whose table is stored as the base's is unchanged without reading it; compared by contents
    (the shortcut off) the decisions are the same."""
    con.execute(f"SET differential_merge_skip_unchanged = {skip_unchanged}")
    big = ["CREATE TABLE wide AS SELECT range AS x, range % 7 AS y FROM range(300000)"]
    diverge(con, base=KEYED + LOOSE + big, ours=OURS_EDIT + ["UPDATE wide SET y = -1 WHERE x = 299999"],
            theirs=THEIRS_EDIT + ["INSERT INTO loose VALUES (5, 'five')"])
    assert preview_row(con, "loose") == ("replace", 0, 0, 1, 0, ["ours"])
    assert preview_row(con, "wide") == ("replace", 1, 1, 0, 0, ["theirs"])
    merged(con)
    assert rows(con, "loose") == [(1, "one"), (1, "one"), (2, None), (5, "five")]
    assert con.execute("SELECT count(*), sum(y) FROM shop.wide").fetchone() == (
        300000, sum(x % 7 for x in range(299999)) - 1)
