"""A sync leader killed at each labelled step of shipping (DIFFERENTIAL_CRASH_POINT): before and after an epoch's
PUT, after a new chain's seal, after its head move. The restarted leader recognises its own objects in the store
(no head_conflict), keeps shipping, and a recovery holds every acknowledged commit and verifies clean."""
import pytest

from differential_testing import connect
from replication_helpers import acknowledgements, python_process, recovered_ids

LEADER = """
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{url}', SHIP_WAL 'sync')")
con.execute("CREATE TABLE IF NOT EXISTS orders.t (id INTEGER, payload VARCHAR)")
next_id = con.execute("SELECT coalesce(max(id) + 1, 0) FROM orders.t").fetchone()[0]
for _ in range({commits}):
    con.execute(f"INSERT INTO orders.t VALUES ({{next_id}}, 'p')")
    print(f"ack {{next_id}} 0", flush=True)
    if next_id % 4 == 3:
        con.execute("CHECKPOINT orders")  # the next commit starts a new chain
    next_id += 1
con.execute("DETACH orders")
print("done", flush=True)
"""


@pytest.mark.parametrize("point", ["ship.before_epoch_put:5", "ship.after_epoch_put:5", "ship.after_first_epoch_put:2",
                                   "ship.after_seal_put:2",
                                   "ship.after_head_move:2"])
def test_restart_after_a_kill_inside_shipping(s3, tmp_path, point):
    leader_repo = tmp_path / "leader"
    code = LEADER.format(repository=str(leader_repo), secret=s3.secret_sql, url=s3.url, commits=12)
    first = python_process(code, env={"DIFFERENTIAL_CRASH_POINT": point})
    out, err = first.communicate(timeout=300)
    assert first.returncode == -9, f"the crash point {point} was not reached: {out}\n{err}"
    acknowledged = {i for i, _ in acknowledgements(out)}
    second = python_process(code)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0 and "done" in out, err
    acknowledged |= {i for i, _ in acknowledgements(out)}
    standby = connect(tmp_path / "standby")
    standby.execute(s3.secret_sql)
    ids, row, problems = recovered_ids(standby, s3.url, "r")
    assert acknowledged <= set(ids), sorted(acknowledged - set(ids))
    assert ids == list(range(len(ids)))
    assert problems == 0
