"""Shared writers (WRITERS 'shared'): several hosts, each a separate OS process with its own repository, publish one
database through its branch head in a versitygw bucket; a head someone else moved is never overwritten, and the work
is kept (branch_conflict, differential_resolve_conflict, ON_CONFLICT 'branch'). The spec's use case, a race of four
writers with ledgers, and the refusals."""
import json
import os
import pathlib
import subprocess
import sys

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
    # ON_CONFLICT is stored with the database; main follows S3 from the next ATTACH.
    a.rows("DETACH team")
    a.rows("ATTACH 'differential:team' AS team")
    assert a.rows("SELECT count(*) FILTER (status = 'done'), count(*) FILTER (status = 'blocked') FROM team.tasks") \
        == [[10, 0]]
    assert a.rows("SELECT branch_name FROM differential_branches('team') ORDER BY 1") == \
        [["main"], ["main-conflict-3"]]


WRITER = r"""
import json, sys
from differential_testing import connect
writer, count, repository, setup, url = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
con = connect(repository)
con.execute(setup)
attach = f"ATTACH 'differential:race' AS race (DATA_PATH '{url}', WRITERS 'shared', ON_CONFLICT 'branch')"
con.execute(attach)
ledger = []
for i in range(count):
    con.execute("INSERT INTO race.events VALUES (?, ?)", [writer, i])
    snapshot_id, branch = con.execute(
        "SELECT snapshot_id, branch_name FROM differential_create_snapshot('race', message => ?)",
        [f"w{writer}-{i}"]).fetchone()
    ledger.append({"writer": writer, "i": i, "snapshot": snapshot_id, "branch": branch})
    if branch != "main":
        # The work is on its conflict branch; start again from the newest head in S3.
        con.execute("DETACH race")
        con.execute(attach)
kept = {}
con.execute("DETACH race")
for entry in ledger:
    if entry["branch"] != "main":
        con.execute(f"ATTACH 'differential:race' AS k (BRANCH '{entry['branch']}', READ_ONLY)")
        kept[entry["branch"]] = con.execute("SELECT writer, i FROM k.events ORDER BY 1, 2").fetchall()
        con.execute("DETACH k")
print(json.dumps({"ledger": ledger, "kept": kept}))
"""


def test_racing_writers_lose_and_duplicate_no_acknowledged_snapshot(s3, tmp_path):
    count = int(os.environ.get("DIFFERENTIAL_SHARED_WRITER_TRANSACTIONS", "50"))
    first = Host(tmp_path / "setup", s3.secret_sql)
    first.rows(f"ATTACH 'differential:race' AS race (DATA_PATH '{s3.url}', WRITERS 'shared')")
    first.rows("CREATE TABLE race.events (writer INTEGER, i INTEGER)")
    assert first.rows("SELECT snapshot_id FROM differential_create_snapshot('race')") == [[1]]
    first.close()

    env = dict(os.environ, PYTHONPATH=f"{HERE.parent}{os.pathsep}{HERE}")
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(w), str(count), str(tmp_path / f"writer{w}"),
                                 s3.secret_sql, s3.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env) for w in range(4)]
    results = []
    for process in writers:
        out, err = process.communicate(timeout=1800)
        assert process.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    ledger = [entry for result in results for entry in result["ledger"]]
    assert len(ledger) == 4 * count

    on_main = [e for e in ledger if e["branch"] == "main"]
    kept = [e for e in ledger if e["branch"] != "main"]
    history = published_history(prefix_root(s3), "race")
    # Every snapshot acknowledged on main is in main's published history, once; the history holds nothing else
    # (besides the setup's snapshot 1).
    assert sorted([e["snapshot"] for e in on_main] + [1]) == sorted(history)
    assert len(set(history)) == len(history)
    assert on_main, "no writer ever published"
    # Main's data is exactly the acknowledged rows: no kept row leaked into it, none acknowledged went missing.
    reader = Host(tmp_path / "reader", s3.secret_sql)
    reader.rows(f"ATTACH 'differential:{s3.url}heads/race/main' AS head")
    assert sorted(map(tuple, reader.rows("SELECT writer, i FROM head.events"))) == \
        sorted((e["writer"], e["i"]) for e in on_main)
    reader.close()
    # Every kept snapshot is on its own conflict branch, with its row.
    for result in results:
        for entry in result["ledger"]:
            if entry["branch"] != "main":
                assert entry["branch"] == f"main-conflict-{entry['snapshot']}"
                assert [entry["writer"], entry["i"]] in result["kept"][entry["branch"]]
    print(f"{len(on_main)} snapshots on main, {len(kept)} on conflict branches")


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
