"""What an S3 export and a remote cleanup show while they run and afterwards: DuckDB's query progress moves
through an export (differential_create_snapshot, differential_export_snapshot) and a cleanup, against
versitygw slowed down by Toxiproxy; every request of an export, of the conditional-write probe and of a
cleanup is one duckdb_logs event with its duration and HTTP attempts, and no log entry holds a credential."""
import pathlib
import threading
import time

import pytest

from differential_testing import connect, refused, scalar
from toxiproxy import Toxiproxy


@pytest.fixture
def proxy(s3_server):
    toxiproxy = Toxiproxy(s3_server.port)
    yield toxiproxy
    toxiproxy.close()


def progress_while(con, sql):
    """Runs sql on a cursor of `con` in a thread; returns (its rows, every query_progress() value seen)."""
    runner = con.cursor()
    runner.execute("SET enable_progress_bar = true")
    runner.execute("SET enable_progress_bar_print = false")
    out = {}

    def run():
        try:
            out["rows"] = runner.execute(sql).fetchall()
        except Exception as e:  # reported by the assertion below
            out["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    seen = []
    while thread.is_alive():
        seen.append(runner.query_progress())
        time.sleep(0.01)
    thread.join()
    assert "error" not in out, out
    return out["rows"], seen


def moving(seen):
    """The values strictly between 0 and 100: the bar moved while the query ran."""
    return sorted({round(p, 1) for p in seen if 0 < p < 100})


def test_progress_moves_through_exports_and_cleanup(repository, s3, proxy):
    con = connect(repository)
    con.execute(s3.secret_sql.replace(s3.server.endpoint, proxy.endpoint))
    # About 20 MB/s up and 30 ms per answer: several packs take a few seconds to go up.
    proxy.add("slow", "bandwidth", stream="upstream", rate=20_000)
    proxy.add("late", "latency", latency=30)
    # One pack at a time, so the packs' completions (each moves the bar) are spread out.
    con.execute("SET differential_export_concurrency = 1")
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE orders.o AS SELECT range AS id, md5(range::VARCHAR) || md5((range + 1)::VARCHAR) AS v "
                "FROM range(1000000)")
    rows, seen = progress_while(con, "SELECT snapshot_id FROM differential_create_snapshot('orders')")
    assert rows == [(1,)]
    assert len(moving(seen)) >= 1, seen
    # The export function, retrying a snapshot whose export failed (every connection reset by the peer).
    con.execute("INSERT INTO orders.o SELECT range, md5(range::VARCHAR) || 'x' FROM range(1000000, 1600000)")
    proxy.add("cut", "reset_peer", stream="upstream", timeout=0)
    with pytest.raises(Exception, match="export_failed"):
        con.execute("CALL differential_create_snapshot('orders')")
    proxy.remove("cut")
    rows, seen = progress_while(con, "SELECT snapshot_id, head_moved FROM differential_export_snapshot('orders')")
    assert rows == [(2, True)]
    assert len(moving(seen)) >= 1, seen
    # Cleanup walks one descriptor after the other: with 30 ms per answer its bar moves too.
    for i in range(4):
        con.execute(f"INSERT INTO orders.o VALUES ({2000000 + i}, 'more')")
        con.execute("CALL differential_create_snapshot('orders')")
    proxy.add("later", "latency", latency=150)
    rows, seen = progress_while(con, f"SELECT roots FROM differential_cleanup_remote_files('{s3.url}', dry_run => true)")
    assert rows == [(6,)]
    assert len(moving(seen)) >= 1, seen


def test_every_request_is_logged_with_its_duration_and_attempts_and_no_secret(repository, s3):
    con = connect(repository)
    con.execute(s3.secret_sql)
    con.execute("CALL enable_logging('differential')")
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE orders.o AS SELECT range AS id FROM range(300000)")
    con.execute("CALL differential_create_snapshot('orders')")
    con.execute(f"SELECT * FROM differential_cleanup_remote_files('{s3.url}', grace => INTERVAL '0 seconds')").fetchall()
    events = con.execute("SELECT event, duration_ms, detail FROM duckdb_logs_parsed('differential')").fetchall()
    by_event = {}
    for event, duration, detail in events:
        by_event.setdefault(event, []).append((duration, detail))
    # The probe: create-only, create-only again, If-Match, stale If-Match, 8 racing writers, the DELETE.
    probe = by_event.get("probe_request", [])
    assert len(probe) == 13, probe
    assert sum("PUT if-match" in d for _, d in probe) == 10, probe
    refused = sum(": precondition_failed," in d or ": conflict," in d for _, d in probe)
    assert refused == 2 + 7, probe
    requests = by_event.get("export_request", []) + probe + by_event.get("cleanup_request", [])
    assert by_event.get("cleanup_request"), by_event.keys()
    assert any(d.startswith("LIST ") for _, d in by_event["cleanup_request"])
    for duration, detail in requests:
        assert duration is not None and duration >= 0, detail
        assert detail.endswith("attempt(s)") and " 0 attempt(s)" not in detail, detail
    # No credential anywhere in the log: not the secret, not the key id.
    text = "\n".join(m for (m,) in con.execute("SELECT message FROM duckdb_logs").fetchall())
    assert "probe_request" in text
    for value in (s3.server.secret, s3.server.key_id):
        assert value not in text
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('orders')") == 1
    assert pathlib.Path(repository).exists()


@pytest.mark.parametrize("value", [0, 65, -1])
def test_export_concurrency_out_of_range_is_refused_and_changes_nothing(value):
    con = connect()
    con.execute("SET differential_export_concurrency = 8")
    refused(con, f"SET differential_export_concurrency = {value}", "invalid_argument")
    assert scalar(con, "SELECT current_setting('differential_export_concurrency')") == 8
