"""The durability table, by SIGKILL of the leader during a commit loop: with SHIP_WAL 'sync' every acknowledged commit
is recovered; with 'async' the recovered branch is a prefix of what was acknowledged, missing at most about
SHIP_INTERVAL of commits. The recovered database verifies clean. DIFFERENTIAL_SHIP_KILLS sets the number of kill
points of the sync test (default 20; the slow run uses 200); DIFFERENTIAL_SHIP_SEED its random seed."""
import os
import random
import signal
import time

import pytest

from differential_testing import connect
from replication_helpers import COMMIT_LOOP, acknowledgements, python_process, recovered_ids

KILLS = int(os.environ.get("DIFFERENTIAL_SHIP_KILLS", "20"))
SEED = int(os.environ.get("DIFFERENTIAL_SHIP_SEED", str(random.randrange(1 << 30))))


def chain_listing(s3):
    """The head and every epoch object (kind 1 commit, 2 seal; size), for a failure's message."""
    root = s3.path / "lake"
    lines = [(root / "heads" / "orders" / "main").read_text()]
    for path in sorted((root / "epochs").rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            lines.append(f"{path.relative_to(root)} kind {data[12]} size {len(data)}")
    return "\n".join(lines)


def run_leader_until_killed(code, delay):
    """Starts the leader, kills it `delay` seconds after it is ready; returns its acknowledged (id, time) pairs and
    the id it started from."""
    leader = python_process(code)
    first = leader.stdout.readline()
    assert first.startswith("ready"), first + leader.stderr.read()
    start_id = int(first.split()[1])
    time.sleep(delay)
    leader.send_signal(signal.SIGKILL)
    killed_at = time.time()
    out, _ = leader.communicate()
    acks = acknowledgements(out)
    return start_id, acks, killed_at


def test_sync_leader_killed_loses_no_acknowledged_commit(s3, tmp_path):
    rng = random.Random(SEED)
    leader_repo = tmp_path / "leader"
    standby = connect(tmp_path / "standby")
    standby.execute(s3.secret_sql)
    acknowledged = set()
    attempted = set()
    for kill in range(KILLS):
        code = COMMIT_LOOP.format(repository=str(leader_repo), secret=s3.secret_sql, url=s3.url, mode="sync",
                                  pause=0)
        start_id, acks, _ = run_leader_until_killed(code, rng.uniform(0.05, 1.5))
        acknowledged |= {i for i, _ in acks}
        # The commit in flight at the kill may or may not have happened; nothing else may appear.
        attempted |= set(range(start_id, (max(i for i, _ in acks) if acks else start_id - 1) + 2))
        try:
            ids, row, problems = recovered_ids(standby, s3.url, f"r{kill}")
        except Exception as error:
            raise AssertionError(f"seed {SEED}, kill {kill} (started at {start_id}, {len(acks)} acks): {error}\n"
                                 + chain_listing(s3)) from error
        missing = acknowledged - set(ids)
        assert not missing, f"seed {SEED}, kill {kill}: acknowledged commits lost: {sorted(missing)[:10]}"
        assert set(ids) <= attempted, f"seed {SEED}, kill {kill}: unknown ids {sorted(set(ids) - attempted)[:10]}"
        assert problems == 0
    assert len(acknowledged) >= KILLS  # the loop made progress


def test_async_leader_killed_recovers_a_prefix(s3, tmp_path):
    rng = random.Random(SEED)
    leader_repo = tmp_path / "leader"
    standby = connect(tmp_path / "standby")
    standby.execute(s3.secret_sql)
    for kill in range(3):
        code = COMMIT_LOOP.format(repository=str(leader_repo), secret=s3.secret_sql, url=s3.url, mode="async",
                                  pause=0.02)
        start_id, acks, killed_at = run_leader_until_killed(code, rng.uniform(3.0, 5.0))
        assert acks
        ids, row, problems = recovered_ids(standby, s3.url, f"a{kill}")
        assert problems == 0
        # A prefix of the acknowledged history: 0..m-1, nothing after a gap.
        assert ids == list(range(len(ids))), f"seed {SEED}: not a prefix: {ids[-5:]}"
        assert len(ids) <= acks[-1][0] + 2
        # At most about SHIP_INTERVAL (1 s) of commits is lost; the slack covers a slow PUT on a loaded machine.
        old_enough = [i for i, at in acks if at < killed_at - 4.0]
        assert set(old_enough) <= set(ids), f"seed {SEED}: lost commits acknowledged 4 s before the kill"
