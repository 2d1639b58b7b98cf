"""Remote cleanup next to a shipping database: the base of the WAL chain its head names is a root, so a cleanup with
no grace period deletes nothing a recovery needs (the chain after a checkpoint has a base no snapshot names)."""
from differential_testing import connect
from replication_helpers import recovered_ids


def cleanup(con, s3):
    return con.execute(f"SELECT deleted_objects, roots FROM differential_cleanup_remote_files('{s3.url}', "
                       "grace => INTERVAL '0 seconds')").fetchone()


def test_cleanup_keeps_the_base_of_the_head_chain(s3, tmp_path):
    leader = connect(tmp_path / "leader")
    leader.execute(s3.secret_sql)
    leader.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}', SHIP_WAL 'sync')")
    leader.execute("CREATE TABLE orders.t (id INTEGER, payload VARCHAR)")
    for i in range(3):
        leader.execute(f"INSERT INTO orders.t VALUES ({i}, 'p')")
    leader.execute("CHECKPOINT orders")
    for i in range(3, 6):
        leader.execute(f"INSERT INTO orders.t VALUES ({i}, 'p')")  # the first starts a chain on a new base
    assert leader.execute("SELECT chain FROM differential_shipping()").fetchone()[0] >= 2
    other = connect()
    other.execute(s3.secret_sql)
    cleanup(other, s3)  # condemns what nothing reaches
    cleanup(other, s3)  # deletes it
    standby = connect(tmp_path / "standby")
    standby.execute(s3.secret_sql)
    ids, _, problems = recovered_ids(standby, s3.url, "r")
    assert ids == list(range(6))
    assert problems == 0
    leader.execute("DETACH orders")
