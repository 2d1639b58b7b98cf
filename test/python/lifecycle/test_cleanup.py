"""Expiry and cleanup really reclaim space, never touch live data, and survive corruption checks."""
import pathlib

import duckdb
import pytest

from differential_testing import refused, repository_state, scalar


def storage(con):
    row = con.execute("SELECT stored_bytes, live_bytes, garbage_bytes, segments FROM differential_storage_info()").fetchone()
    return dict(zip(["stored", "live", "garbage", "segments"], row))


def test_space_is_reclaimed_after_rewrites(con):
    con.execute("ATTACH 'differential:churn' AS churn")
    for version in range(8):
        con.execute(
            f"CREATE OR REPLACE TABLE churn.t AS SELECT range + {version} AS x, repeat('y', 40) || range AS s "
            "FROM range(200000)"
        )
        con.execute("CALL differential_create_snapshot('churn')")
    con.execute("DETACH churn")
    before = storage(con)
    expired = con.execute("SELECT snapshot_id FROM differential_expire_snapshots('churn', older_than => INTERVAL 0 SECOND)").fetchall()
    assert sorted(expired) == [(i,) for i in range(1, 8)]
    result = con.execute("SELECT bytes_freed, segments_deleted + segments_compacted FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()
    after = storage(con)
    assert result[0] > 0 and result[1] > 0
    assert after["stored"] <= 1.3 * after["live"], (before, after, result)
    # Eight versions of x (the strings are shared by all of them) were live before; one is now.
    assert after["live"] < before["live"] / 2 and after["stored"] < before["stored"] / 2, (before, after)
    con.execute("ATTACH 'differential:churn' AS churn")
    assert scalar(con, "SELECT min(x), max(x), count(*) FROM churn.t") == 7
    assert con.execute("SELECT min(x), max(x), count(*) FROM churn.t AT (VERSION => 8)").fetchone() == (7, 200006, 200000)
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    # A second cleanup finds nothing more to do (removed segments are not counted again).
    assert con.execute(
        "SELECT bytes_freed, segments_deleted, segments_compacted FROM differential_cleanup_old_files(cleanup_all => true)"
    ).fetchone() == (0, 0, 0)


def test_pinned_snapshot_survives_expiry_and_cleanup(con):
    con.execute("ATTACH 'differential:pin' AS pin")
    con.execute("CREATE TABLE pin.t AS SELECT range AS x FROM range(100000)")
    con.execute("CALL differential_create_snapshot('pin')")
    con.execute("CREATE OR REPLACE TABLE pin.t AS SELECT range * 2 AS x FROM range(100000)")
    con.execute("CALL differential_create_snapshot('pin')")
    # A read-only attachment of snapshot 1 pins it.
    con.execute("ATTACH 'differential:pin' AS old (SNAPSHOT 1)")
    con.execute("CALL differential_expire_snapshots('pin', versions => [1])")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    assert scalar(con, "SELECT sum(x) FROM old.t") == sum(range(100000))
    con.execute("DETACH old")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    assert scalar(con, "SELECT sum(x) FROM pin.t") == 2 * sum(range(100000))
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def test_lifecycle_refusals_change_nothing(con, repository):
    con.execute("ATTACH 'differential:life' AS life")
    con.execute("CREATE TABLE life.t AS SELECT range AS x FROM range(10)")
    con.execute("CALL differential_create_snapshot('life')")
    con.execute("CALL differential_create_branch('life', 'side')")
    con.execute("INSERT INTO life.t VALUES (10)")
    con.execute("CALL differential_create_snapshot('life')")
    before = repository_state(con)
    refused(con, "CALL differential_restore('life', 1)", "active_attachment_or_transaction")
    refused(con, "CALL differential_drop_branch('life', 'main')", "cannot_drop_main")
    refused(con, "CALL differential_drop_branch('life', 'nope')", "branch_not_found")
    refused(con, "CALL differential_drop_database('nope')", "database_not_found")
    refused(con, "CALL differential_drop_database('life')", "active_attachment_or_transaction")
    refused(con, "CALL differential_expire_snapshots('life', versions => [2])", "snapshot_is_branch_head")
    refused(con, "CALL differential_expire_snapshots('life', versions => [99])", "snapshot_not_found")
    refused(con, "CALL differential_expire_snapshots('life')", "invalid_argument")
    refused(con, "CALL differential_clone_database('life', 'life', snapshot => 1)", "database_exists")
    refused(con, "CALL differential_clone_database('life', 'copy', snapshot => 9)", "snapshot_not_found")
    refused(con, "CALL differential_cleanup_old_files(cleanup_all => true, older_than => INTERVAL 1 DAY)", "invalid_argument")
    con.execute("DETACH life")
    refused(con, "CALL differential_restore('life', 9)", "snapshot_not_found")
    refused(con, "CALL differential_restore('life', 1, branch => 'nope')", "branch_not_found")
    assert repository_state(con) == before
    # Held by a transaction of another connection after DETACH: still not closed.
    con.execute("ATTACH 'differential:life' AS life")
    reader = con.cursor()
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM life.t").fetchone()[0] == 11
    con.execute("DETACH life")
    refused(con, "CALL differential_restore('life', 1)", "active_attachment_or_transaction")
    reader.execute("COMMIT")
    reader.close()
    assert repository_state(con) == before
    assert scalar(con, "CALL differential_restore('life', 1)") == 3


def test_corrupted_segment_byte_is_detected_never_returned(con, repository):
    con.execute("ATTACH 'differential:bad' AS bad")
    con.execute("CREATE TABLE bad.t AS SELECT range AS x, 'value ' || range AS s FROM range(300000)")
    con.execute("CALL differential_create_snapshot('bad')")
    con.execute("DETACH bad")
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    segment = max((repository / "segments").iterdir(), key=lambda p: p.stat().st_size)
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0xFF
    segment.write_bytes(bytes(data))
    problems = con.execute("SELECT check_name, problems, detail FROM differential_verify() WHERE problems > 0").fetchall()
    assert problems and problems[0][0] == "chunks" and "corrupt_chunk" in problems[0][2], problems
    con.execute("ATTACH 'differential:bad' AS bad (READ_ONLY)")
    with pytest.raises(duckdb.Error) as info:
        con.execute("SELECT sum(x), max(s) FROM bad.t").fetchall()
    assert "[differential:corrupt_chunk]" in str(info.value)


def test_pins_of_killed_processes_are_released(con, repository):
    import os
    import signal
    import subprocess
    import sys

    from differential_testing import REPO_ROOT, child_env

    con.execute("ATTACH 'differential:dead' AS dead")
    con.execute("CREATE TABLE dead.t AS SELECT hash(range) AS x FROM range(1000000)")
    con.execute("CALL differential_create_snapshot('dead')")
    # Far smaller than what snapshot 1 holds (a million incompressible values), so its segment is mostly garbage once the pin goes.
    con.execute("CREATE OR REPLACE TABLE dead.t AS SELECT range * 3 AS x FROM range(2000)")
    con.execute("CALL differential_create_snapshot('dead')")
    con.execute("DETACH dead")
    reader = subprocess.Popen(
        [sys.executable, "-u", "-c",
         "import time\n"
         "from differential_testing import connect\n"
         f"con = connect({str(repository)!r})\n"
         "con.execute(\"ATTACH 'differential:dead' AS old (SNAPSHOT 1)\")\n"
         "print(con.execute('SELECT count(DISTINCT x) FROM old.t').fetchone()[0], flush=True)\n"
         "time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True, env=child_env(PYTHONPATH=str(REPO_ROOT / "test" / "python"), PATH="/usr/bin:/bin"),
    )
    assert int(reader.stdout.readline()) == 1000000
    con.execute("CALL differential_expire_snapshots('dead', versions => [1])")
    first = con.execute("SELECT pins_released FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()
    assert first == (0,)  # the reader is alive: its pin holds
    os.kill(reader.pid, signal.SIGKILL)
    reader.wait()
    second = con.execute("SELECT pins_released, bytes_freed FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()
    # Exactly the killed reader's pin goes; what it held (snapshot 1's million values) is freed.
    assert second[0] == 1 and second[1] > 0, second
    assert scalar(con, "SELECT sum(problems) FROM differential_verify('dead')") == 0
    con.execute("ATTACH 'differential:dead' AS dead (READ_ONLY)")
    assert scalar(con, "SELECT sum(x) FROM dead.t") == 3 * sum(range(2000))
    refused(con, "SELECT * FROM differential_verify('ghost')", "database_not_found")


def test_segment_ids_are_never_reused_after_cleanup(con):
    # Cleanup removes the newest segment here; a segment made afterwards must not take its id,
    # or readers holding the removed file open would read the wrong bytes.
    con.execute("ATTACH 'differential:first' AS first")
    con.execute("CREATE TABLE first.t AS SELECT range AS x FROM range(300000)")
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    con.execute("DETACH first")
    con.execute("CALL differential_drop_database('first')")
    assert con.execute("SELECT segments_deleted FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()[0] == 1
    con.execute("ATTACH 'differential:second' AS second")
    con.execute("CREATE TABLE second.t AS SELECT range * 2 AS x FROM range(300000)")
    assert scalar(con, "SELECT sum(x) FROM second.t") == 2 * sum(range(300000))
    con.execute("DETACH second")
    con.execute("ATTACH 'differential:second' AS second (READ_ONLY)")
    assert scalar(con, "SELECT sum(x) FROM second.t") == 2 * sum(range(300000))
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def test_refused_restore_records_nothing(con, repository):
    import subprocess
    import sys

    from differential_testing import REPO_ROOT, child_env

    con.execute("ATTACH 'differential:held' AS held")
    con.execute("CREATE TABLE held.t AS SELECT range AS x FROM range(1000)")
    con.execute("CALL differential_create_snapshot('held')")
    con.execute("DETACH held")
    # Another process changes the branch after its head snapshot (checkpointed: no WAL) and keeps it open.
    holder = subprocess.Popen(
        [sys.executable, "-u", "-c",
         "import sys\n"
         "from differential_testing import connect\n"
         f"con = connect({str(repository)!r})\n"
         "con.execute(\"ATTACH 'differential:held' AS held\")\n"
         "con.execute('DELETE FROM held.t WHERE x < 10')\n"
         "con.execute('CHECKPOINT held')\n"
         "print('holding', flush=True)\n"
         "sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env=child_env(PYTHONPATH=str(REPO_ROOT / "test" / "python"), PATH="/usr/bin:/bin"),
    )
    assert holder.stdout.readline().strip() == "holding"
    before = repository_state(con)
    refused(con, "CALL differential_restore('held', 1)", "branch_locked")
    assert repository_state(con) == before
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.wait() == 0
    row = con.execute("SELECT snapshot_id, preserved_snapshot_id FROM differential_restore('held', 1)").fetchone()
    assert row == (3, 2)
    con.execute("ATTACH 'differential:held' AS held (READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM held.t") == 1000
    assert scalar(con, "SELECT count(*) FROM held.t AT (VERSION => 2)") == 990
