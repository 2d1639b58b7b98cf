"""Exports to versitygw through Toxiproxy (test/python/toxiproxy.py) at SQL level: connections cut mid-upload,
answers delayed, connections stalled until they drop. After each fault the head in the bucket still reaches only
complete, verified objects (read back in full by a remote ATTACH and checked file by file), the dry run of remote
cleanup deletes nothing and counts every object, the snapshot stays local, and differential_export_snapshot then
completes. Also: a store that ignores If-None-Match / If-Match is refused before any head is written, and a byte
damaged in the bucket is refused as corrupt_chunk. (The server killed mid-export is in test_exports_s3.py.)"""
import json
import pathlib
import secrets
import threading
import time

import pytest

from differential_testing import connect, refused, run_python, scalar
from export_objects import check_descriptor, check_head, count, index_slots, text_object
from toxiproxy import Toxiproxy

# Rows whose text does not compress much, so snapshot 2 spans several 8 MiB packs.
BIG_INSERT = ("INSERT INTO orders.o SELECT range AS id, md5(range::VARCHAR) || md5((range + 7)::VARCHAR) AS v "
              "FROM range(1000, 1001000)")


@pytest.fixture
def proxy(s3_server):
    toxiproxy = Toxiproxy(s3_server.port)
    yield toxiproxy
    toxiproxy.close()


def bucket_root(s3):
    return pathlib.Path(s3.path) / s3.url.split("/", 3)[3]


def through(s3, proxy):
    """The fixture's secret, with the endpoint moved to the proxy."""
    return s3.secret_sql.replace(s3.server.endpoint, proxy.endpoint)


def writer(repository, s3, proxy):
    """A repository whose database `orders` exports through the proxy; snapshot 1 is exported and its head
    published before any fault."""
    con = connect(repository)
    con.execute(through(s3, proxy))
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE orders.o AS SELECT range AS id, md5(range::VARCHAR) AS v FROM range(1000)")
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('orders')") == 1
    return con


def digest(con, name, version=None):
    at = f" AT (VERSION => {version})" if version else ""
    return con.execute(f"SELECT count(*), sum(id), sum(hash(v)) FROM {name}.o{at}").fetchone()


def check_bucket(s3, writer_con, head_snapshot):
    """The invariants every fault must leave: the head names `head_snapshot`, every committed descriptor
    reaches complete objects, a remote attach of the head (straight to the server) reads that snapshot in
    full, and the dry run of remote cleanup deletes nothing and accounts for every object."""
    root = bucket_root(s3)
    assert check_head(root, "orders") == head_snapshot
    commits = sorted((root / "commits" / "orders").iterdir())
    for record in commits:
        check_descriptor(root, text_object(record)[1]["descriptor"][0])
    reader = connect()
    reader.execute(s3.secret_sql)
    reader.execute(f"ATTACH 'differential:{s3.url}heads/orders/main' AS head")
    assert digest(reader, "head") == digest(writer_con, "orders", head_snapshot)
    objects = count(root, "packs") + count(root, "indexes") + count(root, "descriptors")
    row = reader.execute(
        f"SELECT deleted_objects, deleted_keys, roots, live_objects, unreachable_objects "
        f"FROM differential_cleanup_remote_files('{s3.url}', dry_run => true, grace => INTERVAL '0 seconds')"
    ).fetchone()
    deleted, keys, roots, live, unreachable = row
    assert (deleted, keys) == (0, [])
    assert roots == len(commits)
    assert live + unreachable == objects
    assert count(root, "packs") + count(root, "indexes") + count(root, "descriptors") == objects
    reader.close()


def fail_then_retry(con, s3, proxy, fault):
    """Snapshot 2 (several packs) under `fault`, which must fail its export; then the checks, the fault
    removed, and the retry."""
    con.execute(BIG_INSERT)
    message = fault()
    assert "Snapshot 2 of database orders is committed locally" in message, message
    assert "differential_export_snapshot('orders')" in message
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('orders')") == 2
    check_bucket(s3, con, 1)
    rows = con.execute("SELECT snapshot_id, head_moved FROM differential_export_snapshot('orders')").fetchall()
    assert rows == [(2, True)]
    check_bucket(s3, con, 2)


def test_every_connection_cut_after_a_megabyte(repository, s3, proxy):
    """limit_data closes each connection after 1 MB of request bytes: no pack gets through, even retried."""
    con = writer(repository, s3, proxy)

    def fault():
        proxy.add("cut", "limit_data", stream="upstream", bytes=1_000_000)
        try:
            return refused(con, "CALL differential_create_snapshot('orders')", "export_failed")
        finally:
            proxy.remove("cut")

    fail_then_retry(con, s3, proxy, fault)


def when_packs_appear(s3, before, action):
    """Runs `action` from a thread as soon as the bucket holds more than `before` packs."""
    root = bucket_root(s3)
    done = threading.Event()

    def watch():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not done.is_set():
            if count(root, "packs") > before:
                action()
                break
            time.sleep(0.002)
        done.set()

    thread = threading.Thread(target=watch)
    thread.start()
    return done, thread


def test_connections_reset_mid_upload(repository, s3, proxy):
    """reset_peer added once the first pack of snapshot 2 has landed: the uploads in flight and every retry
    are reset by the peer."""
    con = writer(repository, s3, proxy)
    # Slow the uploads down (about 20 MB/s) so that the reset lands while packs are still in flight.
    proxy.add("slow", "bandwidth", stream="upstream", rate=20_000)
    before = count(bucket_root(s3), "packs")

    def fault():
        done, thread = when_packs_appear(s3, before, lambda: proxy.add("reset", "reset_peer", stream="upstream",
                                                                      timeout=0))
        try:
            return refused(con, "CALL differential_create_snapshot('orders')", "export_failed")
        finally:
            done.set()
            thread.join()
            proxy.remove("reset")
            proxy.remove("slow")

    fail_then_retry(con, s3, proxy, fault)


def test_stalled_connections_time_out(repository, s3, proxy):
    """A `timeout` toxic lets no byte through and drops each connection after 500 ms: every attempt of the
    next request times out, the CRT's retries included."""
    con = writer(repository, s3, proxy)
    proxy.add("slow", "bandwidth", stream="upstream", rate=20_000)
    before = count(bucket_root(s3), "packs")

    def fault():
        done, thread = when_packs_appear(s3, before, lambda: proxy.add("stall", "timeout", timeout=500))
        try:
            start = time.monotonic()
            message = refused(con, "CALL differential_create_snapshot('orders')", "export_failed")
            assert time.monotonic() - start < 120
            return message
        finally:
            done.set()
            thread.join()
            proxy.remove("stall")
            proxy.remove("slow")

    fail_then_retry(con, s3, proxy, fault)


def test_large_delays_slow_an_export_but_it_completes(repository, s3, proxy):
    """300 ms (± 200 ms) on every answer, both ways: the export takes longer and is exactly right."""
    con = writer(repository, s3, proxy)
    proxy.add("late", "latency", latency=300, jitter=200)
    proxy.add("late_up", "latency", stream="upstream", latency=300, jitter=200)
    con.execute("INSERT INTO orders.o SELECT range, md5(range::VARCHAR) FROM range(1000, 200000)")
    start = time.monotonic()
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('orders')") == 2
    assert time.monotonic() - start > 0.6  # the delays were on the path
    proxy.remove("late")
    proxy.remove("late_up")
    check_bucket(s3, con, 2)


def test_a_byte_damaged_in_the_bucket_is_refused(repository, s3, proxy):
    """One byte flipped in every chunk of every pack file in versitygw's posix directory (not the file's
    first chunk, which the attach has read): the remote read is refused with corrupt_chunk, twice (nothing
    bad was cached), and never returns rows."""
    con = writer(repository, s3, proxy)
    # Rows no other test has: this process's memory cache of verified chunks (content-addressed) must not
    # already hold them, or the damaged copies would never be fetched.
    salt = secrets.token_hex(8)
    con.execute(f"INSERT INTO orders.o SELECT range, md5(range::VARCHAR || '{salt}') || '{salt}' "
                "FROM range(1000, 501000)")
    con.execute("CALL differential_create_snapshot('orders')")
    root = bucket_root(s3)
    reader = connect()
    reader.execute(s3.secret_sql)
    reader.execute(f"ATTACH 'differential:{s3.url}heads/orders/main' AS head")
    _, head = text_object(root / "heads" / "orders" / "main")
    _, descriptor = text_object(root / "descriptors" / head["descriptor"][0])
    slots = [slot for page in descriptor["index"] for slot in index_slots((root / "indexes" / page).read_bytes())]
    damaged = 0
    for chunk, pack, offset, length in slots[1:]:
        if chunk != bytes(32):
            path = root / "packs" / pack.hex()
            data = bytearray(path.read_bytes())
            data[offset + length // 2] ^= 0x40
            path.write_bytes(bytes(data))
            damaged += 1
    assert damaged > 10
    for _ in range(2):
        refused(reader, "SELECT count(*), sum(hash(v)) FROM head.o", "corrupt_chunk")


PROBE = """
import json, sys
from differential_testing import connect
repository, secret_sql, url, call = ARGS
con = connect(repository)
con.execute(secret_sql)
con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url}')")
con.execute("CREATE TABLE IF NOT EXISTS orders.o AS SELECT range AS id FROM range(5000)")
try:
    print(json.dumps({"error": None, "rows": con.execute(call).fetchall()}))
except Exception as e:
    print(json.dumps({"error": str(e), "snapshots": con.execute(
        "SELECT count(*) FROM differential_snapshots('orders')").fetchone()[0]}))
"""


def run_probe(tmp_path, s3, call, env=None):
    code = PROBE.replace("ARGS", repr([str(tmp_path / "repo"), s3.secret_sql, s3.url, call]))
    return json.loads(run_python(code, env=env).strip().splitlines()[-1])


@pytest.mark.parametrize("point,promise", [("probe_ignore_if_none_match", "If-None-Match: * on an existing key"),
                                           ("probe_ignore_if_match", "If-Match with a stale etag")])
def test_a_store_that_ignores_conditions_gets_no_head(tmp_path, s3, point, promise):
    """No server we can run ignores If-None-Match or If-Match (versitygw honours both: the conformance suite's
    CreateOnlyRefusesExisting and IfMatchRefusesStaleEtag on Versitygw), so the fault point sends the probe's
    check without its condition and versitygw answers that plain PUT as such a store would: with success."""
    out = run_probe(tmp_path, s3, "SELECT snapshot_id FROM differential_create_snapshot('orders')",
                    env={"DIFFERENTIAL_FAULT_POINT": f"{point}:1"})
    assert out["error"] is not None and out["snapshots"] == 1, out
    assert "[differential:conditional_writes_unsupported]" in out["error"] and promise in out["error"], out
    root = bucket_root(s3)
    assert not (root / "heads").exists()
    assert count(root, "probes") == 0  # the probe cleans up after itself
    # A fresh process (the probe's verdict lives as long as the process) without the fault: the snapshot's
    # objects are in already, so the retry only publishes the head (and so returns no row).
    out = run_probe(tmp_path, s3, "SELECT snapshot_id FROM differential_export_snapshot('orders')")
    assert out == {"error": None, "rows": []}, out
    assert check_head(root, "orders") == 1
