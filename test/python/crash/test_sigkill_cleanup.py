"""SIGKILL during cleanup and compaction, at every labelled point: nothing live is lost, the
repository verifies clean, and the next cleanup finishes the job."""
import os
import pathlib
import subprocess
import sys

import pytest

from differential_testing import connect, scalar

HERE = pathlib.Path(__file__).resolve().parent
POINTS = ["cleanup.before_sweep_commit", "compaction.after_copy", "compaction.before_commit", "cleanup.before_unlink"]


def prepare(repository):
    con = connect(repository)
    con.execute("ATTACH 'differential:gc' AS gc")
    for version in range(6):
        con.execute(f"CREATE OR REPLACE TABLE gc.t AS SELECT range * {version + 1} AS x FROM range(150000)")
        con.execute("CREATE OR REPLACE TABLE gc.keep AS SELECT 42 AS answer")
        con.execute("CALL differential_create_snapshot('gc')")
    con.execute("DETACH gc")
    con.execute("CALL differential_expire_snapshots('gc', versions => [1, 2, 3, 4])")
    con.close()


def expected(version):
    return sum(range(150000)) * (version + 1)


@pytest.mark.parametrize("point", POINTS)
def test_cleanup_killed_at_each_point(tmp_path, point):
    repository = tmp_path / "repository"
    # The writes happen in another process, so that the cleanup process may compact them.
    subprocess.run([sys.executable, "-c", f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent)!r}]; "
                    f"from test_sigkill_cleanup import prepare; prepare({str(repository)!r})"], check=True)
    env = dict(os.environ, DIFFERENTIAL_CRASH_POINT=f"{point}:1", PYTHONPATH=str(HERE.parent))
    killed = subprocess.run(
        [sys.executable, "-c",
         "import sys; from differential_testing import connect; "
         f"connect({str(repository)!r}).execute('CALL differential_cleanup_old_files(cleanup_all => true)')"],
        env=env, capture_output=True, text=True)
    assert killed.returncode == -9, f"{point} was not reached: {killed.stderr}"
    con = connect(repository)
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    con.execute("ATTACH 'differential:gc' AS gc (READ_ONLY)")
    assert scalar(con, "SELECT sum(x) FROM gc.t") == expected(5)
    assert scalar(con, "SELECT sum(x) FROM gc.t AT (VERSION => 5)") == expected(4)
    con.execute("DETACH gc")
    freed = con.execute("SELECT bytes_freed FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()[0]
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    info = con.execute("SELECT stored_bytes, live_bytes FROM differential_storage_info()").fetchone()
    assert info[0] <= 1.3 * info[1] + 200_000, (point, freed, info)
    con.execute("ATTACH 'differential:gc' AS gc (READ_ONLY)")
    assert scalar(con, "SELECT sum(x) FROM gc.t") == expected(5)
    assert scalar(con, "SELECT answer FROM gc.keep AT (VERSION => 5)") == 42
