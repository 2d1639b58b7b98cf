"""Every background thread has an owner that joins it. A DETACH of a standby during its takeover returns once the
takeover ended, the new leader attached; an instance closed during a takeover cancels it before it attaches and the
process exits cleanly, the recovered branch kept; a DETACH during an export, and an instance closed during one, leave
the export whole. Threads are seen by their names in /proc (each of ours is named diff-*)."""
import json
import pathlib
import signal
import textwrap

from differential_testing import connect, run_python
from lease_testing import start_leader, start_standby, standby_lease, wait_for

TAKEOVER_PAUSED = {"DIFFERENTIAL_PAUSE_POINT": "takeover.before_attach:5000"}


def thread_names(pid):
    names = []
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            names.append((task / "comm").read_text().strip())
        except FileNotFoundError:  # the thread ended while we listed
            pass
    return names


def taking_over(value):
    return value[1] is not None and value[1].startswith("taking over")


def kill_leader_after_ten_commits(leader):
    for n in range(10):
        leader.rows(f"INSERT INTO orders.t VALUES ({n})")  # sync: acknowledged = shipped
    leader.process.send_signal(signal.SIGKILL)
    leader.process.wait()
    return list(range(10))


def ids(host_or_con, table="orders.t"):
    sql = f"SELECT id FROM {table} ORDER BY id"
    if hasattr(host_or_con, "rows"):
        return [row[0] for row in host_or_con.rows(sql)]
    return [row[0] for row in host_or_con.execute(sql).fetchall()]


def test_detaching_a_standby_during_its_takeover_returns_with_the_new_leader_attached(s3, tmp_path):
    leader = start_leader(tmp_path / "leader", s3)
    standby = start_standby(tmp_path / "standby", s3, extra_env=TAKEOVER_PAUSED)
    try:
        acknowledged = kill_leader_after_ten_commits(leader)
        wait_for(lambda: standby_lease(standby), taking_over)
        assert "diff-takeover" in thread_names(standby.process.pid)
        standby.rows("DETACH live")  # the takeover is paused before it attaches the new leader
        # DETACH joined the takeover: the new leader is already attached, with every acknowledged commit, and no
        # thread of the follower is left.
        attached = "SELECT count(*) FROM duckdb_databases() WHERE database_name = 'orders'"
        assert standby.rows(attached) == [[1]]
        assert ids(standby) == acknowledged
        names = thread_names(standby.process.pid)
        assert "diff-takeover" not in names and "diff-follow" not in names, names
        standby.rows("INSERT INTO orders.t VALUES (100)")
        shipping = "SELECT database_name, lease FROM differential_shipping()"
        wait_for(lambda: standby.rows(shipping), lambda v: v == [["orders", "held"]], timeout=30)
    finally:
        standby.close()


def test_closing_the_instance_during_a_takeover_cancels_the_attach_and_keeps_the_recovery(s3, tmp_path):
    leader = start_leader(tmp_path / "leader", s3)
    standby = start_standby(tmp_path / "standby", s3, extra_env=TAKEOVER_PAUSED)
    acknowledged = kill_leader_after_ten_commits(leader)
    wait_for(lambda: standby_lease(standby), taking_over)
    standby.process.stdin.close()  # the host's connection, and with it the instance, closes mid-takeover
    assert standby.process.wait(timeout=120) == 0
    # The recovery ran before the pause: the branch is in the standby's repository, whole and verified.
    con = connect(tmp_path / "standby")
    con.execute(s3.secret_sql)
    con.execute("ATTACH 'differential:orders' AS orders (READ_ONLY)")
    assert ids(con) == acknowledged
    assert con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0] == 0
    con.close()


EXPORT_WHILE_DETACHING = """
import json, os, threading, time
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
con.execute("ATTACH 'differential:shop' AS shop (DATA_PATH '{url}')")
con.execute("CREATE TABLE shop.t AS SELECT range AS id FROM range(5000)")
snapshotter = con.cursor()
result = {{}}


def names():
    return sorted(open(f"/proc/self/task/{{t}}/comm").read().strip() for t in os.listdir("/proc/self/task"))


def snapshot():
    # The snapshot exports at once; the export pauses before it moves the head (DIFFERENTIAL_PAUSE_POINT).
    result["snapshot"] = snapshotter.execute("SELECT snapshot_id FROM differential_create_snapshot('shop')").fetchall()
    result["exported_at"] = time.monotonic()


worker = threading.Thread(target=snapshot)
worker.start()
time.sleep(2)
result["during"] = names()
result["finish_issued_at"] = time.monotonic()
con.execute("{finish}")
result["finished_at"] = time.monotonic()
worker.join()
result["after"] = names()
print(json.dumps(result))
"""


def export_meanwhile(tmp_path, s3, finish):
    script = EXPORT_WHILE_DETACHING.format(repository=str(tmp_path / "repo"), secret=s3.secret_sql, url=s3.url,
                                           finish=finish)
    out = run_python(textwrap.dedent(script), timeout=300,
                     env={"DIFFERENTIAL_PAUSE_POINT": "export.before_heads.shop:5000"})
    return json.loads(out.strip().splitlines()[-1])


def exported_rows(tmp_path, s3):
    """What a fresh process reads from the bucket's head of shop/main."""
    con = connect(tmp_path / "reader")
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:{s3.url}heads/shop/main' AS head")
    rows = con.execute("SELECT count(*), sum(id) FROM head.t").fetchone()
    con.close()
    return rows


def test_detaching_a_database_during_its_export_leaves_the_export_whole(s3, tmp_path):
    result = export_meanwhile(tmp_path, s3, "DETACH shop")
    assert result["snapshot"] == [[1]]
    # Issued while the export ran on its worker (paused before the head), and the export was not cut short.
    assert "diff-call" in result["during"] and result["finish_issued_at"] < result["exported_at"], result
    assert not [name for name in result["after"] if name.startswith("diff-")], result["after"]
    assert exported_rows(tmp_path, s3) == (5000, sum(range(5000)))
    con = connect(tmp_path / "repo")
    assert con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0] == 0
    con.close()
