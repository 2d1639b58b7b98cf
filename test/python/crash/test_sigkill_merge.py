"""SIGKILL a merge at its labelled points and retry the request: the target never shows a partial
result, and the retried merge equals an uninterrupted one."""
import os
import pathlib
import subprocess
import sys

import pytest

from differential_testing import connect, scalar

HERE = pathlib.Path(__file__).resolve().parent
MERGE = "SELECT snapshot_id, merge_action FROM differential_merge_branch('shop', 'main', 'fix', 'main', request_id => 'r1')"


def prepare(repository):
    con = connect(repository)
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items (id INTEGER PRIMARY KEY, price INTEGER, name VARCHAR)")
    con.execute("INSERT INTO shop.items SELECT range, range * 10, 'item ' || range FROM range(5000)")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'fix', snapshot => 1)")
    con.execute("ATTACH 'differential:shop' AS fix (BRANCH 'fix')")
    con.execute("UPDATE fix.items SET price = price + 1 WHERE id % 7 = 0")
    con.execute("DELETE FROM fix.items WHERE id % 11 = 0")
    con.execute("CALL differential_create_snapshot('fix')")
    con.execute("INSERT INTO shop.items VALUES (9000, 1, 'new')")
    con.execute("UPDATE shop.items SET name = upper(name) WHERE id % 13 = 0 AND id % 11 <> 0")
    con.execute("CALL differential_create_snapshot('shop')")
    con.close()


def content(con, alias):
    return con.execute(f"SELECT count(*), sum(price), md5(string_agg(name, ',' ORDER BY id)) FROM {alias}.items").fetchone()


# One kill at the start of every merge phase, one inside the staging branch's durable write, and
# one inside the publishing transaction.
@pytest.mark.parametrize("point", [
    "merge.planning:1", "merge.comparison:1", "merge.application:1", "merge.validation:1",
    "merge.publication:1", "sync.after_publish:3", "merge.before_publish_commit:1",
])
def test_merge_killed_then_retried(tmp_path, point):
    reference_repo, repository = tmp_path / "reference", tmp_path / "killed"
    prepare(reference_repo)
    prepare(repository)
    reference = connect(reference_repo)
    assert reference.execute(MERGE).fetchone() == (4, "merged")
    reference.execute("ATTACH 'differential:shop' AS shop (READ_ONLY)")
    expected = content(reference, "shop")

    env = dict(os.environ, DIFFERENTIAL_CRASH_POINT=point, PYTHONPATH=str(HERE.parent))
    killed = subprocess.run(
        [sys.executable, "-c", f"from differential_testing import connect; connect({str(repository)!r}).execute({MERGE!r})"],
        env=env, capture_output=True, text=True)
    assert killed.returncode == -9, f"{point} not reached: {killed.stderr}"
    con = connect(repository)
    # Nothing of the merge is visible: main is still at snapshot 3 with its own content.
    assert con.execute("SELECT head_snapshot_id FROM differential_branches('shop') WHERE branch_name = 'main'").fetchone()[0] == 3
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('shop')") == 3
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    assert con.execute(MERGE).fetchone() == (4, "merged")
    con.execute("ATTACH 'differential:shop' AS shop (READ_ONLY)")
    assert content(con, "shop") == expected
    # The interrupted merge's staging branch is gone.
    assert [r[0] for r in con.execute("SELECT branch_name FROM differential_branches('shop')").fetchall()] == ["main", "fix"]
