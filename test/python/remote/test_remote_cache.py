"""The remote read path's requests and caches: every GET is logged with its duration and attempts, a warm disk cache
answers a new process without fetching a single chunk, and the cache's size bound holds with two processes filling
it at once."""
import concurrent.futures
import json
import pathlib

from remote_fixtures import answers, make_source
from differential_testing import connect, refused, run_python


def remote_gets(con):
    return con.execute(
        "SELECT duration_ms, detail FROM duckdb_logs_parsed('differential') WHERE event = 'remote_get'"
    ).fetchall()


READER = """
import json, sys
sys.path.insert(0, {remote_dir!r})
from remote_fixtures import answers
from differential_testing import connect
con = connect({repository!r})
con.execute({setup!r})
con.execute("SET differential_remote_cache_size = {size!r}")
con.execute("SET enable_logging = true")
con.execute("ATTACH 'differential:{locator}' AS r")
result = answers(con, "r")
gets = con.execute("SELECT detail FROM duckdb_logs_parsed('differential') WHERE event = 'remote_get'").fetchall()
print(json.dumps({{"answers": repr(result), "gets": [g[0] for g in gets]}}))
"""


def read_in_process(store, repository, locator, size):
    code = READER.format(
        remote_dir=str(pathlib.Path(__file__).resolve().parent),
        repository=str(repository),
        setup=store.setup_sql or "SELECT 1",
        size=size,
        locator=locator,
    )
    return json.loads(run_python(code, timeout=300).strip().splitlines()[-1])


def test_every_get_is_logged_and_a_warm_cache_fetches_no_chunk(store, source, tmp_path):
    export = store.export(source)
    repository = tmp_path / "repository"
    con = store.prepare(connect(repository))
    con.execute("SET differential_remote_cache_size = '256MB'")
    con.execute("SET enable_logging = true")
    con.execute(f"ATTACH 'differential:{store.url}descriptors/{export.descriptor}' AS r")
    cold_answers = answers(con, "r")
    cold = remote_gets(con)
    # The descriptor, its index page, and ranged reads of the packs; each with its duration and attempts.
    assert any("descriptors/" in detail for _, detail in cold)
    assert any("packs/" in detail and " bytes " in detail for _, detail in cold)
    assert all(ms is not None and ms >= 0 and "attempt(s)" in detail and ": ok, " in detail for ms, detail in cold)
    # Adjacent chunks of a pack come in one request: fewer pack GETs than chunks read.
    pack_gets = sum("packs/" in detail for _, detail in cold)
    assert pack_gets < sum(1 for slot in export.slots if slot[3])
    con.close()
    # A new process with the same repository: the disk cache answers everything; a descriptor needs no GET at all
    # and a head only its own (heads move, so they are always read from the store).
    warm = read_in_process(store, repository, f"{store.url}descriptors/{export.descriptor}", "256MB")
    assert warm["answers"] == repr(cold_answers)
    assert warm["gets"] == []
    warm = read_in_process(store, repository, f"{store.url}heads/orders/main", "256MB")
    assert warm["answers"] == repr(cold_answers)
    assert [detail.split(" ")[0] for detail in warm["gets"]] == [f"{store.url}heads/orders/main:"]


def cache_bytes(directory):
    return sum(f.stat().st_size for f in (pathlib.Path(directory) / "objects").rglob("*") if f.is_file())


def test_the_cache_bound_holds_with_two_processes_filling_it(store, tmp_path):
    # Two different exports (two databases) read at once by two processes, into one cache far smaller than both.
    first = store.export(make_source(tmp_path / "a.duckdb", rows=200_000), database="a")
    second = store.export(make_source(tmp_path / "b.duckdb", rows=220_000), database="b")
    data = sum(slot[3] for slot in first.slots + second.slots)
    bound = 1_000_000
    assert data > 3 * bound
    repository = tmp_path / "repository"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        jobs = [
            pool.submit(read_in_process, store, repository, f"{store.url}heads/{db}/main", str(bound))
            for db in ("a", "b")
        ]
        results = [job.result() for job in jobs]
    assert all(result["answers"] for result in results)
    size = cache_bytes(repository / "remote-cache")
    assert 0 < size <= bound, size
    assert not list((repository / "remote-cache" / "tmp").iterdir())


def test_the_cache_size_setting(tmp_path):
    con = connect(tmp_path / "repository")
    for good in ["0", "1000000", "1GB", "512MiB"]:
        con.execute(f"SET differential_remote_cache_size = '{good}'")
    refused(con, "SET differential_remote_cache_size = 'lots'", "invalid_argument")
    refused(con, "SET differential_remote_cache_size = '-5'", "invalid_argument")
    assert con.execute("SELECT current_setting('differential_remote_cache_size')").fetchone() == ("512MiB",)
