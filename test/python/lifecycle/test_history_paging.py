"""differential_snapshots pages (page_size =>, before_snapshot_id =>) and merge ancestry over a long history: the
listing a page gives equals the same slice of the whole listing, and the base of a long fork is its fork point."""
from differential_testing import refused


def take_snapshots(con, alias, count, start):
    for i in range(count):
        con.execute(f"INSERT INTO {alias}.t VALUES (?)", [start + i])
        con.execute(f"CALL differential_create_snapshot('{alias}')")


def test_pages_are_slices_of_the_whole_listing(con):
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id BIGINT)")
    take_snapshots(con, "db", 12, 0)
    con.execute("CALL differential_expire_snapshots('db', versions => [4, 5])")
    whole = con.execute("SELECT * EXCLUDE (open_in_process) FROM differential_snapshots('db')").fetchall()
    assert [r[0] for r in whole] == [1, 2, 3, 6, 7, 8, 9, 10, 11, 12]

    def page(**args):
        named = "".join(f", {k} => {v}" for k, v in args.items())
        return con.execute(f"SELECT * EXCLUDE (open_in_process) FROM differential_snapshots('db'{named})").fetchall()

    # The newest page, in snapshot_id order like the whole listing; then backwards from its first id.
    assert page(page_size=3) == whole[-3:]
    assert page(page_size=3, before_snapshot_id=10) == whole[-6:-3]
    assert page(page_size=3, before_snapshot_id=7) == whole[1:4]
    assert page(page_size=100) == whole
    assert page(before_snapshot_id=3) == whole[:2]
    assert page(page_size=5, before_snapshot_id=1) == []
    # NULL means "not given", as for the other named arguments.
    assert page(page_size="NULL", before_snapshot_id="NULL") == whole


def test_page_size_refusals_change_nothing(con):
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id BIGINT)")
    take_snapshots(con, "db", 2, 0)
    for size in (0, -3):
        message = refused(con, f"SELECT * FROM differential_snapshots('db', page_size => {size})", "invalid_argument")
        assert "page_size" in message
    assert con.execute("SELECT count(*) FROM differential_snapshots('db')").fetchone()[0] == 2


def test_ancestry_of_a_long_fork_selects_the_fork_point(con):
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id BIGINT)")
    take_snapshots(con, "db", 60, 0)
    con.execute("CALL differential_create_branch('db', 'side')")
    con.execute("ATTACH 'differential:db' AS side (BRANCH 'side')")
    take_snapshots(con, "side", 5, 1000)
    take_snapshots(con, "db", 5, 2000)
    heads = dict(con.execute("SELECT branch_name, head_snapshot_id FROM differential_branches('db')").fetchall())
    rows = con.execute(
        "SELECT snapshot_id, reachable_from, candidate, selected_base, selection_state "
        "FROM differential_merge_ancestry('db', ?, ?)", [heads["main"], heads["side"]]).fetchall()
    assert len(rows) == 70
    assert [r[0] for r in rows if r[2]] == [60]
    assert {(r[3], r[4]) for r in rows} == {(60, "selected")}
    assert [r[0] for r in rows if r[1] == "both"] == list(range(1, 61))
