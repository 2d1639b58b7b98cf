"""The optional failover lease (SET differential_failover = 'lease'; docs/REPLICATION.md §7), leader and standbys as
separate OS processes against the versitygw server: a renewing leader keeps its standby waiting; a killed leader is
replaced within about the lease's duration plus a follow interval, with every acknowledged commit; a paused leader
that resumes after the takeover is fenced by the recovery seal (head_conflict), its data stays local and the history
is one line; of two standbys exactly one becomes the leader."""
import signal
import time

from differential_testing import connect, refused, scalar
from lease_testing import (FOLLOW_S, LEASE_S, assert_one_line, start_leader, start_standby, standby_lease,
                           wait_for)
from replication_helpers import recovered_ids


def took_over(value):
    return value[1] is not None and value[1].startswith(("took over", "failed"))


def ids(host, table="orders.t"):
    return [row[0] for row in host.rows(f"SELECT id FROM {table} ORDER BY id")]


def test_renewing_leader_keeps_the_standby_waiting(s3, tmp_path):
    leader = start_leader(tmp_path / "leader", s3)
    standby = start_standby(tmp_path / "standby", s3)
    try:
        # Three lease durations of commits and idle renewals: the standby never takes over.
        deadline = time.monotonic() + 3 * LEASE_S
        n = 0
        while time.monotonic() < deadline:
            leader.rows(f"INSERT INTO orders.t VALUES ({n})")
            n += 1
            time.sleep(0.3)
        time.sleep(LEASE_S)
        takeover_as, lease = standby_lease(standby)
        assert takeover_as == "orders" and lease.startswith("watching "), lease
        assert leader.rows("SELECT lease, fenced FROM differential_shipping()") == [["held", False]]
        wait_for(lambda: standby.rows("SELECT count(*) FROM live.t")[0][0], lambda v: v == n)
        assert standby.rows("SELECT count(*) FROM duckdb_databases() WHERE database_name = 'orders'") == [[0]]
    finally:
        standby.close()
        leader.close()


def test_killed_leader_is_replaced_with_every_acknowledged_commit(s3, tmp_path):
    leader = start_leader(tmp_path / "leader", s3)
    standby = start_standby(tmp_path / "standby", s3)
    acknowledged = []
    for n in range(30):
        leader.rows(f"INSERT INTO orders.t VALUES ({n})")  # sync: acknowledged = shipped
        acknowledged.append(n)
    leader.process.send_signal(signal.SIGKILL)
    leader.process.wait()
    value, seconds = wait_for(lambda: standby_lease(standby), took_over)
    assert value[1].startswith("took over as orders"), value
    # Lapse is judged on the standby's clock from the last renewal it saw (at most a third of the lease before the
    # kill); the upper bound is generous for a loaded machine (lease + interval + recovery).
    assert 2 * LEASE_S / 3 - FOLLOW_S <= seconds <= LEASE_S + FOLLOW_S + 20, seconds
    assert ids(standby) == acknowledged
    shipping = "SELECT database_name, mode, lease, fenced FROM differential_shipping()"
    wait_for(lambda: standby.rows(shipping), lambda v: v == [["orders", "sync", "held", False]], timeout=30)
    standby.rows("INSERT INTO orders.t VALUES (1000)")
    # A third host recovers the branch and sees the new leader's commit: it shipped.
    check = connect(tmp_path / "third")
    check.execute(s3.secret_sql)
    recovered, row, problems = recovered_ids(check, s3.url, "third_copy")
    assert recovered == acknowledged + [1000] and problems == 0
    assert_one_line(s3.path / "lake")
    standby.close()


def test_paused_leader_resumed_after_takeover_is_fenced(s3, tmp_path):
    leader = start_leader(tmp_path / "leader", s3)
    standby = start_standby(tmp_path / "standby", s3)
    for n in range(10):
        leader.rows(f"INSERT INTO orders.t VALUES ({n})")
    leader.process.send_signal(signal.SIGSTOP)
    try:
        value, _ = wait_for(lambda: standby_lease(standby), took_over)
        assert value[1].startswith("took over as orders"), value
        standby.rows("INSERT INTO orders.t VALUES (100)")
    finally:
        leader.process.send_signal(signal.SIGCONT)
    # Its next commit meets the lost lease or the recovery seal: head_conflict, never a fork.
    error = leader.error("INSERT INTO orders.t VALUES (50)")
    assert "[differential:head_conflict]" in error, error
    assert leader.rows("SELECT fenced OR lease LIKE 'lost%' FROM differential_shipping()") == [[True]]
    # It renews no more: a lease it kept would keep every standby from ever taking over again.
    lease = leader.rows("SELECT lease FROM differential_shipping()")[0][0]
    assert lease.startswith(("lost to ", "given up")), lease
    assert ids(leader) == list(range(10))  # its data stays local (the refused commit was rolled back)
    error = leader.error("INSERT INTO orders.t VALUES (51)")
    assert "[differential:head_conflict]" in error, error
    found = assert_one_line(s3.path / "lake")
    assert any(kind == 2 for epochs in found.values() for _, kind in epochs), found  # the recovery seal
    check = connect(tmp_path / "third")
    check.execute(s3.secret_sql)
    recovered, row, problems = recovered_ids(check, s3.url, "third_copy")
    assert recovered == list(range(10)) + [100] and problems == 0
    leader.close()
    standby.close()


def test_two_standbys_exactly_one_leader(s3, tmp_path):
    leader = start_leader(tmp_path / "leader", s3)
    standbys = [start_standby(tmp_path / f"standby{i}", s3) for i in range(2)]
    for n in range(5):
        leader.rows(f"INSERT INTO orders.t VALUES ({n})")
    leader.process.send_signal(signal.SIGKILL)
    leader.process.wait()
    wait_for(lambda: [standby_lease(s) for s in standbys], lambda v: any(took_over(x) for x in v))
    time.sleep(3 * LEASE_S + 2 * FOLLOW_S)  # the loser had every chance to take over too
    states = [standby_lease(s)[1] for s in standbys]
    winners = [i for i, state in enumerate(states) if state.startswith("took over as orders")]
    assert len(winners) == 1, states
    loser = standbys[1 - winners[0]]
    assert states[1 - winners[0]].startswith("watching "), states  # watching the new leader's renewals
    assert loser.rows("SELECT count(*) FROM duckdb_databases() WHERE database_name = 'orders'") == [[0]]
    winner = standbys[winners[0]]
    winner.rows("INSERT INTO orders.t VALUES (7)")
    wait_for(lambda: loser.rows("SELECT count(*) FROM live.t")[0][0], lambda v: v == 6)
    assert_one_line(s3.path / "lake")
    for s in standbys:
        s.close()


def test_lease_refusals(s3, tmp_path):
    con = connect(tmp_path / "repo")
    con.execute(s3.secret_sql)
    refused(con, "SET differential_failover = 'maybe'", "invalid_argument")
    refused(con, "SET differential_lease_duration = 0.5", "invalid_argument")
    assert scalar(con, "SELECT current_setting('differential_failover')") == "off"
    # A database that does not ship has no lease to take over.
    con.execute(f"ATTACH 'differential:plain' AS plain (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE plain.t AS SELECT 1 AS id")
    con.execute("SELECT * FROM differential_create_snapshot('plain')")
    head = f"differential:{s3.url}heads/plain/main"
    other = connect(tmp_path / "standby")
    other.execute(s3.secret_sql)
    refused(other, f"ATTACH '{head}' AS live (FOLLOW true, TAKEOVER_AS 'plain')", "invalid_option")  # lease off
    other.execute("SET differential_failover = 'lease'")
    refused(other, f"ATTACH '{head}' AS live (FOLLOW true, TAKEOVER_AS 'plain')", "not_shipping")
    refused(other, f"ATTACH '{head}' AS live (TAKEOVER_AS 'plain')", "invalid_option")  # no FOLLOW
    refused(con, "ATTACH 'differential:x' AS x (TAKEOVER_AS 'y')", "unknown_option")  # a local database
    assert scalar(other, "SELECT count(*) FROM differential_followers()") == 0
