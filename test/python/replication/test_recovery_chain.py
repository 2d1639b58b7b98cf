"""A same-identity recovery writes the recovered state as epoch 1 of a new chain before its seal names that chain and
its base: a new leader that dies before it ever ships leaves nothing to wait for. A second recovery reads the
recovered state by following the seal (the head never moved) and can itself take the branch over; the first new
leader, back, is fenced."""
from differential_testing import connect, refused


def recover(con, url, name, same_identity):
    return con.execute(f"SELECT database_name, shipped_epoch, chain, fenced FROM differential_recover_branch("
                       f"'{url}heads/orders/main', '{name}', same_identity => {str(same_identity).lower()})").fetchone()


def host(tmp_path, name, s3):
    con = connect(tmp_path / name)
    con.execute(s3.secret_sql)
    return con


def test_second_recovery_after_a_new_leader_that_never_shipped(s3, tmp_path):
    leader = host(tmp_path, "leader", s3)
    leader.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}', SHIP_WAL 'sync')")
    leader.execute("CREATE TABLE orders.t (id INTEGER)")
    for i in range(4):
        leader.execute(f"INSERT INTO orders.t VALUES ({i})")
    old_chain = leader.execute("SELECT chain FROM differential_shipping()").fetchone()[0]
    leader.execute("DETACH orders")

    first = host(tmp_path, "first", s3)
    _, _, chain, fenced = recover(first, s3.url, "orders", True)
    assert (chain, fenced) == (old_chain, True)  # it recovered the old chain's tip and sealed it
    # The first new leader dies before it ever ships: the head still names the old chain.
    second = host(tmp_path, "second", s3)
    _, epoch, chain, fenced = recover(second, s3.url, "orders", True)
    assert fenced and chain > old_chain and epoch == 1  # it followed the recovery seal into the recovered chain
    second.execute("ATTACH 'differential:orders' AS orders (SHIP_WAL 'sync')")
    assert [r[0] for r in second.execute("SELECT id FROM orders.t ORDER BY id").fetchall()] == [0, 1, 2, 3]
    second.execute("INSERT INTO orders.t VALUES (4)")
    second.execute("DETACH orders")

    # The first new leader, back: its ATTACH replays the recovered WAL and checkpoints, and shipping that meets
    # the second recovery's seal on the chain the first one's seal named.
    refused(first, "ATTACH 'differential:orders' AS orders (SHIP_WAL 'sync')", "head_conflict")

    check = host(tmp_path, "check", s3)
    recover(check, s3.url, "c", False)
    check.execute("ATTACH 'differential:c' AS c")
    assert [r[0] for r in check.execute("SELECT id FROM c.t ORDER BY id").fetchall()] == [0, 1, 2, 3, 4]
    assert check.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0] == 0
