"""The storage shortcut on randomized histories: previews and results equal the reference method's
(SET differential_merge_skip_unchanged = false) and the merge computed from the three inputs."""
import random

import pytest

from differential_testing import refused, scalar
from expected_merge import expected_digests, table_digests

TABLES = {
    "accounts": "id INTEGER PRIMARY KEY, owner VARCHAR, balance DECIMAL(12, 2)",
    "events": "id BIGINT PRIMARY KEY, kind VARCHAR, payload VARCHAR, happened TIMESTAMP",
    "tags": "id INTEGER PRIMARY KEY, label VARCHAR",
    "scores": "id INTEGER PRIMARY KEY, score DOUBLE, ok BOOLEAN",
    "notes": "id INTEGER PRIMARY KEY, body VARCHAR",
    "items": "id INTEGER PRIMARY KEY, price INTEGER, name VARCHAR",
}
ROWS = 3000
# The shortcut skips a side's table (or row groups) whose storage is byte-identical to the base's;
# every history here leaves some table untouched on some side, so it must actually be taken.


def load(con, alias, rows=ROWS):
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
        con.execute(f"INSERT INTO {alias}.{table} SELECT {values} FROM range({rows})")


def change(con, alias, rng, parity, tables, rows=ROWS):
    """Random changes to `tables` on rows whose id has the given parity (the other side uses the other
    parity, so the sides never conflict): updates, deletes, re-inserts of deleted keys, new rows."""
    for table in tables:
        column = {"accounts": "owner", "events": "payload", "tags": "label", "scores": "score", "notes": "body",
                  "items": "name"}[table]
        value = {"scores": "score + 1"}.get(table, f"{column} || '!'")
        kind = rng.choice(["update", "delete", "delete_reinsert", "insert", "noop_update", "mixed"])
        lo = rng.randrange(0, rows - 200)
        where = f"id BETWEEN {lo} AND {lo + rng.randrange(3, 200)} AND id % 2 = {parity}"
        if kind in ("update", "mixed"):
            con.execute(f"UPDATE {alias}.{table} SET {column} = {value} WHERE {where}")
        if kind in ("delete", "mixed", "delete_reinsert"):
            con.execute(f"DELETE FROM {alias}.{table} WHERE {where}")
        if kind == "delete_reinsert":
            con.execute(f"INSERT INTO {alias}.{table} BY NAME SELECT {lo - lo % 2 + 2 + parity} AS id")
        if kind in ("insert", "mixed"):
            start = rows + 1000 * (parity + 1) + rng.randrange(0, 500) * 2 + parity
            con.execute(f"INSERT INTO {alias}.{table} BY NAME SELECT {start} AS id")
        if kind == "noop_update":
            con.execute(f"UPDATE {alias}.{table} SET {column} = {column} WHERE {where}")


def build(con, seed, rows=ROWS):
    rng = random.Random(seed)
    con.execute("ATTACH 'differential:db' AS db")
    load(con, "db", rows)
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CALL differential_create_branch('db', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:db' AS side (BRANCH 'side')")
    names = list(TABLES)
    theirs_tables = rng.sample(names, rng.randrange(0, 4))
    # With several row groups, both sides also change the same tables in (likely) different row groups.
    ours_tables = theirs_tables if rows > ROWS else rng.sample(names, rng.randrange(1, 4))
    change(con, "side", rng, 1, theirs_tables, rows)
    con.execute("CALL differential_create_snapshot('side')")
    change(con, "db", rng, 0, ours_tables or names[:1], rows)
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


# Small tables (one row group) exercise the table-level shortcut; tables of three row groups the
# narrowing to the row groups a side changed.
@pytest.mark.parametrize("seed,rows", [(seed, ROWS) for seed in range(8)] + [(seed, 300_000) for seed in range(4)])
def test_shortcut_equals_the_reference_method(con, seed, rows):
    build(con, seed, rows)
    con.execute("SET differential_merge_skip_unchanged = false")
    reference_preview = con.execute(PREVIEW).fetchall()
    con.execute("SELECT * FROM differential_merge_branch('db', 'main', 'side', 'reference')")
    con.execute("SET differential_merge_skip_unchanged = true")
    assert con.execute(PREVIEW).fetchall() == reference_preview
    unchanged = con.execute("SELECT table_name, unchanged_sides FROM differential_merge_branch_preview('db', 'main', "
                            "'side') ORDER BY 1").fetchall()
    con.execute("SELECT * FROM differential_merge_branch('db', 'main', 'side', 'shortcut')")
    assert content(con, "shortcut") == content(con, "reference")
    # And both are right: the sides change rows of different parities, so the merge is computable
    # row by row from the base (1), ours (3) and theirs (2) without the extension's merge.
    con.execute("ATTACH 'differential:db' AS result (BRANCH 'shortcut', READ_ONLY)")
    got = table_digests(con, "result")
    con.execute("DETACH result")
    assert got == expected_digests(con, "db", 1, 3, 2)
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


def test_only_the_row_groups_a_side_changed_are_read(con):
    """300,000 rows are three row groups (122,880 + 122,880 + 54,240). Ours changes the first, theirs the
    last: the merge reads those two of the base, ours' first plus the base's last in its place, and
    theirs' last plus the base's first: 3 x 177,120 rows instead of 900,000."""
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id INTEGER PRIMARY KEY, v INTEGER)")
    con.execute("INSERT INTO db.t SELECT range, range FROM range(300000)")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CALL differential_create_branch('db', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:db' AS side (BRANCH 'side')")
    con.execute("UPDATE side.t SET v = -v WHERE id BETWEEN 250000 AND 250009")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("UPDATE db.t SET v = -v WHERE id BETWEEN 10 AND 19")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("DETACH db")
    con.execute("DETACH side")
    narrowed = 3 * (122_880 + 54_240)
    refused(con, f"SELECT * FROM differential_merge_branch('db', 'main', 'side', 'r', max_rows_read => {narrowed - 1})",
            "merge_limit_exceeded")
    assert con.execute(f"SELECT merge_action FROM differential_merge_branch('db', 'main', 'side', 'r', "
                       f"max_rows_read => {narrowed})").fetchone() == ("created_branch",)
    con.execute("ATTACH 'differential:db' AS r (BRANCH 'r', READ_ONLY)")
    assert con.execute("SELECT count(*) FILTER (v < 0), sum(v) FILTER (v < 0) FROM r.t").fetchone() == (
        20, -sum(range(10, 20)) - sum(range(250000, 250010)))


def test_a_side_that_reused_the_base_blocks_for_other_bytes_is_read(con):
    """Two checkpoints on the side: the first moves the changed column to new blocks and frees the base's,
    the second writes it back into the base's block ids at the same offsets, counts and statistics. Only
    the blocks' content hashes tell the side's segments from the base's."""
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id BIGINT PRIMARY KEY, v BIGINT)")
    # Incompressible values: each segment fills its own block at offset 0.
    con.execute("INSERT INTO db.t SELECT range, (hash(range) % 1000000000000)::BIGINT FROM range(100000)")
    con.execute("CALL differential_create_snapshot('db')")
    layout = ("SELECT segment_type, start, block_id, block_offset, count, stats::VARCHAR FROM "
              "pragma_storage_info('{}.main.t') WHERE column_name = 'v' ORDER BY ALL")
    base_layout = con.execute(layout.format("db")).fetchall()
    con.execute("CALL differential_create_branch('db', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:db' AS side (BRANCH 'side')")
    con.execute("UPDATE side.t SET v = v + 1 WHERE id = 5")
    con.execute("CHECKPOINT side")
    con.execute("UPDATE side.t SET v = v + 1 WHERE id = 6")
    con.execute("CHECKPOINT side")
    # The premise: DuckDB's own listing cannot tell the side's column from the base's.
    assert con.execute(layout.format("side")).fetchall() == base_layout
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("UPDATE db.t SET v = 0 WHERE id = 90000")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("DETACH db")
    con.execute("DETACH side")
    assert con.execute("SELECT unchanged_sides FROM differential_merge_branch_preview('db', 'main', 'side')"
                       ).fetchall() == [([],)]
    con.execute("SELECT * FROM differential_merge_branch('db', 'main', 'side', 'r')")
    con.execute("ATTACH 'differential:db' AS r (BRANCH 'r', READ_ONLY)")
    con.execute("ATTACH 'differential:db' AS b (SNAPSHOT 1)")
    changed = con.execute("SELECT id, m.v - o.v FROM r.t AS m JOIN b.t AS o USING (id) WHERE m.v IS DISTINCT FROM "
                          "o.v ORDER BY 1").fetchall()
    base_90000 = scalar(con, "SELECT v FROM b.t WHERE id = 90000")
    assert changed == [(5, 1), (6, 1), (90000, -base_90000)]
