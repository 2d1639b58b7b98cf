"""differential_merge_ancestry's pages (page_size =>, before_snapshot_id =>): walked page by page, newest first, they
give exactly the rows of the full call, every column, on random histories and on edges out of creation order; a
page needs no history below it; and bad paging arguments are refused."""
import random
import sqlite3

from differential_testing import refused
from test_ancestry_walk import (
    grow_out_of_order_history,
    grow_random_history,
    recorded_edges,
)

COLUMNS = "snapshot_id, kind, parents, reachable_from, candidate, selected_base, selection_state, expired"


def full(con, ours, theirs):
    return con.execute(f"SELECT {COLUMNS} FROM differential_merge_ancestry('h', ?, ?)", [ours, theirs]).fetchall()


def paged(con, ours, theirs, size):
    """Every page from the newest down, each starting below the last row of the previous one."""
    rows, before = [], None
    while True:
        page = con.execute(f"SELECT {COLUMNS} FROM differential_merge_ancestry('h', ?, ?, page_size => ?, "
                           "before_snapshot_id => ?)", [ours, theirs, size, before]).fetchall()
        assert len(page) <= size
        assert [r[0] for r in page] == sorted((r[0] for r in page), reverse=True)  # newest first
        rows += page
        if len(page) < size:
            return rows
        before = page[-1][0]


def test_pages_put_together_are_the_full_answer_on_random_histories(con, repository):
    rng = random.Random(11)
    grow_random_history(con, rng)
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM differential_snapshots('h')").fetchall()]
    pairs = [(rng.choice(ids), rng.choice(ids)) for _ in range(25)] + [(max(ids), min(ids)), (min(ids), max(ids))]
    assert any(len(parents) > 1 for parents in recorded_edges(repository, "h").values()), "no merge snapshot"
    for ours, theirs in pairs:
        expected = sorted(full(con, ours, theirs), reverse=True)
        for size in (1, 3, 7, 1000):
            assert paged(con, ours, theirs, size) == expected, (ours, theirs, size)


def test_a_page_reads_no_history_below_it(con, repository):
    # A long line of snapshots, then the parent edges below the newest ten are cut in the metadata: the full call
    # can no longer reach the root, but the first page never reads that far.
    con.execute("ATTACH 'differential:h' AS h")
    con.execute("CREATE TABLE h.t AS SELECT 1 AS x")
    for i in range(40):
        con.execute("INSERT INTO h.t VALUES (?)", [i])
        con.execute("CALL differential_create_snapshot('h')")
    con.execute("DETACH h")
    first = con.execute(f"SELECT {COLUMNS} FROM differential_merge_ancestry('h', 40, 39, page_size => 5)").fetchall()
    assert [r[0] for r in first] == [40, 39, 38, 37, 36]
    assert [r[3] for r in first] == ["ours", "both", "both", "both", "both"]
    assert {r[5] for r in first} == {39} and first[1][4] is True  # 39 is the base, and the only candidate
    db = sqlite3.connect(repository / "metadata.sqlite")
    with db:
        db.execute("DELETE FROM snapshot_parents WHERE snapshot_id < 30")
    db.close()
    again = con.execute(f"SELECT {COLUMNS} FROM differential_merge_ancestry('h', 40, 39, page_size => 5)").fetchall()
    assert again == first
    assert len(full(con, 40, 39)) == 40 - 29 + 1  # the full call now stops at 29, which lost its parent


def test_pages_follow_parents_out_of_creation_order(con, repository):
    grow_out_of_order_history(con, repository)
    assert paged(con, 3, 1, 2) == sorted(full(con, 3, 1), reverse=True)


def test_bad_paging_arguments_are_refused(con):
    con.execute("ATTACH 'differential:h' AS h")
    con.execute("CREATE TABLE h.t AS SELECT 1 AS x")
    con.execute("CALL differential_create_snapshot('h')")
    refused(con, "SELECT * FROM differential_merge_ancestry('h', 1, 1, page_size => 0)", "invalid_argument")
    refused(con, "SELECT * FROM differential_merge_ancestry('h', 1, 1, before_snapshot_id => 5)", "invalid_argument")
    refused(con, "SELECT * FROM differential_merge_ancestry('h', 1, 9, page_size => 5)", "snapshot_not_found")
