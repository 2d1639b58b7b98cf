"""The storage shortcut (skip a side's table whose storage is byte-identical to the base's) against
the reference method (SET differential_merge_skip_unchanged = false), on randomized histories: the
results and the previews must be identical, and the shortcut must actually be taken."""
import random

import pytest

from differential_testing import scalar

TABLES = {
    "accounts": "id INTEGER PRIMARY KEY, owner VARCHAR, balance DECIMAL(12, 2)",
    "events": "id BIGINT PRIMARY KEY, kind VARCHAR, payload VARCHAR, happened TIMESTAMP",
    "tags": "id INTEGER PRIMARY KEY, label VARCHAR",
    "scores": "id INTEGER PRIMARY KEY, score DOUBLE, ok BOOLEAN",
    "notes": "id INTEGER PRIMARY KEY, body VARCHAR",
    "items": "id INTEGER PRIMARY KEY, price INTEGER, name VARCHAR",
}
ROWS = 3000


def load(con, alias):
    for table, columns in TABLES.items():
        con.execute(f"CREATE TABLE {alias}.{table} ({columns})")
        values = {
            "accounts": "range, 'owner ' || range, range / 100",
            "events": "range, 'kind ' || (range % 7), repeat('x', range % 50), TIMESTAMP '2026-01-01' + INTERVAL (range) MINUTE",
            "tags": "range, 'tag ' || range",
            "scores": "range, range * 1.5, range % 2 = 0",
            "notes": "range, md5(range::VARCHAR)",
            "items": "range, range * 10, 'item ' || range",
        }[table]
        con.execute(f"INSERT INTO {alias}.{table} SELECT {values} FROM range({ROWS})")


def change(con, alias, rng, parity, tables):
    """Random changes to `tables` on rows whose id has the given parity (the other side uses the other
    parity, so the sides never conflict): updates, deletes, re-inserts of deleted keys, new rows."""
    for table in tables:
        column = {"accounts": "owner", "events": "payload", "tags": "label", "scores": "score", "notes": "body",
                  "items": "name"}[table]
        value = {"scores": "score + 1"}.get(table, f"{column} || '!'")
        kind = rng.choice(["update", "delete", "delete_reinsert", "insert", "noop_update", "mixed"])
        lo = rng.randrange(0, ROWS - 200)
        where = f"id BETWEEN {lo} AND {lo + rng.randrange(3, 200)} AND id % 2 = {parity}"
        if kind in ("update", "mixed"):
            con.execute(f"UPDATE {alias}.{table} SET {column} = {value} WHERE {where}")
        if kind in ("delete", "mixed", "delete_reinsert"):
            con.execute(f"DELETE FROM {alias}.{table} WHERE {where}")
        if kind == "delete_reinsert":
            con.execute(f"INSERT INTO {alias}.{table} BY NAME SELECT {lo - lo % 2 + 2 + parity} AS id")
        if kind in ("insert", "mixed"):
            start = ROWS + 1000 * (parity + 1) + rng.randrange(0, 500) * 2 + parity
            con.execute(f"INSERT INTO {alias}.{table} BY NAME SELECT {start} AS id")
        if kind == "noop_update":
            con.execute(f"UPDATE {alias}.{table} SET {column} = {column} WHERE {where}")


def build(con, seed):
    rng = random.Random(seed)
    con.execute("ATTACH 'differential:db' AS db")
    load(con, "db")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CALL differential_create_branch('db', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:db' AS side (BRANCH 'side')")
    names = list(TABLES)
    change(con, "side", rng, 1, rng.sample(names, rng.randrange(0, 4)))
    con.execute("CALL differential_create_snapshot('side')")
    change(con, "db", rng, 0, rng.sample(names, rng.randrange(1, 4)))
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("DETACH db")
    con.execute("DETACH side")


def content(con, branch):
    con.execute(f"ATTACH 'differential:db' AS result (BRANCH '{branch}', READ_ONLY)")
    out = {t: con.execute(f"SELECT count(*), md5(coalesce(string_agg(r::VARCHAR, ',' ORDER BY id), '')) "
                          f"FROM result.{t} AS r").fetchone() for t in TABLES}
    con.execute("DETACH result")
    return out


PREVIEW = ("SELECT table_name, ours_inserts, ours_updates, ours_deletes, theirs_inserts, theirs_updates, "
           "theirs_deletes, conflicts FROM differential_merge_branch_preview('db', 'main', 'side') ORDER BY 1")


@pytest.mark.parametrize("seed", range(8))
def test_shortcut_equals_the_reference_method(con, seed):
    build(con, seed)
    con.execute("SET differential_merge_skip_unchanged = false")
    reference_preview = con.execute(PREVIEW).fetchall()
    con.execute("SELECT * FROM differential_merge_branch('db', 'main', 'side', 'reference')")
    con.execute("SET differential_merge_skip_unchanged = true")
    assert con.execute(PREVIEW).fetchall() == reference_preview
    unchanged = con.execute("SELECT table_name, unchanged_sides FROM differential_merge_branch_preview('db', 'main', "
                            "'side') ORDER BY 1").fetchall()
    con.execute("SELECT * FROM differential_merge_branch('db', 'main', 'side', 'shortcut')")
    assert content(con, "shortcut") == content(con, "reference")
    # The shortcut is taken: every history leaves some table untouched on some side.
    assert any(sides for _, sides in unchanged), unchanged
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def test_a_side_that_only_deleted_rows_is_not_unchanged(con):
    """Deletes live outside the data blocks: the live row count must tell them apart."""
    con.execute("ATTACH 'differential:db' AS db")
    load(con, "db")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CALL differential_create_branch('db', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:db' AS side (BRANCH 'side')")
    con.execute("DELETE FROM side.tags WHERE id IN (5, 7)")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("UPDATE db.items SET price = 0 WHERE id = 1")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("DETACH db")
    con.execute("DETACH side")
    rows = dict(con.execute("SELECT table_name, unchanged_sides FROM differential_merge_branch_preview('db', 'main', "
                            "'side')").fetchall())
    assert rows["tags"] == ["ours"] and rows["items"] == ["theirs"] and rows["notes"] == ["ours", "theirs"], rows
    con.execute("SELECT * FROM differential_merge_branch('db', 'main', 'side', 'main')")
    con.execute("ATTACH 'differential:db' AS db (READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM db.tags") == ROWS - 2
    assert scalar(con, "SELECT price FROM db.items WHERE id = 1") == 0
