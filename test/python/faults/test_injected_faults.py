"""Labelled I/O faults (DIFFERENTIAL_FAULT_POINT, docs/DURABILITY.md §5): each makes one real call fail once with
EIO (or ENOSPC). The operation must fail with a [differential:...] error, change nothing acknowledged, and leave
the repository so that the same operation succeeds in a fresh process and differential_verify() is clean."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROWS_BEFORE = 2000


def run_step(repository, name, fault=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent)
    env.pop("DIFFERENTIAL_CRASH_POINT", None)
    env.pop("DIFFERENTIAL_FAULT_POINT", None)
    if fault:
        env["DIFFERENTIAL_FAULT_POINT"] = fault
    out = subprocess.run(
        [sys.executable, str(HERE / "fault_steps.py"), str(repository), name],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, f"step {name} (fault {fault}) died ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    lines = out.stdout.strip().splitlines()
    outcome = json.loads(lines[-1])
    outcome["printed"] = [json.loads(line) for line in lines[:-1]]
    return outcome


def succeed(repository, name):
    outcome = run_step(repository, name)
    assert outcome["error"] is None, outcome
    assert "close_error" not in outcome, outcome
    return outcome["result"]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A repository built once, by processes that have all exited (so cleanup may reclaim their segments)."""
    root = tmp_path_factory.mktemp("fault_template") / "repository"
    for name in ("make_shop", "make_compactable", "make_deletable", "drop_garbage"):
        succeed(root, name)
    return root


@pytest.fixture
def repo(template, tmp_path):
    copy = tmp_path / "repository"
    shutil.copytree(template, copy)
    return copy


def assert_clean(state):
    checks = {check: problems for (check, problems, _) in state["verify"]}
    assert checks == {"chunks": 0, "references": 0, "roots": 0, "wal_ranges": 0}, state["verify"]


def assert_io_error(outcome, errno_text="Input/output error"):
    message = outcome["error"]
    assert message is not None, f"the injected fault did not fail the operation: {outcome}"
    # Our error, with its code, as DuckDB shows it: the code first after DuckDB's type prefix.
    assert re.search(r"(^|: )\[differential:io_error\] ", message), message
    assert errno_text in message, message


def segment_files(repository):
    return sorted(p.name for p in (repository / "segments").glob("*.seg"))


# (label, operation): the operation's first pass of the label fails.
COMMIT_EDGES = [
    "wal.range_write",
    "segment.open",
    "segment.header_write",
    "segment.header_fsync",
    "segment.dir_fsync",
    "segment.fdatasync",
]


@pytest.mark.parametrize("label", COMMIT_EDGES)
def test_a_failed_commit_changes_nothing(repo, label):
    before = run_step(repo, "observe")["result"]
    assert_clean(before)
    outcome = run_step(repo, "large_insert", fault=f"{label}:1")
    assert_io_error(outcome)
    assert run_step(repo, "observe")["result"] == before
    succeed(repo, "large_insert")
    after = succeed(repo, "observe")
    assert after["main"] == sorted(before["main"] + [[9001, "inserted"]])
    assert after["dev"] == before["dev"] and after["snapshots"] == before["snapshots"]
    assert after["repository"] == before["repository"]
    assert_clean(after)


@pytest.mark.parametrize("label", COMMIT_EDGES)
def test_a_small_commit_writes_no_segment(repo, label):
    # Its WAL bytes are published inline: none of the segment calls is on its path, so a fault there cannot fail it.
    before = succeed(repo, "observe")
    outcome = run_step(repo, "insert", fault=f"{label}:1")
    assert outcome["error"] is None, outcome
    after = succeed(repo, "observe")
    assert after["main"] == sorted(before["main"] + [[9001, "inserted"]])
    assert_clean(after)


def test_enospc_is_reported_as_such(repo):
    before = run_step(repo, "observe")["result"]
    outcome = run_step(repo, "large_insert", fault="wal.range_write:1:ENOSPC")
    assert_io_error(outcome, "No space left on device")
    assert run_step(repo, "observe")["result"] == before


def test_a_failed_chunk_write_keeps_the_acknowledged_commit(repo):
    before = succeed(repo, "observe")
    outcome = run_step(repo, "insert_then_checkpoint", fault="segment.record_write:1")
    assert outcome["printed"] == [{"acknowledged": 9002}], outcome
    assert_io_error(outcome)
    after = succeed(repo, "observe")
    # The commit acknowledged before the failed checkpoint is there; nothing else changed.
    assert after["main"] == sorted(before["main"] + [[9002, "acknowledged before the checkpoint"]])
    assert {k: v for k, v in after.items() if k != "main"} == {k: v for k, v in before.items() if k != "main"}
    assert_clean(after)
    succeed(repo, "insert_then_checkpoint")
    assert_clean(succeed(repo, "observe"))


@pytest.mark.parametrize("label", ["segment.reader_open", "segment.read"])
def test_a_failed_read_is_an_io_error_not_corruption(repo, label):
    before = succeed(repo, "observe")
    outcome = run_step(repo, "read", fault=f"{label}:1")
    assert_io_error(outcome)
    assert "corrupt" not in outcome["error"], outcome
    assert succeed(repo, "observe") == before
    assert succeed(repo, "read") == [[ROWS_BEFORE, sum(range(ROWS_BEFORE))]]


def test_a_failed_branch_lock_open_refuses_the_attachment(repo):
    before = succeed(repo, "observe")
    outcome = run_step(repo, "attach_for_writing", fault="branch_lock.open:1")
    assert_io_error(outcome)
    assert "branch lock" in outcome["error"], outcome
    assert succeed(repo, "observe") == before
    assert succeed(repo, "attach_for_writing") == [[ROWS_BEFORE]]


def test_a_failed_holder_write_is_logged_and_the_lock_still_held(repo):
    # Writing "process <pid>" into the lock file only names the holder in other processes' refusals: its
    # failure is handled (logged as a warning), the attachment works and the flock is held.
    outcome = run_step(repo, "logged_attach", fault="branch_lock.write:1")
    assert outcome["error"] is None, outcome
    warnings = [row for row in outcome["result"]["parsed"] if row[0] == "branch_lock_holder_not_written"]
    assert len(warnings) == 1, outcome["result"]
    assert "Input/output error" in warnings[0][2]
    assert [level for level, _ in outcome["result"]["raw"]].count("WARNING") == 1, outcome["result"]


@pytest.fixture(scope="module")
def cleaned_reference(template, tmp_path_factory):
    """The segment files a cleanup without faults leaves, from a copy of the same template."""
    copy = tmp_path_factory.mktemp("fault_reference") / "repository"
    shutil.copytree(template, copy)
    result = succeed(copy, "cleanup")
    return result, segment_files(copy)


@pytest.mark.parametrize("label", ["segment.unlink", "compaction.write", "compaction.fdatasync"])
def test_a_failed_cleanup_loses_nothing_and_the_next_one_finishes(repo, label, cleaned_reference):
    before = succeed(repo, "observe")
    originals = set(segment_files(repo))
    outcome = run_step(repo, "cleanup", fault=f"{label}:1")
    assert_io_error(outcome)
    assert succeed(repo, "observe") == before
    succeed(repo, "cleanup")
    assert succeed(repo, "observe") == before
    # The retry removed exactly the original segments a cleanup without faults removes, and what the
    # failed one left behind (a removed segment's file, a segment of dead copies) is gone too.
    (reference_counts,), reference_files = cleaned_reference
    assert reference_counts[0] >= 1 and reference_counts[1] >= 1, reference_counts
    assert originals & set(segment_files(repo)) == originals & set(reference_files)
    assert len(segment_files(repo)) == len(reference_files)
    assert succeed(repo, "cleanup") == [[0, 0]]


def test_a_failed_metadata_commit_changes_nothing(repo):
    before = succeed(repo, "observe")
    outcome = run_step(repo, "insert", fault="metadata.commit:1")
    message = outcome["error"]
    assert message is not None and re.search(r"(^|: )\[differential:metadata_error\] ", message), outcome
    assert "COMMIT" in message, message
    assert succeed(repo, "observe") == before
    succeed(repo, "insert")
    assert_clean(succeed(repo, "observe"))
