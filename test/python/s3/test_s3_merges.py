"""S3 merges (spec 1.1, "Merging on S3") against versitygw: the spec's block with a second host attaching the moved
head, the refusals (no request_id, abort while a head write may be in flight, other arguments on retry), a SIGKILL at
each durable publication step followed by a retry that equals an uninterrupted merge, a publication_uncertain request
resolved both ways, and a head_conflict caused by another copy of the repository moving the head mid-merge."""
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import time

import pytest

from crisscross_history import crisscross
from differential_testing import REPO_ROOT, connect, refused, repository_state, scalar, tree_fingerprint

SPEC_ROWS = [(1, "40.00"), (2, "60.00"), (5, "18.00"), (9, "9.00")]

MERGE_SQL = ("SELECT branch_name, snapshot_id, merge_action, materialization_ms "
             "FROM differential_merge_branch('sales', 'main', 'feature', 'main', request_id => 'merge-feature', "
             "expected_base_snapshot_id => 1, expected_ours_snapshot_id => 3, expected_theirs_snapshot_id => 2)")


def build_sales(repository, s3):
    """The spec's history: snapshot 1 on main, 2 on feature (Max's amount), 3 on main (Uma); everything detached."""
    con = connect(repository)
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:sales' AS sales (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE sales.orders (order_id INTEGER PRIMARY KEY, customer VARCHAR, amount DECIMAL(10, 2), "
                "status VARCHAR)")
    con.execute("INSERT INTO sales.orders VALUES (1, 'Ada', 40.00, 'paid'), (2, 'Lin', 60.00, 'paid'), "
                "(5, 'Max', 15.00, 'paid')")
    assert scalar(con, "CALL differential_create_snapshot('sales')") == 1
    con.execute("CALL differential_create_branch('sales', 'feature')")
    con.execute("ATTACH 'differential:sales' AS feature (BRANCH 'feature')")
    con.execute("UPDATE feature.orders SET amount = 18.00 WHERE order_id = 5")
    assert scalar(con, "CALL differential_create_snapshot('feature')") == 2
    con.execute("INSERT INTO sales.orders VALUES (9, 'Uma', 9.00, 'open')")
    assert scalar(con, "CALL differential_create_snapshot('sales')") == 3
    con.execute("DETACH sales")
    con.execute("DETACH feature")
    return con


def head_path(s3, branch="main"):
    prefix = s3.url.split("/", 3)[3]
    return pathlib.Path(s3.path) / prefix / "heads" / "sales" / branch


def remote_rows(tmp_path, s3, name="host2"):
    """Another host with its own repository attaches the head as the spec shows."""
    other = connect(tmp_path / name)
    other.execute(s3.secret_sql)
    other.execute(f"ATTACH 'differential:{s3.url}heads/sales/main' AS sales_latest")
    rows = other.execute("SELECT order_id, amount::VARCHAR FROM sales_latest.orders ORDER BY order_id").fetchall()
    other.close()
    return rows


def request_state(con):
    return con.execute("SELECT state, result_snapshot_id, last_error_code FROM differential_merge_requests('sales') "
                       "WHERE request_id = 'merge-feature'").fetchone()


def merge_process(repository, s3, env):
    """Runs the spec's merge in another process; prints its row as JSON, or the error."""
    code = f"""
import json
from differential_testing import connect
con = connect({str(repository)!r})
con.execute({s3.secret_sql!r})
try:
    print(json.dumps(con.execute({MERGE_SQL!r}).fetchone()))
except Exception as e:
    print("error", e)
"""
    full_env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "test" / "python"), **env)
    return subprocess.Popen([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=full_env)


def interrupted_merge(tmp_path, s3, env):
    """Builds the spec's history, runs its merge in another process with `env` (a crash or fault point) and returns
    the repository, the head before the merge, the process's (returncode, stdout, stderr) and a new connection."""
    repository = tmp_path / "repo"
    build_sales(repository, s3).close()
    start_head = head_path(s3).read_text()
    process = merge_process(repository, s3, env)
    out, err = process.communicate(timeout=300)
    con = connect(repository)
    con.execute(s3.secret_sql)
    return start_head, (process.returncode, out, err), con


def assert_merged(con, tmp_path, s3):
    """What an uninterrupted merge leaves: main at snapshot 4 with both parents, its export recorded, the request
    complete, the head naming snapshot 4 with the merged rows, and a repository that verifies clean."""
    assert con.execute("SELECT head_snapshot_id FROM differential_branches('sales') WHERE branch_name = 'main'"
                       ).fetchone() == (4,)
    assert con.execute("SELECT count(*) FROM differential_branches('sales') WHERE branch_name LIKE '\\_\\_%' "
                       "ESCAPE '\\'").fetchone() == (0,)
    assert request_state(con) == ("complete", 4, None)
    con.execute("ATTACH 'differential:sales' AS merged (READ_ONLY)")
    assert con.execute("SELECT order_id, amount::VARCHAR FROM merged.orders ORDER BY 1").fetchall() == SPEC_ROWS
    con.execute("DETACH merged")
    head = head_path(s3).read_text()
    assert "snapshot 4" in head, head
    assert remote_rows(tmp_path, s3) == SPEC_ROWS
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def test_spec_block_merging_on_s3(tmp_path, s3):
    con = build_sales(tmp_path / "repo", s3)
    assert con.execute("SELECT ready, merge_action, target_state FROM "
                       "differential_merge_branch_preflight('sales', 'main', 'feature', 'main')").fetchone() == (
        True, "merged", "clean")
    row = con.execute(MERGE_SQL).fetchone()
    assert row[:3] == ("main", 4, "merged")
    assert row[3] == 0  # no input was evicted
    assert_merged(con, tmp_path, s3)
    # Replaying the completed request returns its result and writes nothing more.
    before = head_path(s3).stat().st_mtime_ns
    assert con.execute(MERGE_SQL).fetchone()[:3] == ("main", 4, "merged")
    assert head_path(s3).stat().st_mtime_ns == before


def test_struct_fields_merge_on_s3_and_another_host_sees_both_changes(tmp_path, s3):
    """nested => 'fields' on S3: two sides changing different fields of one STRUCT value both land in the moved head,
    and a retry with the other mode is refused as another request."""
    con = connect(tmp_path / "repo")
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:prefs' AS prefs (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE prefs.users (id INTEGER PRIMARY KEY, settings STRUCT(theme VARCHAR, lang VARCHAR))")
    con.execute("INSERT INTO prefs.users VALUES (1, {'theme': 'plain', 'lang': 'en'})")
    con.execute("CALL differential_create_snapshot('prefs')")
    con.execute("CALL differential_create_branch('prefs', 'agent')")
    con.execute("ATTACH 'differential:prefs' AS agent (BRANCH 'agent')")
    con.execute("UPDATE agent.users SET settings = {'theme': 'dark', 'lang': 'en'}")
    con.execute("CALL differential_create_snapshot('agent')")
    con.execute("UPDATE prefs.users SET settings = {'theme': 'plain', 'lang': 'fr'}")
    con.execute("CALL differential_create_snapshot('prefs')")
    con.execute("DETACH prefs")
    con.execute("DETACH agent")
    merge = ("SELECT merge_action FROM differential_merge_branch('prefs', 'main', 'agent', 'main', "
             "request_id => 'fields-1', nested => 'fields')")
    assert con.execute(merge).fetchone()[0] == "merged"
    before = repository_state(con), tree_fingerprint(tmp_path / "repo", s3.path)
    refused(con, merge.replace("'fields')", "'whole')"), "merge_request_mismatch")
    assert (repository_state(con), tree_fingerprint(tmp_path / "repo", s3.path)) == before
    other = connect(tmp_path / "host2")
    other.execute(s3.secret_sql)
    other.execute(f"ATTACH 'differential:{s3.url}heads/prefs/main' AS prefs_latest")
    assert other.execute("SELECT settings.theme, settings.lang FROM prefs_latest.users").fetchall() == [("dark", "fr")]
    other.close()


def test_foreign_key_merge_on_s3_with_a_frozen_decision(tmp_path, s3):
    """Tables with a foreign key on S3: main deletes a customer the branch gave a new order. The violation refuses
    the merge with the repository and the bucket unchanged; a request deciding it (restore the customer as the
    branch has it) publishes, another host reads the result, and a retry replays it after the decisions are gone."""
    repository = tmp_path / "repo"
    con = connect(repository)
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:shop' AS shop (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE shop.customers (id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE shop.orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id))")
    con.execute("INSERT INTO shop.customers VALUES (1, 'ada'), (2, 'bob')")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'agent')")
    con.execute("ATTACH 'differential:shop' AS agent (BRANCH 'agent')")
    con.execute("INSERT INTO agent.orders VALUES (10, 2)")
    con.execute("CALL differential_create_snapshot('agent')")
    con.execute("DELETE FROM shop.customers WHERE id = 2")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("DETACH shop")
    con.execute("DETACH agent")
    # The refused request is recorded with its error (a durable request), but no data moves: the catalog's view
    # and every byte of the bucket stay as they were.
    before = repository_state(con), tree_fingerprint(s3.path)
    refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'agent', 'main', request_id => 'fk-0')",
            "merge_conflict")
    assert (repository_state(con), tree_fingerprint(s3.path)) == before
    assert con.execute("SELECT state, last_error_code FROM differential_merge_requests('shop') WHERE request_id = 'fk-0'"
                       ).fetchall() == [("pending", "merge_conflict")]

    con.execute("CREATE TABLE memory.main.restore (id INTEGER, name VARCHAR, _merge_action VARCHAR, "
                "_merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO memory.main.restore VALUES (2, NULL, 'theirs', NULL)")
    merge = ("SELECT snapshot_id, merge_action FROM differential_merge_branch('shop', 'main', 'agent', 'main', "
             "request_id => 'fk-1', resolution_tables => map {'main.customers': 'memory.main.restore'})")
    first = con.execute(merge).fetchone()
    assert first[1] == "merged"
    con.execute("DROP TABLE memory.main.restore")
    assert con.execute(merge).fetchone() == first
    other = connect(tmp_path / "host2")
    other.execute(s3.secret_sql)
    other.execute(f"ATTACH 'differential:{s3.url}heads/shop/main' AS shop_latest")
    assert other.execute("SELECT o.id, c.name FROM shop_latest.orders o JOIN shop_latest.customers c "
                         "ON o.customer_id = c.id").fetchall() == [(10, "bob")]
    other.close()


def test_virtual_base_merge_on_s3_and_its_retry(tmp_path, s3):
    """base => 'virtual' on S3: the spec's criss-cross merges its two bases into a virtual base; the head moves, a
    retry of the request replays it, and another host reads the combined table."""
    repository = tmp_path / "repo"
    con = connect(repository)
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:crisscross' AS cc (DATA_PATH '{s3.url}')")
    con.execute("DETACH cc")
    crisscross(con, request_ids=True)
    # The criss-cross ends on branches ab and ba; the merge goes into ab, whose head lives in the bucket.
    merge = ("SELECT snapshot_id, merge_action, base_snapshot_id FROM differential_merge_branch('crisscross', 'ab', "
             "'ba', 'ab', request_id => 'virtual-s3', base => 'virtual')")
    first = con.execute(merge).fetchone()
    assert first[1:] == ("merged", None)
    assert con.execute(merge).fetchone() == first
    other = connect(tmp_path / "host2")
    other.execute(s3.secret_sql)
    other.execute(f"ATTACH 'differential:{s3.url}heads/crisscross/ab' AS ab_latest")
    assert other.execute("FROM ab_latest.orders ORDER BY order_id").fetchall() == [
        (1, 10, "refunded"), (2, 21, "paid"), (3, 30, "open"), (4, 40, "open")]
    other.close()


def test_merge_request_required(tmp_path, s3):
    con = build_sales(tmp_path / "repo", s3)
    before = repository_state(con)
    head = head_path(s3).read_text()
    message = refused(con, "SELECT * FROM differential_merge_branch('sales', 'main', 'feature', 'main')",
                      "merge_request_required")
    assert "S3 merge requires a request_id" in message and "request_id =>" in message
    refused(con, "SELECT * FROM differential_merge_snapshots('sales', 1, 3, 2, 'combined')", "merge_request_required")
    assert repository_state(con) == before
    assert head_path(s3).read_text() == head
    assert con.execute("SELECT count(*) FROM differential_merge_requests('sales')").fetchone() == (0,)


# Each durable step, and the state the request is left in by a SIGKILL there.
CRASHES = [
    ("merge.s3.before_prepare_commit", "pending"),
    ("merge.s3.after_prepare", "prepared"),
    ("merge.s3.after_upload", "uploaded"),
    ("merge.s3.before_head_put", "publication_uncertain"),
    ("merge.s3.after_head_put", "publication_uncertain"),
    ("merge.s3.before_complete_commit", "publication_uncertain"),
]


@pytest.mark.parametrize("point,state", CRASHES)
def test_sigkill_at_each_step_then_retry(tmp_path, s3, point, state):
    start_head, (returncode, out, err), con = interrupted_merge(tmp_path, s3, {"DIFFERENTIAL_CRASH_POINT": f"{point}:1"})
    assert returncode == -9, f"{point} was not reached: {out}\n{err}"
    assert request_state(con)[0] == state
    landed = point in ("merge.s3.after_head_put", "merge.s3.before_complete_commit")
    # The head moved exactly when the crash came after the head write, and never to anything but ours.
    assert (head_path(s3).read_text() != start_head) == landed
    published = head_path(s3).stat().st_mtime_ns
    if state != "pending":
        # A prepared request resumes its result even when its inputs have expired since.
        assert con.execute("SELECT * FROM differential_expire_snapshots('sales', older_than => INTERVAL 0 SECOND)"
                           ).fetchall() == [(1,)]
    row = con.execute(MERGE_SQL).fetchone()
    assert row[:3] == ("main", 4, "merged")
    if landed:
        assert head_path(s3).stat().st_mtime_ns == published  # not published a second time
    assert_merged(con, tmp_path, s3)


@pytest.mark.parametrize("fault,landed", [("merge.head_put_unanswered", True), ("merge.head_put_lost", False)])
def test_publication_uncertain_resolves_on_retry(tmp_path, s3, fault, landed):
    start_head, (returncode, out, err), con = interrupted_merge(tmp_path, s3, {"DIFFERENTIAL_FAULT_POINT": f"{fault}:1"})
    assert returncode == 0, err
    assert out.startswith("error") and "[differential:publication_uncertain]" in out, out
    assert (head_path(s3).read_text() != start_head) == landed
    assert request_state(con) == ("publication_uncertain", 4, "publication_uncertain")
    operation = scalar(con, "SELECT operation_id FROM differential_merge_requests('sales')")
    refused(con, f"SELECT * FROM differential_abort_merge('sales', '{operation}')", "merge_publication_uncertain")
    assert request_state(con)[0] == "publication_uncertain"
    published = head_path(s3).stat().st_mtime_ns
    assert con.execute(MERGE_SQL).fetchone()[:3] == ("main", 4, "merged")
    if landed:
        assert head_path(s3).stat().st_mtime_ns == published  # resolved by reading, not by writing again
    assert_merged(con, tmp_path, s3)


def test_conflicting_arguments_on_retry(tmp_path, s3):
    _, (returncode, _, err), con = interrupted_merge(tmp_path, s3, {"DIFFERENTIAL_CRASH_POINT": "merge.s3.after_upload:1"})
    assert returncode == -9, err
    before = repository_state(con)
    refused(con, "SELECT * FROM differential_merge_branch('sales', 'main', 'feature', 'main', "
                 "request_id => 'merge-feature')", "merge_request_mismatch")
    assert repository_state(con) == before and request_state(con)[0] == "uploaded"
    assert con.execute(MERGE_SQL).fetchone()[:3] == ("main", 4, "merged")


MOVE_HEAD = """
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
print(con.execute("SELECT merge_action FROM differential_merge_branch('sales', 'main', 'hotfix', 'main', "
                  "request_id => 'fast-forward')").fetchone()[0])
"""


def test_head_conflict_when_another_copy_moves_the_head(tmp_path, s3):
    repository = tmp_path / "repo"
    con = build_sales(repository, s3)
    # A branch main can be fast-forwarded to: moving a head without writing a commit record of its own.
    con.execute("CALL differential_create_branch('sales', 'hotfix')")
    con.execute("ATTACH 'differential:sales' AS hotfix (BRANCH 'hotfix')")
    con.execute("INSERT INTO hotfix.orders VALUES (10, 'Zoe', 1.00, 'paid')")
    assert scalar(con, "CALL differential_create_snapshot('hotfix')") == 4
    con.execute("DETACH hotfix")
    con.close()
    # Another copy of the repository, used by another process, publishes the same database.
    shutil.copytree(repository, tmp_path / "copy")
    merging = merge_process(repository, s3, {"DIFFERENTIAL_PAUSE_POINT": "merge.s3.before_head_put:8000"})
    deadline = time.time() + 120
    con = connect(repository)
    while time.time() < deadline and (request_state(con) or ("",))[0] != "publication_uncertain":
        time.sleep(0.1)
    mover = subprocess.run([sys.executable, "-c", MOVE_HEAD.format(repository=str(tmp_path / "copy"),
                                                                   secret=s3.secret_sql)],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(REPO_ROOT / "test" / "python")))
    assert mover.returncode == 0 and "fast_forward" in mover.stdout, mover.stderr
    moved_head = head_path(s3).read_text()
    assert "snapshot 4" in moved_head
    out, err = merging.communicate(timeout=300)
    assert "[differential:head_conflict]" in out, out + err
    # The other version stays; the merge adopted nothing and exposed nothing.
    assert head_path(s3).read_text() == moved_head
    assert remote_rows(tmp_path, s3) == [(1, "40.00"), (2, "60.00"), (5, "15.00"), (9, "9.00"), (10, "1.00")]
    assert con.execute("SELECT head_snapshot_id FROM differential_branches('sales') WHERE branch_name = 'main'"
                       ).fetchone() == (3,)
    assert request_state(con) == ("uploaded", 5, "head_conflict")
    # Known not published: the request can be aborted, which drops its prepared result.
    operation = scalar(con, "SELECT operation_id FROM differential_merge_requests('sales') "
                            "WHERE request_id = 'merge-feature'")
    con.execute(f"SELECT * FROM differential_abort_merge('sales', '{operation}')").fetchall()
    assert request_state(con) == ("aborted", None, "head_conflict")
    assert con.execute("SELECT count(*) FROM differential_branches('sales') WHERE branch_name LIKE '\\_\\_%' "
                       "ESCAPE '\\'").fetchone() == (0,)
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def test_merge_into_a_new_branch_publishes_only_its_head(tmp_path, s3):
    con = build_sales(tmp_path / "repo", s3)
    main_head = head_path(s3).read_text()
    feature_head = head_path(s3, "feature").read_text()
    row = con.execute("SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch('sales', 'main', "
                      "'feature', 'combined', request_id => 'to-combined')").fetchone()
    assert row == ("combined", 4, "created_branch")
    assert "snapshot 4" in head_path(s3, "combined").read_text()
    # Neither the target's nor the source's head was republished.
    assert head_path(s3).read_text() == main_head
    assert head_path(s3, "feature").read_text() == feature_head
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


def evicted_chunks(repository):
    """Chunks whose local payload is evicted (segment 0, docs/FORMAT.md §5.5), read from the metadata directly."""
    metadata = sqlite3.connect(f"file:{repository / 'metadata.sqlite'}?mode=ro", uri=True)
    try:
        return metadata.execute("SELECT count(*) FROM chunks WHERE segment_id = 0").fetchone()[0]
    finally:
        metadata.close()


def test_evicted_inputs_are_read_back_without_changing_eviction(tmp_path, s3):
    repository = tmp_path / "repo"
    con = build_sales(repository, s3)
    assert scalar(con, "SELECT chunks_evicted FROM differential_evict_exported('sales')") > 0
    con.execute("CALL differential_cleanup_old_files()").fetchall()
    evicted = evicted_chunks(repository)
    assert evicted > 0
    con.close()
    # A fresh process: nothing of the inputs is local or cached.
    process = merge_process(repository, s3, {})
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0 and not out.startswith("error"), out + err
    row = json.loads(out.strip().splitlines()[-1])
    assert row[:3] == ["main", 4, "merged"] and row[3] >= 0
    assert evicted_chunks(repository) == evicted
    con = connect(repository)
    con.execute(s3.secret_sql)
    assert_merged(con, tmp_path, s3)


NEW_BRANCH_MERGE = ("SELECT branch_name, snapshot_id, merge_action FROM differential_merge_branch('sales', 'main', "
                    "'feature', 'combined', request_id => 'to-combined')")


def test_a_prepared_new_branch_keeps_its_name_reserved(tmp_path, s3):
    repository = tmp_path / "repo"
    build_sales(repository, s3).close()
    code = f"""
from differential_testing import connect
con = connect({str(repository)!r})
con.execute({s3.secret_sql!r})
con.execute({NEW_BRANCH_MERGE!r}).fetchall()
"""
    killed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=str(REPO_ROOT / "test" / "python"),
                                     DIFFERENTIAL_CRASH_POINT="merge.s3.after_prepare:1"))
    assert killed.returncode == -9, killed.stderr
    con = connect(repository)
    con.execute(s3.secret_sql)
    message = refused(con, "CALL differential_create_branch('sales', 'combined')", "branch_exists")
    assert "to-combined" in message
    assert not head_path(s3, "combined").exists()
    assert con.execute(NEW_BRANCH_MERGE).fetchone() == ("combined", 4, "created_branch")
    assert "snapshot 4" in head_path(s3, "combined").read_text()
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
