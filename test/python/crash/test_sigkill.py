"""Commits survive SIGKILL: after killing a committing writer (at random moments and at labelled crash
points) every acknowledged commit and snapshot is there, whole, and differential_verify is clean."""
import json
import os
import pathlib
import random
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
CRASH_POINTS = [
    "sync.before_segment_fsync",
    "sync.after_segment_fsync",
    "sync.before_inline_publish",
    "wal.after_spill",
    "publish.before_commit",
    "sync.after_publish",
    "snapshot.before_commit",
]


def python_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent)
    env.pop("DIFFERENTIAL_CRASH_POINT", None)
    return env


def run_writer(repository, start, kill_after, crash_point):
    env = python_env()
    if crash_point:
        env["DIFFERENTIAL_CRASH_POINT"] = crash_point
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "crash_writer.py"), str(repository), str(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines = []

    def read():
        for line in proc.stdout:
            lines.append(line.split())

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.time() + kill_after
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    if proc.poll() is None:
        proc.kill()  # SIGKILL
    proc.wait()
    reader.join()
    stderr = proc.stderr.read()
    assert proc.returncode == -9, f"writer ended by itself ({proc.returncode}): {stderr}"
    return lines


def check(repository):
    out = subprocess.run(
        [sys.executable, str(HERE / "crash_checker.py"), str(repository)],
        capture_output=True,
        text=True,
        env=python_env(),
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_no_acknowledged_commit_or_snapshot_is_lost(repository):
    iterations = int(os.environ.get("DIFFERENTIAL_CRASH_ITERATIONS", "24"))
    rng = random.Random(int(os.environ.get("DIFFERENTIAL_CRASH_SEED", "20261130")))
    acked_commit = -1
    acked_snapshots = {}
    start = 0
    for iteration in range(iterations):
        crash_point = None
        if iteration % 2 == 1:
            crash_point = f"{rng.choice(CRASH_POINTS)}:{rng.randint(1, 60)}"
        lines = run_writer(repository, start, rng.uniform(0.8, 3.0), crash_point)
        for words in lines:
            if words[0] == "commit":
                acked_commit = max(acked_commit, int(words[1]))
            elif words[0] == "snapshot":
                acked_snapshots[int(words[1])] = int(words[2])
        state = check(repository)
        context = f"iteration {iteration} crash point {crash_point}"
        assert {row[0] for row in state["verify"]} >= {"chunks"}, f"{context}: verify ran no checks"
        for name, checked, problems, detail in state["verify"]:
            assert problems == 0, f"{context}: verify {name}: {detail}"
        if acked_commit < 0 and "ledger" not in state:
            continue
        ledger = state["ledger"]
        # Every acknowledged commit is there, and nothing but whole transactions.
        assert ledger == list(range(len(ledger))), context
        assert state["mirror"] == ledger, context
        assert len(ledger) - 1 >= acked_commit, f"{context}: lost commits after {len(ledger) - 1} (acked {acked_commit})"
        for i, count in state["bulk"]:
            assert count == 150000 and i in ledger, context
        # Commits whose WAL went to segment records (the rest went inline): whole, and exactly the acknowledged ones.
        assert state.get("medium", []) == [[i, 1000] for i in ledger if i % 10 == 5], context
        snapshots = {int(k): v for k, v in state["snapshots"].items()}
        for sid, i in acked_snapshots.items():
            assert sid in snapshots, f"{context}: acknowledged snapshot {sid} is gone"
            count, low, high, mirror = snapshots[sid]
            assert (count, low, high, mirror) == (i + 1, 0, i, i + 1), f"{context}: snapshot {sid} = {snapshots[sid]}"
        for sid, (count, low, high, mirror) in snapshots.items():
            assert count == mirror and (count == 0 or (low, high) == (0, count - 1)), context
        start = len(ledger)
    assert acked_commit > 50, "the writer barely ran; the test proved nothing"
    assert len(acked_snapshots) >= 2
