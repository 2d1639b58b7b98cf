"""The publication a branch's last close runs (an fsync and a metadata commit) holds no lock other branches need:
while one branch's close is held inside its publication, another branch of the process attaches, commits and
snapshots; then both are published whole."""
import json
import textwrap

from differential_testing import run_python

SLOW_CLOSE_AND_FAST_COMMITS = """
import json, threading, time
from differential_testing import connect
con = connect({repository!r})
con.execute("ATTACH 'differential:shop' AS shop")
con.execute("CREATE TABLE shop.t AS SELECT 1 AS v")
con.execute("CALL differential_create_snapshot('shop')")
con.execute("DETACH shop")
con.execute("CALL differential_create_branch('shop', 'slow', snapshot => 1)")
con.execute("CALL differential_create_branch('shop', 'fast', snapshot => 1)")
slow = con.cursor()
slow.execute("ATTACH 'differential:shop' AS slow (BRANCH 'slow')")
slow.execute("INSERT INTO slow.t VALUES (2)")
moments = {{}}

def close_slow():
    moments["slow_close_started"] = time.monotonic()
    slow.execute("DETACH slow")  # its publication pauses (DIFFERENTIAL_PAUSE_POINT)
    moments["slow_closed"] = time.monotonic()

closer = threading.Thread(target=close_slow)
closer.start()
time.sleep(1)
fast = con.cursor()
fast.execute("ATTACH 'differential:shop' AS fast (BRANCH 'fast')")
fast.execute("INSERT INTO fast.t VALUES (3)")
fast.execute("CALL differential_create_snapshot('fast')")
moments["fast_committed"] = time.monotonic()
fast.execute("DETACH fast")
closer.join()
rows = {{}}
for branch in ("slow", "fast"):
    con.execute(f"ATTACH 'differential:shop' AS r (BRANCH '{{branch}}', READ_ONLY)")
    rows[branch] = [v for (v,) in con.execute("SELECT v FROM r.t ORDER BY v").fetchall()]
    con.execute("DETACH r")
verify = con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0]
print(json.dumps({{"moments": moments, "rows": rows, "problems": verify}}))
"""


def test_another_branch_commits_while_a_close_publishes(repository):
    out = run_python(textwrap.dedent(SLOW_CLOSE_AND_FAST_COMMITS.format(repository=str(repository))),
                     timeout=300, env={"DIFFERENTIAL_PAUSE_POINT": "publish.on_close.shop.slow:6000"})
    result = json.loads(out.strip().splitlines()[-1])
    moments = result["moments"]
    # Ordering, not speed: the fast branch's commits landed while the slow branch's close was still publishing.
    assert moments["slow_close_started"] < moments["fast_committed"] < moments["slow_closed"], moments
    assert result["rows"] == {"slow": [1, 2], "fast": [1, 3]}
    assert result["problems"] == 0
