"""The 1.1 specification's criss-cross history (snapshots 1 to 7, ending on branches ab and ba), shared by the
merge tests that start from it."""
from differential_testing import scalar


def crisscross(con, request_ids=False):
    """Builds it; `request_ids` names its two merges (an S3 database requires it)."""
    con.execute("ATTACH 'differential:crisscross' AS cc")
    con.execute("CREATE TABLE cc.orders (order_id INTEGER PRIMARY KEY, amount INTEGER, status VARCHAR)")
    con.execute("INSERT INTO cc.orders VALUES (1, 10, 'paid'), (2, 20, 'paid')")
    assert scalar(con, "CALL differential_create_snapshot('cc')") == 1
    con.execute("DETACH cc")
    con.execute("CALL differential_create_branch('crisscross', 'a', snapshot => 1)")
    con.execute("CALL differential_create_branch('crisscross', 'b', snapshot => 1)")
    for branch, sql, expected in (
        ("a", "UPDATE a.orders SET status = 'refunded' WHERE order_id = 1", 2),
        ("b", "UPDATE b.orders SET amount = 21 WHERE order_id = 2", 3),
    ):
        con.execute(f"ATTACH 'differential:crisscross' AS {branch} (BRANCH '{branch}')")
        con.execute(sql)
        assert scalar(con, f"CALL differential_create_snapshot('{branch}')") == expected
        con.execute(f"DETACH {branch}")
    assert con.execute("SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch("
                       "'crisscross', 'a', 'b', 'ab'" + (", request_id => 'ab'" if request_ids else "") + ")").fetchall() == [("ab", 4, "created_branch")]
    assert con.execute("SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch("
                       "'crisscross', 'b', 'a', 'ba'" + (", request_id => 'ba'" if request_ids else "") + ")").fetchall() == [("ba", 5, "created_branch")]
    for branch, order, expected in (("ab", 3, 6), ("ba", 4, 7)):
        con.execute(f"ATTACH 'differential:crisscross' AS {branch} (BRANCH '{branch}')")
        con.execute(f"INSERT INTO {branch}.orders VALUES ({order}, {order * 10}, 'open')")
        assert scalar(con, f"CALL differential_create_snapshot('{branch}')") == expected
        con.execute(f"DETACH {branch}")
