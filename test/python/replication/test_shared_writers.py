"""Shared writers (WRITERS 'shared'): several hosts, each a separate OS process with its own repository, publish one
database through its branch head in a versitygw bucket; a head someone else moved is never overwritten, and the work
is kept (branch_conflict, differential_resolve_conflict, ON_CONFLICT 'branch'). The spec's use case, a race of four
writers with ledgers (directly, and through Toxiproxy with delays and cuts), and the refusals."""
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from differential_testing import refused, repository_state  # noqa: E402
from shared_fixtures import HERE, Host, published_history  # noqa: E402


def prefix_root(s3):
    return pathlib.Path(s3.path) / s3.url.split("/", 3)[3]


@pytest.fixture
def hosts(s3, tmp_path):
    made = []

    def make(name):
        host = Host(tmp_path / name, s3.secret_sql)
        made.append(host)
        return host

    yield make
    for host in made:
        host.close()


def test_the_spec_use_case_several_writers_without_a_lock_service(s3, hosts):
    url = s3.url
    a, b = hosts("host_a"), hosts("host_b")
    a.rows(f"ATTACH 'differential:team' AS team (DATA_PATH '{url}', WRITERS 'shared')")
    a.rows("CREATE TABLE team.tasks AS SELECT range AS id, 'open' AS status FROM range(100)")
    assert a.rows("SELECT snapshot_id FROM differential_create_snapshot('team', name => 'initial')") == [[1]]

    b.rows(f"ATTACH 'differential:team' AS team (DATA_PATH '{url}', WRITERS 'shared')")
    # Host B starts from the newest head in S3: host A's snapshot 1, imported without downloading.
    assert b.rows("SELECT count(*) FROM team.tasks WHERE status = 'open'") == [[100]]
    b.rows("UPDATE team.tasks SET status = 'done' WHERE id < 10")
    assert b.rows("SELECT snapshot_id FROM differential_create_snapshot('team', message => 'closed 10 tasks')") == [[2]]

    a.rows("UPDATE team.tasks SET status = 'blocked' WHERE id = 50")
    message = a.error("SELECT snapshot_id FROM differential_create_snapshot('team', message => 'blocked task 50')")
    assert message.startswith("IO Error: [differential:branch_conflict] Branch main of database team moved in S3 "
                              "to snapshot 2, published by another writer, since this repository last saw it at "
                              "snapshot 1. "), message
    assert "kept as local snapshot 3" in message and "differential_resolve_conflict('team', keep => 'branch')" in message
    # Nothing in S3 was overwritten: the head is host B's snapshot 2, and its history is 2 <- 1.
    assert published_history(prefix_root(s3), "team") == [2, 1]

    a.rows("DETACH team")
    assert a.rows("SELECT kept_branch FROM differential_resolve_conflict('team', keep => 'branch')") == \
        [["main-conflict-3"]]
    a.rows("ATTACH 'differential:team' AS team")
    assert a.rows("SELECT count(*) FROM team.tasks WHERE status = 'done'") == [[10]]
    assert a.rows("SELECT count(*) FROM team.tasks WHERE status = 'blocked'") == [[0]]
    # Host A's work is kept, on its branch.
    a.rows("ATTACH 'differential:team' AS kept (BRANCH 'main-conflict-3', READ_ONLY)")
    assert a.rows("SELECT status, count(*) FROM kept.tasks GROUP BY 1 ORDER BY 1") == [["blocked", 1], ["open", 99]]
    a.rows("DETACH kept")
    # Resolving again: there is no conflict any more.
    a.rows("DETACH team")
    assert a.error("SELECT * FROM differential_resolve_conflict('team', keep => 'branch')").startswith(
        "Invalid Input Error: [differential:no_conflict] ")
    # Host A, now based on snapshot 2, publishes on top of host B's work.
    a.rows("ATTACH 'differential:team' AS team")
    a.rows("UPDATE team.tasks SET status = 'blocked' WHERE id = 50")
    assert a.rows("SELECT snapshot_id, branch_name FROM differential_create_snapshot('team')") == [[4, "main"]]
    assert published_history(prefix_root(s3), "team") == [4, 2, 1]


def test_on_conflict_branch_forks_automatically_and_the_call_succeeds(s3, hosts):
    url = s3.url
    a, b = hosts("host_a"), hosts("host_b")
    a.rows(f"ATTACH 'differential:team' AS team (DATA_PATH '{url}', WRITERS 'shared', ON_CONFLICT 'branch')")
    a.rows("CREATE TABLE team.tasks AS SELECT range AS id, 'open' AS status FROM range(100)")
    a.rows("CALL differential_create_snapshot('team')")
    b.rows(f"ATTACH 'differential:team' AS team (DATA_PATH '{url}', WRITERS 'shared')")
    b.rows("UPDATE team.tasks SET status = 'done' WHERE id < 10")
    b.rows("CALL differential_create_snapshot('team')")

    a.rows("UPDATE team.tasks SET status = 'blocked' WHERE id = 50")
    assert a.rows("SELECT snapshot_id, branch_name FROM differential_create_snapshot('team')") == \
        [[3, "main-conflict-3"]]
    assert published_history(prefix_root(s3), "team") == [2, 1]
    # Still attached on top of kept work: the next snapshot is kept as well, never published on main.
    a.rows("UPDATE team.tasks SET status = 'blocked' WHERE id = 51")
    assert a.rows("SELECT snapshot_id, branch_name FROM differential_create_snapshot('team')") == \
        [[4, "main-conflict-4"]]
    assert published_history(prefix_root(s3), "team") == [2, 1]
    # ON_CONFLICT is stored with the database; main follows S3 from the next ATTACH.
    a.rows("DETACH team")
    a.rows("ATTACH 'differential:team' AS team")
    assert a.rows("SELECT count(*) FILTER (status = 'done'), count(*) FILTER (status = 'blocked') FROM team.tasks") \
        == [[10, 0]]
    assert a.rows("SELECT branch_name FROM differential_branches('team') ORDER BY 1") == \
        [["main"], ["main-conflict-3"], ["main-conflict-4"]]


def test_a_writer_fetches_an_imported_head_in_the_background_then_needs_no_store(s3, hosts):
    url = s3.url
    a, b = hosts("host_a"), hosts("host_b")
    a.rows(f"ATTACH 'differential:team' AS team (DATA_PATH '{url}', WRITERS 'shared')")
    a.rows("CREATE TABLE team.tasks AS SELECT range AS id, 'open' AS status, hash(range) % 1000003 AS points "
           "FROM range(300000)")
    a.rows("CALL differential_create_snapshot('team')")
    expected = a.rows("SELECT count(*), sum(points), count(DISTINCT status) FROM team.tasks")

    b.rows("SET enable_logging = true")
    b.rows(f"ATTACH 'differential:team' AS team (DATA_PATH '{url}', WRITERS 'shared')")
    fetched = []
    deadline = time.monotonic() + 120
    while not fetched and time.monotonic() < deadline:
        fetched = b.rows("SELECT detail FROM duckdb_logs_parsed('differential') "
                         "WHERE event IN ('shared_chunks_fetched', 'shared_chunks_fetch_failed')")
        time.sleep(0.2)
    assert fetched and fetched[0][0].startswith("team: ") and " bytes made local" in fetched[0][0], fetched
    chunks, _, made_local = fetched[0][0].removeprefix("team: ").partition(" chunks, ")
    assert int(chunks) > 0 and int(made_local.split()[0]) > 1_000_000, fetched

    # With every pack gone from the bucket, host B reads, writes and checkpoints: nothing needs the store.
    packs = prefix_root(s3) / "packs"
    hidden = packs.with_name("packs-hidden")
    packs.rename(hidden)
    try:
        assert b.rows("SELECT count(*), sum(points), count(DISTINCT status) FROM team.tasks") == expected
        b.rows("UPDATE team.tasks SET status = 'done' WHERE id % 1000 = 0")
        b.rows("CHECKPOINT team")
        assert b.rows("SELECT count(*) FROM team.tasks WHERE status = 'done'") == [[300]]
    finally:
        hidden.rename(packs)
    assert b.rows("SELECT snapshot_id FROM differential_create_snapshot('team')") == [[2]]
    assert published_history(prefix_root(s3), "team") == [2, 1]


WRITER = r"""
import json, sys, time
from differential_testing import connect
writer, count, repository, setup, url = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
con = connect(repository)
con.execute(setup)
attach = f"ATTACH 'differential:race' AS race (DATA_PATH '{url}', WRITERS 'shared', ON_CONFLICT 'branch')"


def attach_again():
    # Through a cut connection an ATTACH can fail too (reading the head); it changed nothing, so retry.
    for attempt in range(100):
        try:
            con.execute(attach)
            return
        except Exception:
            time.sleep(0.1)
    con.execute(attach)


def reattach_invalidated():
    # DuckDB invalidates an attachment whose checkpoint failed, and a writer that started from another's
    # head reads evicted chunks back from S3 when it checkpoints: through a cut that can fail. DuckDB's
    # remedy, as its message says: detach and attach again.
    try:
        con.execute("DETACH race")
    except Exception as e:
        assert "race" in str(e) and ("does not exist" in str(e) or "invalidated" in str(e)), e
    attach_again()


attach_again()
ledger = []
for i in range(count):
    try:
        con.execute("INSERT INTO race.events VALUES (?, ?)", [writer, i])
    except Exception as e:
        # Not acknowledged either: the row may have committed before the checkpoint that failed.
        ledger.append({"writer": writer, "i": i, "snapshot": None, "branch": None, "error": str(e)[:200]})
        reattach_invalidated()
        continue
    try:
        snapshot_id, branch = con.execute(
            "SELECT snapshot_id, branch_name FROM differential_create_snapshot('race', message => ?)",
            [f"w{writer}-{i}"]).fetchone()
    except Exception as e:
        # Not acknowledged: the outcome is unknown (the work stays local and pending, or was published).
        ledger.append({"writer": writer, "i": i, "snapshot": None, "branch": None, "error": str(e)[:200]})
        continue
    ledger.append({"writer": writer, "i": i, "snapshot": snapshot_id, "branch": branch})
    if branch != "main":
        # The work is on its conflict branch; start again from the newest head in S3.
        con.execute("DETACH race")
        attach_again()
kept = {}
con.execute("DETACH race")
for entry in ledger:
    if entry["branch"] not in (None, "main"):
        con.execute(f"ATTACH 'differential:race' AS k (BRANCH '{entry['branch']}', READ_ONLY)")
        kept[entry["branch"]] = con.execute("SELECT writer, i FROM k.events ORDER BY 1, 2").fetchall()
        con.execute("DETACH k")
print(json.dumps({"ledger": ledger, "kept": kept}))
"""


def race(s3, tmp_path, secret_sql, count):
    """Four writer processes, `count` transactions each, on one branch; returns their ledgers after checking
    them against the bucket: every acknowledged snapshot is on main (in its history through the commit records,
    once, with its row) or on its conflict branch (with its row, which is not on main)."""
    first = Host(tmp_path / "setup", s3.secret_sql)
    first.rows(f"ATTACH 'differential:race' AS race (DATA_PATH '{s3.url}', WRITERS 'shared')")
    first.rows("CREATE TABLE race.events (writer INTEGER, i INTEGER)")
    assert first.rows("SELECT snapshot_id FROM differential_create_snapshot('race')") == [[1]]
    first.close()

    env = dict(os.environ, PYTHONPATH=f"{HERE.parent}{os.pathsep}{HERE}")
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(w), str(count), str(tmp_path / f"writer{w}"),
                                 secret_sql, s3.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env) for w in range(4)]
    results = []
    for process in writers:
        out, err = process.communicate(timeout=3000)
        assert process.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    ledger = [entry for result in results for entry in result["ledger"]]
    assert len(ledger) == 4 * count
    on_main = [e for e in ledger if e["branch"] == "main"]
    kept = [e for e in ledger if e["branch"] not in (None, "main")]
    failed = [e for e in ledger if e["branch"] is None]
    assert on_main, "no writer ever published"

    history = published_history(prefix_root(s3), "race")
    assert len(set(history)) == len(history), "a snapshot twice in main's history"
    acknowledged = sorted(e["snapshot"] for e in on_main)
    assert len(set(acknowledged)) == len(acknowledged), "two writers acknowledged one snapshot id"
    assert set(acknowledged) <= set(history), "an acknowledged snapshot is not in main's history"
    if not failed:
        assert sorted(acknowledged + [1]) == sorted(history)
    # Main's data: every acknowledged row once; no row of kept work; others only from unacknowledged attempts.
    reader = Host(tmp_path / "reader", s3.secret_sql)
    reader.rows(f"ATTACH 'differential:{s3.url}heads/race/main' AS head")
    rows = [tuple(r) for r in reader.rows("SELECT writer, i FROM head.events")]
    reader.close()
    assert len(set(rows)) == len(rows), "a row twice on main"
    assert {(e["writer"], e["i"]) for e in on_main} <= set(rows)
    assert not {(e["writer"], e["i"]) for e in kept} & set(rows), "kept work leaked onto main"
    assert set(rows) <= {(e["writer"], e["i"]) for e in on_main + failed}
    if not failed:
        assert sorted(rows) == sorted((e["writer"], e["i"]) for e in on_main)
    for result in results:
        for entry in result["ledger"]:
            if entry["branch"] not in (None, "main"):
                assert entry["branch"] == f"main-conflict-{entry['snapshot']}"
                assert [entry["writer"], entry["i"]] in result["kept"][entry["branch"]]
    print(f"{len(on_main)} snapshots on main, {len(kept)} on conflict branches, {len(failed)} not acknowledged")
    return on_main, kept, failed


def transactions(default):
    return int(os.environ.get("DIFFERENTIAL_SHARED_WRITER_TRANSACTIONS", str(default)))


def test_racing_writers_lose_and_duplicate_no_acknowledged_snapshot(s3, tmp_path):
    on_main, kept, failed = race(s3, tmp_path, s3.secret_sql, transactions(50))
    assert not failed and kept, "four writers without faults: every call answers, and some lose a race"


def test_racing_writers_through_toxiproxy_with_delays_and_cuts(s3, s3_server, tmp_path):
    from toxiproxy import Toxiproxy

    proxy = Toxiproxy(s3_server.port)
    proxy.add("latency", "latency", latency=20, jitter=20)
    proxy.add("latency_up", "latency", stream="upstream", latency=10, jitter=10)
    stop = threading.Event()
    cuts = []

    def cut_now_and_then():
        # Every 1.5 s, connections are reset for 2.5 s (DIFFERENTIAL_SHARED_WRITER_CUT_SECONDS): requests in flight
        # fail, some after the server acted, and the client's retries may outlast the cut or not.
        while not stop.wait(1.5):
            proxy.add("cut", "reset_peer", stream="upstream", timeout=0)
            time.sleep(float(os.environ.get("DIFFERENTIAL_SHARED_WRITER_CUT_SECONDS", "2.5")))
            proxy.remove("cut")
            cuts.append(time.monotonic())

    cutter = threading.Thread(target=cut_now_and_then, daemon=True)
    cutter.start()
    try:
        secret = s3.secret_sql.replace(s3_server.endpoint, proxy.endpoint)
        race(s3, tmp_path, secret, transactions(20))
    finally:
        stop.set()
        cutter.join()
        proxy.close()
    assert len(cuts) >= 3, "the connections were not cut"


def test_refusals_change_nothing(s3, con, tmp_path):
    con.execute(s3.secret_sql)
    con.execute("ATTACH 'differential:other' AS other")
    con.execute("DETACH other")
    before = repository_state(con)
    refused(con, f"ATTACH 'differential:team' AS team (DATA_PATH '{s3.url}', WRITERS 'many')", "invalid_option")
    refused(con, f"ATTACH 'differential:team' AS team (DATA_PATH '{s3.url}', WRITERS 'shared', ON_CONFLICT 'merge')",
            "invalid_option")
    refused(con, "ATTACH 'differential:team' AS team (WRITERS 'shared')", "data_path_required")
    refused(con, "ATTACH 'differential:other' AS other (WRITERS 'shared')", "data_path_required")
    refused(con, f"ATTACH 'differential:team' AS team (DATA_PATH '{s3.url}', ON_CONFLICT 'branch')", "invalid_option")
    refused(con, "SELECT * FROM differential_resolve_conflict('other', keep => 'branch')", "no_conflict")
    refused(con, "SELECT * FROM differential_resolve_conflict('other', keep => 'theirs')", "invalid_argument")
    refused(con, "SELECT * FROM differential_resolve_conflict('nope', keep => 'branch')", "database_not_found")
    assert repository_state(con) == before
    assert not (pathlib.Path(s3.path) / "lake").exists() or not any((pathlib.Path(s3.path) / "lake").rglob("heads/*"))
