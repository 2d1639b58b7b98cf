"""The storage shortcut (docs/MERGES.md §10a) on targeted histories: with the shortcut and with the
reference method, each merge must have the outcome its case names, and the same previews."""
import re

import duckdb
import pytest

from differential_testing import scalar
from expected_merge import expected_digests, table_digests

# Each history is merged with the shortcut (default) into one new branch and with the reference
# method (SET differential_merge_skip_unchanged = false) into another. A merge that must succeed must
# give, with both methods, the content computed independently from the three inputs
# (expected_merge.py); a merge that must fail must fail with the named [differential:<code>] and the
# same message with both methods. Previews (without unchanged_sides) must be identical.
#
# The histories aim at what the shortcut's reasoning needs: storage ancestry (a merge snapshot's
# file is ours' only, a restore snapshot's the restored one's), equal live counts hiding different
# deleted rows, and first columns without a segment at path [0] (STRUCT, ARRAY, UNION). Tables have
# 250,000 rows: three row groups (122,880 + 122,880 + 4,240).
N = 250_000
G1 = 122_880  # first id of the second row group
G2 = 2 * G1  # first id of the last row group
WIDE = ("id INTEGER PRIMARY KEY, v INTEGER, s VARCHAR, n INTEGER, c INTEGER, z INTEGER",
        "range, range, CASE WHEN range % 1000 = 0 THEN repeat(md5(range::VARCHAR), 200) ELSE 's' || range END, "
        "CASE WHEN range % 5000 = 0 THEN range END, 7, NULL")


def attach(con, alias, branch=None):
    con.execute(f"ATTACH 'differential:db' AS {alias}" + (f" (BRANCH '{branch}')" if branch else ""))


def snap(con, alias):
    return scalar(con, f"SELECT snapshot_id FROM differential_create_snapshot('{alias}')")


def detach_all(con):
    for (name,) in con.execute("SELECT database_name FROM duckdb_databases() WHERE NOT internal AND "
                               "database_name <> 'memory'").fetchall():
        con.execute(f"DETACH {name}")


def start(con, table=WIDE, rows=N, branches=("side",)):
    """main with t (rows) and an untouched table u at snapshot 1, and the given branches from it."""
    attach(con, "db")
    con.execute(f"CREATE TABLE db.t ({table[0]})")
    con.execute(f"INSERT INTO db.t SELECT {table[1]} FROM range({rows})")
    con.execute("CREATE TABLE db.u (id INTEGER PRIMARY KEY)")
    con.execute("INSERT INTO db.u SELECT range FROM range(10)")
    first = snap(con, "db")
    for branch in branches:
        con.execute(f"CALL differential_create_branch('db', '{branch}', snapshot => {first})")
        attach(con, branch, branch)
    return first


def run(con, alias, steps):
    """steps: a list of snapshots, each a list of statements ({a} is the alias)."""
    ids = []
    for statements in steps:
        for sql in statements:
            con.execute(sql.format(a=alias))
        ids.append(snap(con, alias))
    return ids


def content(con, branch):
    attach(con, "result", branch)
    try:
        return table_digests(con, "result")
    finally:
        con.execute("DETACH result")


MERGED = "created_branch"  # every merge here goes to a new branch
CONFLICT = "merge_conflict"


def outcome(con, sql):
    """("ok", rows) or ("error", code, message); an error must carry one of our codes."""
    try:
        return ("ok", con.execute(sql).fetchall())
    except duckdb.Error as error:
        message = str(error)
        match = re.match(r"^(?:[A-Za-z ]*Error: )?\[differential:([a-z_]+)\] ", message)
        assert match, f"not a differential error: {message}"
        return ("error", match.group(1), message)


def compare(con, expected, args="'main', 'side'", kind="branch"):
    """Previews and merges (into new branches) with both methods. expected is MERGED or the code the
    merge must fail with. Returns the shortcut's unchanged_sides per table."""
    detach_all(con)
    preview = (f"SELECT * EXCLUDE (unchanged_sides) FROM differential_merge_{kind}_preview('db', {args}) "
               f"ORDER BY object_type, object_name")
    previews, merges = {}, {}
    for method, on in (("cut", "true"), ("ref", "false")):
        con.execute(f"SET differential_merge_skip_unchanged = {on}")
        previews[method] = outcome(con, preview)
        merges[method] = outcome(con, f"SELECT merge_action FROM differential_merge_{kind}('db', {args}, '{method}')")
    con.execute("SET differential_merge_skip_unchanged = true")
    # Previews never refuse for conflicts: both must answer, with the same rows.
    assert previews["ref"][0] == "ok", previews["ref"]
    assert previews["cut"] == previews["ref"], ("preview", previews["cut"], previews["ref"])
    if expected == MERGED:
        assert merges["cut"] == merges["ref"] == ("ok", [(MERGED,)]), merges
        (inputs,) = con.execute("SELECT DISTINCT base_snapshot_id, ours_snapshot_id, theirs_snapshot_id "
                                f"FROM differential_merge_{kind}_preview('db', {args})").fetchall()
        want = expected_digests(con, "db", *inputs)
        for method in ("cut", "ref"):
            got = content(con, method)
            assert got == want, (method, {t: (got.get(t), want.get(t)) for t in set(got) | set(want)
                                          if got.get(t) != want.get(t)})
    else:
        # The same refusal with both methods: the code this case names, and the same message (counts).
        assert merges["cut"][:2] == merges["ref"][:2] == ("error", expected), merges
        assert merges["cut"] == merges["ref"], merges
        branches = [r[0] for r in con.execute("SELECT branch_name FROM differential_branches('db')").fetchall()]
        assert "cut" not in branches and "ref" not in branches, branches
    return dict(con.execute(f"SELECT table_name, unchanged_sides FROM differential_merge_{kind}_preview("
                            f"'db', {args}) WHERE object_type = 'table'").fetchall())


# ---------------------------------------------------------------------------------------------------
# Histories on one lineage: (ours steps, theirs steps, outcome); each step is one snapshot. The outcome
# is MERGED, or CONFLICT where one row changed differently on both sides (the comments say which).
D5, D6 = "DELETE FROM {a}.t WHERE id = 5", "DELETE FROM {a}.t WHERE id = 6"
SAME_ROW = "INSERT INTO {a}.t SELECT %s FROM range(%d, %d)" % (WIDE[1], 5, 6)
HISTORIES = {
    "delete_one_side": ([[D5]], [["UPDATE {a}.t SET v = -1 WHERE id = 200000"]], MERGED),
    # Same row group, same number of deleted rows, different rows.
    "delete_same_group_same_count": ([[D5]], [[D6]], MERGED),
    "delete_same_count_plus_update": ([[D5, "UPDATE {a}.t SET v = -1 WHERE id = 7"]], [[D6]], MERGED),
    # A delete and an insert on one side: the first group's live count changes, the last's grows.
    "delete_and_insert_same_side": ([[D5, "INSERT INTO {a}.t SELECT %s FROM range(%d, %d)" % (WIDE[1], N, N + 1)]],
                                    [[D6]], MERGED),
    # Delete + re-insert of the identical row: the content is unchanged on ours.
    "delete_reinsert_identical": ([[D5, SAME_ROW]], [["UPDATE {a}.t SET v = -1 WHERE id = 5"]], MERGED),
    "delete_reinsert_vs_delete": ([[D5, SAME_ROW]], [[D5]], MERGED),
    # Ours moves key 11 away (a delete of 11), theirs updates 11: a delete_update conflict.
    "update_primary_key": ([["UPDATE {a}.t SET id = id + 1000000 WHERE id BETWEEN 10 AND 12"]],
                           [["UPDATE {a}.t SET v = -1 WHERE id = 11"]], CONFLICT),
    "update_primary_key_to_itself": ([["UPDATE {a}.t SET id = id WHERE id = 10"]], [[D6]], MERGED),
    "update_same_value": ([["UPDATE {a}.t SET v = v WHERE id < 100"]], [["UPDATE {a}.t SET v = -1 WHERE id = 50"]], MERGED),
    "update_and_back": ([["UPDATE {a}.t SET v = -1 WHERE id = 50"], ["UPDATE {a}.t SET v = 50 WHERE id = 50"]],
                        [["UPDATE {a}.t SET s = 'x' WHERE id = 50"]], MERGED),
    "update_and_back_one_snapshot": ([["UPDATE {a}.t SET v = -1 WHERE id = 50", "UPDATE {a}.t SET v = 50 WHERE id = 50"]],
                                     [[D5]], MERGED),
    "appends_both_sides": ([["INSERT INTO {a}.t SELECT %s FROM range(%d, %d)" % (WIDE[1], N, N + 300_000)]],
                           [["INSERT INTO {a}.t SELECT %s FROM range(%d, %d)" % (WIDE[1], 10**6, 10**6 + 200_000)]], MERGED),
    "appends_vs_deletes_in_last_group": ([["INSERT INTO {a}.t SELECT %s FROM range(%d, %d)" % (WIDE[1], N, N + 5000)]],
                                         [[f"DELETE FROM {{a}}.t WHERE id BETWEEN {G2} AND {G2 + 100}"]], MERGED),
    "delete_all_and_reinsert": ([["DELETE FROM {a}.t", "INSERT INTO {a}.t SELECT %s FROM range(%d)" % (WIDE[1], N)]],
                                [["UPDATE {a}.t SET v = -1 WHERE id = 7"]], MERGED),
    "delete_everything": ([["DELETE FROM {a}.t"]], [[]], MERGED),
    # Ours deletes key 7, theirs updates it: a delete_update conflict.
    "delete_everything_vs_update": ([["DELETE FROM {a}.t"]], [["UPDATE {a}.t SET v = -1 WHERE id = 7"]], CONFLICT),
    "checkpoint_after_deletes": ([[f"DELETE FROM {{a}}.t WHERE id % 3 = 0 AND id < {G1}", "CHECKPOINT",
                                   "PRAGMA force_checkpoint", "VACUUM"]], [["DELETE FROM {a}.t WHERE id = 4"]], MERGED),
    "vacuum_merges_row_groups": ([[f"DELETE FROM {{a}}.t WHERE id BETWEEN 1000 AND {G1 + 100000}", "VACUUM",
                                   "CHECKPOINT"]], [[f"UPDATE {{a}}.t SET v = -1 WHERE id = {G2 + 1}"]], MERGED),
    "long_string_change": ([["UPDATE {a}.t SET s = repeat('y', 5000) WHERE id = 2000"]],
                           [["UPDATE {a}.t SET s = s || '!' WHERE id = 3000"]], MERGED),
    "null_column_gets_value": ([["UPDATE {a}.t SET n = 1 WHERE id = 1"]], [["UPDATE {a}.t SET n = 2 WHERE id = 2"]], MERGED),
    # Both sides set c of key 130000, to different values: a cell conflict.
    "constant_column_changes_one_row": ([["UPDATE {a}.t SET c = 8 WHERE id = 130000"]],
                                        [["UPDATE {a}.t SET c = 9 WHERE id = 130000"]], CONFLICT),
    "constant_column_same_row_same_value": ([["UPDATE {a}.t SET c = 8 WHERE id = 130000"]],
                                            [["UPDATE {a}.t SET c = 8 WHERE id = 130000"]], MERGED),
    "constant_column_one_side": ([["UPDATE {a}.t SET c = 8 WHERE id = 3"]], [["UPDATE {a}.t SET c = 9 WHERE id = 130000"]], MERGED),
    "null_column_one_side": ([["UPDATE {a}.t SET z = 1 WHERE id = 3"]], [["UPDATE {a}.t SET z = 2 WHERE id = 130000"]], MERGED),
    "delete_a_whole_row_group": ([[f"DELETE FROM {{a}}.t WHERE id BETWEEN {G1} AND {G2 - 1}"]],
                                 [[f"UPDATE {{a}}.t SET v = -1 WHERE id = {G2 + 1}", D5]], MERGED),
    "reload_vs_purge_one_lineage": ([["DELETE FROM {a}.t WHERE id < 1000", "INSERT INTO {a}.t SELECT %s FROM range(1000)" % WIDE[1]]],
                                    [["DELETE FROM {a}.t WHERE id BETWEEN 5000 AND 5999"]], MERGED),
    "several_snapshots_each_side": ([[D5], ["UPDATE {a}.t SET v = -1 WHERE id = 200000"], [D6]],
                                    [["DELETE FROM {a}.t WHERE id = 7"], ["INSERT INTO {a}.t (id) VALUES (-1)"],
                                     ["DELETE FROM {a}.t WHERE id = -1"]], MERGED),
}


@pytest.mark.parametrize("name", list(HISTORIES))
def test_history(con, name):
    ours, theirs, expected = HISTORIES[name]
    start(con)
    run(con, "side", theirs)
    run(con, "db", ours)
    # u is untouched on both sides: the shortcut must be taken for it, or nothing here tests it.
    assert compare(con, expected)["u"] == ["ours", "theirs"]


def test_base_side_deletes_then_more_deletes(con):
    """Deletes in the base before branching, then more deletes (same count on both sides) after."""
    attach(con, "db")
    con.execute(f"CREATE TABLE db.t ({WIDE[0]})")
    con.execute(f"INSERT INTO db.t SELECT {WIDE[1]} FROM range({N})")
    snap(con, "db")
    con.execute("DELETE FROM db.t WHERE id IN (1, 2, 3)")
    fork = snap(con, "db")
    con.execute(f"CALL differential_create_branch('db', 'side', snapshot => {fork})")
    attach(con, "side", "side")
    run(con, "side", [[D6]])
    run(con, "db", [[D5]])
    compare(con, MERGED)


# Key 5 moves from the first row group to a new one with the same row; main deletes key 6 (same row
# group). Or: side reloads keys 0..999 (delete + identical insert), main purges keys 5000..5999.
MOVES = {
    "reinsert": ([D5, SAME_ROW], [D6]),
    "primary_key_set_to_itself": (["UPDATE {a}.t SET id = id WHERE id = 5"], [D6]),
    "reload_vs_purge": (["DELETE FROM {a}.t WHERE id < 1000", "INSERT INTO {a}.t SELECT %s FROM range(1000)" % WIDE[1]],
                        ["DELETE FROM {a}.t WHERE id BETWEEN 5000 AND 5999"]),
}


def merged_once(con, move):
    """side (snapshot 2) and main (3) as in MOVES, then side merged into main: the merged snapshot 4
    has parents [3, 2] but main's storage, so its first row group has the blocks and the live count
    of side's snapshot 2 with other rows deleted (4 lacks 6 and holds 5 there; 2 lacks 5 there and
    holds 6)."""
    start(con)
    run(con, "side", [MOVES[move][0]])
    run(con, "db", [MOVES[move][1]])
    detach_all(con)
    con.execute("SELECT * FROM differential_merge_branch('db', 'main', 'side', 'main')")
    attach(con, "side", "side")


@pytest.mark.parametrize("move", list(MOVES))
def test_syncing_a_branch_with_a_merge_result_keeps_every_row(con, move):
    """Merging main back into side (base 2, ours side's 5, theirs main's 4). 4's first row group has
    2's blocks and live count but other rows deleted, so a shortcut trusting equal layouts would
    not read it: key 5 (in 2's new row group only) would look deleted by theirs and key 6 untouched.
    The merge must keep 5 and delete 6 (with reload_vs_purge: keep keys 0..999, delete 5000..5999)."""
    merged_once(con, move)
    run(con, "side", [["UPDATE {a}.t SET v = -1 WHERE id = 200000"]])
    compare(con, MERGED, "'side', 'main'")


def test_merging_a_branch_again_after_a_merge_invents_no_conflict(con):
    """Merging side again into main (base 2, ours 4, theirs side's 5) after side updated key 5. A
    shortcut that read no row of 4 (only 2's last row group changed) would see ours delete key 5 (a
    delete_update conflict) and miss ours' delete of key 6. The merge must apply the update to 5 and
    keep 6 deleted, without conflict."""
    merged_once(con, "reinsert")
    run(con, "side", [["UPDATE {a}.t SET v = -1 WHERE id = 5"]])
    compare(con, MERGED)


def test_restore_to_a_sibling_snapshot(con):
    """Main (snapshot 3: key 5 deleted) is restored to branch x's snapshot 2 (key 6 deleted in the
    same row group): the restore snapshot 4 has parents [3, 2] and 2's storage, so from base 3 its
    table has 3's blocks and live count. Merging main into side (forked from 3, changed table u only),
    skipping t on both sides would keep 3's t; the merge must take theirs' insert of 5 and delete of 6."""
    start(con, branches=("x",))
    run(con, "x", [[D6]])
    run(con, "db", [[D5]])
    detach_all(con)
    assert scalar(con, "SELECT snapshot_id FROM differential_restore('db', 2)") == 4
    con.execute("CALL differential_create_branch('db', 'side', snapshot => 3)")
    attach(con, "side", "side")
    run(con, "side", [["INSERT INTO {a}.u VALUES (100)"]])
    compare(con, MERGED, "'side', 'main'")


def test_undo_by_restore_then_delete(con):
    """Main deletes key 5 (snapshot 2), side forks from 2; main is restored to 1 (an undo: snapshot 3,
    parents [2, 1], 1's storage) and then deletes key 6 (snapshot 4: 1's blocks, one row deleted,
    like 2). Merging main into side (base 2): taking 4's t for 2's would keep side's t; the merge must
    re-insert 5 and delete 6."""
    start(con, branches=())
    run(con, "db", [[D5]])
    con.execute("CALL differential_create_branch('db', 'side', snapshot => 2)")
    detach_all(con)
    assert scalar(con, "SELECT snapshot_id FROM differential_restore('db', 1)") == 3
    attach(con, "db")
    run(con, "db", [[D6]])
    attach(con, "side", "side")
    run(con, "side", [["UPDATE {a}.t SET v = -1 WHERE id = 200000"]])
    compare(con, MERGED, "'side', 'main'")


@pytest.mark.parametrize("first,value", [("STRUCT(a INTEGER)", "{'a': range}"), ("INTEGER[2]", "[range, range]"),
                                         ("UNION(a INTEGER, b VARCHAR)", "range::INTEGER")])
def test_first_column_without_a_top_level_segment(con, first, value):
    """A STRUCT, ARRAY or UNION column has no segment at column path [0] (only children such as
    [0, 0]); as the first column, it must still give each row group its size (from its validity),
    or the rowid ranges and live counts would all be empty and a side's deletes unseen. Ours
    deletes key 5 (first row group), theirs updates key 200000 (second row group)."""
    start(con, (f"s {first}, id INTEGER PRIMARY KEY, v INTEGER", f"{value}, range, range"))
    run(con, "side", [["UPDATE {a}.t SET v = -1 WHERE id = 200000"]])
    run(con, "db", [[D5]])
    compare(con, MERGED)


@pytest.mark.parametrize("base,ours,theirs", [
    (4, 3, 2),  # a sibling base (key 7 deleted, same row group and count): an ancestor of neither side
    (5, 3, 2),  # the base is a later snapshot of ours
    (3, 5, 2),  # the base is ours' parent, not an ancestor of theirs
    (3, 3, 2),  # base == ours
    (1, 3, 3),  # ours == theirs
    (2, 5, 5),
    (5, 5, 4),
])
def test_merge_snapshots_with_any_base(con, base, ours, theirs):
    """1: main's root; 2: side deletes 6; 3: main deletes 5; 4: x deletes 7; 5: main deletes 8 and
    updates 200000. The shortcut may be used only for a side that descends from the base."""
    start(con, branches=("side", "x"))
    run(con, "side", [[D6]])
    run(con, "db", [[D5]])
    run(con, "x", [["DELETE FROM {a}.t WHERE id = 7"]])
    run(con, "db", [["DELETE FROM {a}.t WHERE id = 8", "UPDATE {a}.t SET v = -1 WHERE id = 200000"]])
    # No key changes differently on both sides against any of these bases: every merge succeeds.
    compare(con, MERGED, f"{base}, {ours}, {theirs}", kind="snapshots")


def test_table_dropped_and_recreated_on_a_side(con):
    """Same definition, new storage, one row different (the catalog shows no schema change)."""
    start(con)
    run(con, "side", [["DROP TABLE {a}.t", f"CREATE TABLE {{a}}.t ({WIDE[0]})",
                       f"INSERT INTO {{a}}.t SELECT {WIDE[1]} FROM range({N})", "UPDATE {a}.t SET v = -1 WHERE id = 9"]])
    run(con, "db", [[D5]])
    compare(con, MERGED)


def test_overflow_strings_uncompressed(con):
    """Uncompressed long strings live in overflow blocks (additional_block_ids): ours changes one in
    the middle (same length, same prefix), theirs changes a row of another row group."""
    con.execute("SET force_compression = 'uncompressed'")
    start(con, ("id INTEGER PRIMARY KEY, s VARCHAR", "range, CASE WHEN range % 1000 = 0 THEN "
                "repeat(md5(range::VARCHAR) || md5((-range)::VARCHAR), 100) ELSE 's' END"))
    run(con, "side", [["UPDATE {a}.t SET s = s || '!' WHERE id = 200000"]])
    run(con, "db", [["UPDATE {a}.t SET s = s[1:1000] || reverse(s[1001:]) WHERE id = 3000"]])
    assert compare(con, MERGED)["u"] == ["ours", "theirs"]
