"""Smoke: a sync leader ships, a standby recovers the branch from the epochs in another process."""
from differential_testing import connect, scalar, run_python


def test_sync_leader_then_recover(s3, tmp_path):
    leader = tmp_path / "leader"
    con = connect(leader)
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}', SHIP_WAL 'sync')")
    con.execute("CREATE TABLE orders.orders (id INTEGER, amount DECIMAL(10, 2))")
    con.execute("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1000)")
    print(con.execute("SELECT * FROM differential_shipping()").fetchall())
    con.execute("INSERT INTO orders.orders SELECT range, range % 100 FROM range(1000, 1500)")
    print(con.execute("SELECT * FROM differential_shipping()").fetchall())
    standby = connect(tmp_path / "standby")
    standby.execute(s3.secret_sql)
    print(standby.execute(f"SELECT * FROM differential_recover_branch('{s3.url}heads/orders/main', 'orders2')").fetchall())
    standby.execute("ATTACH 'differential:orders2' AS o2")
    assert scalar(standby, "SELECT count(*) FROM o2.orders") == 1500
