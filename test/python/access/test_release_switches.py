"""The release extension has no test switches: DIFFERENTIAL_CRASH_POINT, DIFFERENTIAL_FAULT_POINT,
DIFFERENTIAL_PAUSE_POINT and DIFFERENTIAL_MUTATION change nothing in build/release, while the same
environment kills or fails the testing build (so each check here can fail)."""
import json
import subprocess
import sys

import pytest

from differential_testing import EXTENSION, RELEASE_EXTENSION, REPO_ROOT

SWITCHES = ("DIFFERENTIAL_CRASH_POINT", "DIFFERENTIAL_FAULT_POINT", "DIFFERENTIAL_PAUSE_POINT", "DIFFERENTIAL_MUTATION")

# A snapshot of one committed row, in a fresh process: prints the rows read back at the snapshot, or the error.
SNAPSHOT_RUN = """
import json, sys, duckdb
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{sys.argv[1]}'")
con.execute(f"SET differential_repository = '{sys.argv[2]}'")
try:
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t AS SELECT 42 AS v")
    con.execute("CALL differential_create_snapshot('db')")
    print(json.dumps({"rows": con.execute("SELECT v FROM db.t AT (VERSION => 1)").fetchall()}))
except duckdb.Error as error:
    print(json.dumps({"error": str(error)}))
"""


def run_snapshot(extension, repository, **switches):
    env = {"PYTHONPATH": str(REPO_ROOT / "test" / "python"), **switches}
    return subprocess.run(
        [sys.executable, "-c", SNAPSHOT_RUN, str(extension), str(repository)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture(scope="module")
def builds():
    if "asan" in EXTENSION.parts:
        pytest.skip("make test-asan runs its own build of the testing extension only")
    assert RELEASE_EXTENSION.exists(), f"{RELEASE_EXTENSION} is missing: build it with `make build`"
    return RELEASE_EXTENSION, EXTENSION


def test_a_crash_point_kills_only_the_testing_build(builds, tmp_path):
    release, testing = builds
    crash = {"DIFFERENTIAL_CRASH_POINT": "snapshot.before_commit:1"}
    killed = run_snapshot(testing, tmp_path / "testing", **crash)
    assert killed.returncode == -9, (killed.returncode, killed.stdout, killed.stderr)
    survived = run_snapshot(release, tmp_path / "release", **crash)
    assert survived.returncode == 0, survived.stderr
    assert json.loads(survived.stdout) == {"rows": [[42]]}


def test_a_fault_point_fails_only_the_testing_build(builds, tmp_path):
    release, testing = builds
    fault = {"DIFFERENTIAL_FAULT_POINT": "metadata.commit:1"}
    failed = json.loads(run_snapshot(testing, tmp_path / "testing", **fault).stdout)
    assert "error" in failed, failed
    survived = run_snapshot(release, tmp_path / "release", **fault)
    assert json.loads(survived.stdout) == {"rows": [[42]]}, survived.stderr


def test_the_release_binary_never_reads_a_switch(builds):
    """The pause point and the mutations have no cheap trigger: the release binary does not even hold the names
    of the variables that would turn them on, while the testing build holds all four."""
    release, testing = builds
    assert all(name.encode() in testing.read_bytes() for name in SWITCHES)
    release_bytes = release.read_bytes()
    assert [name for name in SWITCHES if name.encode() in release_bytes] == []
