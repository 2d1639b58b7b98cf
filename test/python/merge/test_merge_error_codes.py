"""A merge that fails inside the SQL it runs records its own error code, however many other errors the process
raises meanwhile: the code travels in the error's text and is read back at one place, with nothing remembered."""
import json
import textwrap

from differential_testing import run_python
from test_merge_operations import diverged

MERGE_AMID_ERRORS = """
import json, threading, time
from differential_testing import connect
con = connect({repository!r})
stop = threading.Event()
raised = [0] * 4

def noise(slot):
    # Refusals of other codes, as fast as the threads can raise them.
    other = con.cursor()
    while not stop.is_set():
        try:
            other.execute("SELECT * FROM differential_branches('no_such_database')").fetchall()
        except Exception:
            raised[slot] += 1

threads = [threading.Thread(target=noise, args=(slot,)) for slot in range(4)]
for thread in threads:
    thread.start()
while min(raised) < 100:  # every thread is raising before the merge starts
    time.sleep(0.01)
try:
    con.execute("SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', request_id => 'r')")
    error = None
except Exception as e:
    error = str(e)
stop.set()
for thread in threads:
    thread.join()
state = con.execute("SELECT state, last_error_code FROM differential_merge_requests('shop')").fetchall()
print(json.dumps({{"error": error, "raised": sum(raised), "state": state}}))
"""


def test_a_failed_merge_records_its_own_code_amid_other_errors(con, repository):
    diverged(con, rows=5000)
    con.close()
    # The merge's first read of a segment (its input's ATTACH, on the merge's private connection) fails with EIO.
    out = run_python(textwrap.dedent(MERGE_AMID_ERRORS.format(repository=str(repository))),
                     env={"DIFFERENTIAL_FAULT_POINT": "segment.read:1"})
    result = json.loads(out.strip().splitlines()[-1])
    assert result["error"] is not None and "[differential:io_error]" in result["error"], result
    assert result["raised"] > 0, result
    assert result["state"] == [["pending", "io_error"]], result
