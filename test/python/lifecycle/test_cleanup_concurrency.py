"""One process writes and snapshots in a loop while another expires, cleans up and time-travels."""
import subprocess
import sys
import threading

from differential_testing import REPO_ROOT, child_env, connect, scalar

WRITER = r"""
import sys
from differential_testing import connect
con = connect(sys.argv[1])
con.execute("ATTACH 'differential:busy' AS busy")
con.execute("CREATE TABLE busy.t (i BIGINT, pad VARCHAR)")
for i in range(int(sys.argv[2])):
    con.execute("INSERT INTO busy.t SELECT ?, repeat('p', 100) FROM range(500)", [i])
    if i % 5 == 4:
        sid = con.execute("SELECT snapshot_id FROM differential_create_snapshot('busy')").fetchone()[0]
        print(f"{sid} {(i + 1) * 500}", flush=True)
"""


def test_writer_and_maintenance_run_side_by_side(repository):
    con = connect(repository)
    env_path = str(REPO_ROOT / "test" / "python")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(repository), "150"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(PYTHONPATH=env_path, PATH="/usr/bin:/bin"),
    )
    acked = {}
    reader = threading.Thread(target=lambda: [acked.__setitem__(*map(int, line.split())) for line in writer.stdout])
    reader.start()
    rounds = 0
    checked = 0
    while writer.poll() is None or rounds < 3:
        rounds += 1
        ids = [r[0] for r in con.execute("SELECT snapshot_id FROM differential_snapshots('busy')").fetchall()] if scalar(
            con, "SELECT count(*) FROM differential_databases() WHERE database_name = 'busy'") else []
        if len(ids) > 3:
            con.execute(f"CALL differential_expire_snapshots('busy', versions => {ids[:-3]})")
        con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
        for sid in ids[-3:]:
            if sid in acked:
                con.execute("DETACH DATABASE IF EXISTS busy_view")
                con.execute(f"ATTACH 'differential:busy' AS busy_view (SNAPSHOT {sid}, READ_ONLY)")
                assert scalar(con, "SELECT count(*) FROM busy_view.t") == acked[sid]
                checked += 1
        con.execute("DETACH DATABASE IF EXISTS busy_view")
    reader.join()
    assert writer.wait() == 0, writer.stderr.read()
    assert len(acked) == 30 and checked > 0
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    con.execute("ATTACH 'differential:busy' AS busy (READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM busy.t") == 150 * 500
    last = max(acked)
    assert scalar(con, f"SELECT count(*) FROM busy.t AT (VERSION => {last})") == acked[last]
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('busy')") <= 4
