"""Local payload eviction of S3 databases: exported chunks are dropped locally, cleanup reclaims their segments, and
reads (also time travel over evicted snapshots) fetch them back from the packs, verified, in separate processes."""
import json
import pathlib
import random
import shutil

import pytest

from differential_testing import connect, refused, run_python, scalar

QUERIES = [
    "SELECT count(*), sum(id), sum(v), min(s), max(s) FROM {db}.t{at}",
    "SELECT v % 10, count(*), sum(id) FROM {db}.t{at} GROUP BY 1 ORDER BY 1",
]

READER = """
import json
from differential_testing import connect
con = connect({repository!r})
con.execute({setup!r})
con.execute("SET enable_logging = true")
con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{url}')")
result = {{}}
for at in ["", " AT (VERSION => 1)"]:
    result[at] = [repr(con.execute(q.format(db="orders", at=at)).fetchall()) for q in {queries!r}]
gets = con.execute("SELECT detail FROM duckdb_logs_parsed('differential') WHERE event = 'remote_get'").fetchall()
problems = con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0]
print(json.dumps({{"answers": result, "gets": [g[0] for g in gets], "problems": problems}}))
"""


def all_answers(con):
    return {at: [repr(con.execute(q.format(db="orders", at=at)).fetchall()) for q in QUERIES]
            for at in ["", " AT (VERSION => 1)"]}


def segment_bytes(repository):
    return sum(f.stat().st_size for f in (pathlib.Path(repository) / "segments").glob("*") if f.is_file())


def read_in_process(store, repository):
    code = READER.format(repository=str(repository), setup=store.setup_sql or "SELECT 1", url=store.url,
                         queries=QUERIES)
    return json.loads(run_python(code, timeout=300).strip().splitlines()[-1])


def cleanup_in_process(repository):
    """Cleanup in this process: it spares the segments of other live processes, and this one wrote them."""
    con = connect(repository)
    freed = con.execute("SELECT bytes_freed FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()[0]
    con.close()
    return freed


def make_s3_database(store, repository):
    """Two exported snapshots of salted data (chunks are content-addressed, and must not be shared across tests)."""
    salt = random.randrange(1, 1 << 30)
    con = store.prepare(connect(repository))
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
    con.execute(f"CREATE TABLE orders.t AS SELECT range AS id, (range * 7919 + {salt}) % 100003 AS v, "
                "'s' || (range % 777) AS s FROM range(400000)")
    con.execute("CALL differential_create_snapshot('orders')")
    con.execute("DELETE FROM orders.t WHERE id % 3 = 0")
    con.execute("UPDATE orders.t SET v = v + 1 WHERE id % 5 = 0")
    con.execute("CALL differential_create_snapshot('orders')")
    return con


def test_evicted_chunks_are_fetched_back_verified_with_time_travel(store, tmp_path):
    repository = tmp_path / "repository"
    con = make_s3_database(store, repository)
    before = all_answers(con)
    assert before[""] != before[" AT (VERSION => 1)"]
    chunks, evicted_bytes = con.execute("SELECT * FROM differential_evict_exported('orders')").fetchone()
    assert chunks > 10 and evicted_bytes > chunks * 1000
    # Everything exported is evicted now: a second call finds nothing left.
    assert con.execute("SELECT * FROM differential_evict_exported('orders')").fetchone() == (0, 0)
    con.close()

    on_disk = segment_bytes(repository)
    freed = cleanup_in_process(repository)
    assert freed >= evicted_bytes // 2
    assert segment_bytes(repository) <= on_disk - evicted_bytes // 2

    after = read_in_process(store, repository)
    assert after["answers"] == before
    pack_gets = [g for g in after["gets"] if "/packs/" in g or g.startswith(store.url + "packs/")]
    assert pack_gets, after["gets"]
    assert all(": ok, " in g for g in pack_gets)
    assert after["problems"] == 0


def test_the_database_stays_writable_and_a_new_snapshot_exports_only_new_chunks(store, tmp_path):
    repository = tmp_path / "repository"
    con = make_s3_database(store, repository)
    con.execute("SELECT * FROM differential_evict_exported('orders')")
    con.execute("DETACH orders")
    con.close()
    cleanup_in_process(repository)
    con = store.prepare(connect(repository))
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
    expected = con.execute("SELECT count(*) + 1, sum(v) + 7 FROM orders.t").fetchone()
    packs_before = {p.name: p.stat().st_size for p in (store.root / "packs").iterdir()}
    con.execute("INSERT INTO orders.t VALUES (-1, 7, 'new')")
    con.execute("CALL differential_create_snapshot('orders')")
    assert con.execute("SELECT count(*), sum(v) FROM orders.t").fetchone() == expected
    # The snapshot's export uploaded only its changed chunks: the evicted ones are in the store already.
    new_packs = {p.name: p.stat().st_size for p in (store.root / "packs").iterdir() if p.name not in packs_before}
    assert sum(new_packs.values()) < sum(packs_before.values()) // 4
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('orders')") == 3


def test_evict_after_export_setting(store, tmp_path):
    repository = tmp_path / "repository"
    con = store.prepare(connect(repository))
    con.execute("SET differential_evict_after_export = true")
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
    salt = random.randrange(1, 1 << 30)
    con.execute(f"CREATE TABLE orders.t AS SELECT range AS id, range + {salt} AS v FROM range(300000)")
    con.execute("CALL differential_create_snapshot('orders')")
    expected = con.execute("SELECT count(*), sum(v) FROM orders.t").fetchall()
    # The export after the snapshot evicted what it uploaded: nothing is left to evict.
    assert con.execute("SELECT chunks_evicted FROM differential_evict_exported('orders')").fetchone() == (0,)
    con.close()
    assert cleanup_in_process(repository) > 0
    reader = store.prepare(connect(repository))
    reader.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
    assert reader.execute("SELECT count(*), sum(v) FROM orders.t").fetchall() == expected


def test_a_corrupted_pack_is_refused_never_returned(store, tmp_path):
    repository = tmp_path / "repository"
    con = make_s3_database(store, repository)
    con.execute("SELECT * FROM differential_evict_exported('orders')")
    con.close()
    cleanup_in_process(repository)
    for pack in (store.root / "packs").iterdir():
        data = bytearray(pack.read_bytes())
        for at in range(0, len(data), 4096):
            data[at] ^= 0x5A
        pack.write_bytes(bytes(data))
    code = f"""
import duckdb
from differential_testing import connect, refused
con = connect({str(repository)!r})
con.execute({store.setup_sql or "SELECT 1"!r})
# The damaged header chunk may already refuse the ATTACH (DuckDB reads it there), else the query.
try:
    con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
except duckdb.Error as e:
    assert "[differential:corrupt_chunk]" in str(e), str(e)
    print("refused")
    raise SystemExit(0)
refused(con, "SELECT sum(v) FROM orders.t", "corrupt_chunk")
print("refused")
"""
    assert run_python(code, timeout=300).strip().splitlines()[-1] == "refused"


def test_refusals_change_nothing(store, tmp_path):
    con = store.prepare(connect(tmp_path / "repository"))
    refused(con, "SELECT * FROM differential_evict_exported('nosuch')", "database_not_found")
    con.execute("ATTACH 'differential:local' AS local")
    con.execute("CREATE TABLE local.t AS SELECT range AS id FROM range(1000)")
    con.execute("CALL differential_create_snapshot('local')")
    refused(con, "SELECT * FROM differential_evict_exported('local')", "no_data_path")
    assert con.execute("SELECT count(*) FROM local.t").fetchone() == (1000,)
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


FETCHED_READER = """
import json
import duckdb
from differential_testing import connect
con = connect({repository!r})
con.execute({setup!r})
try:
    con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{url}')")
    answers = {{at: [repr(con.execute(q.format(db="orders", at=at)).fetchall()) for q in {queries!r}]
               for at in ["", " AT (VERSION => 1)"]}}
except duckdb.Error as e:
    print(json.dumps({{"error": str(e)}}))
    raise SystemExit(0)
print(json.dumps({{"answers": answers}}))
"""


def read_without_the_store(store, repository):
    """Reads every snapshot in another process while the store's objects are moved away (the store is empty)."""
    hidden = store.root.with_name(store.root.name + "-hidden")
    store.root.rename(hidden)
    store.root.mkdir()
    try:
        code = FETCHED_READER.format(repository=str(repository), setup=store.setup_sql or "SELECT 1", url=store.url,
                                     queries=QUERIES)
        return json.loads(run_python(code, timeout=300).strip().splitlines()[-1])
    finally:
        # The ATTACH may have written to the empty stand-in (its conditional-write probe): dropped with it.
        shutil.rmtree(store.root)
        hidden.rename(store.root)


def evicted_database(store, repository):
    """The test database, every answer read before its eviction, and what the eviction counted."""
    con = make_s3_database(store, repository)
    before = all_answers(con)
    evicted = con.execute("SELECT * FROM differential_evict_exported('orders')").fetchone()
    con.close()
    return before, evicted


def test_fetch_evicted_brings_every_chunk_back_and_reads_no_longer_need_the_store(store, tmp_path):
    repository = tmp_path / "repository"
    before, evicted = evicted_database(store, repository)
    cleanup_in_process(repository)
    # Evicted: a read needs the store, and fails without it.
    assert "[differential:remote_not_found]" in read_without_the_store(store, repository)["error"]

    con = store.prepare(connect(repository))
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
    assert con.execute("SELECT chunks_fetched, bytes_fetched FROM differential_fetch_evicted('orders')").fetchone() \
        == evicted
    assert con.execute("SELECT * FROM differential_fetch_evicted('orders')").fetchone() == (0, 0)
    assert all_answers(con) == before
    con.close()
    # Cleanup keeps the fetched chunks: they are referenced again (the read below needs them).
    cleanup_in_process(repository)
    assert read_without_the_store(store, repository) == {"answers": before}
    con = connect(repository)
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    # The chunks are local again, so the store still holds them all and they can be evicted once more.
    con = store.prepare(con)
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
    assert con.execute("SELECT * FROM differential_evict_exported('orders')").fetchone() == evicted


def test_fetch_evicted_killed_before_its_commit_loses_nothing_and_a_retry_completes(store, tmp_path):
    repository = tmp_path / "repository"
    before, evicted = evicted_database(store, repository)
    code = f"""
from differential_testing import connect
con = connect({str(repository)!r})
con.execute({store.setup_sql or "SELECT 1"!r})
con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
con.execute("SELECT * FROM differential_fetch_evicted('orders')").fetchall()
print("not killed")
"""
    with pytest.raises(AssertionError, match=r"subprocess failed \(-9\)"):
        run_python(code, timeout=300, env={"DIFFERENTIAL_CRASH_POINT": "fetch_evicted.before_commit:1"})
    con = store.prepare(connect(repository))
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
    assert all_answers(con) == before
    assert con.execute("SELECT * FROM differential_fetch_evicted('orders')").fetchone() == evicted
    con.close()
    assert read_without_the_store(store, repository) == {"answers": before}


def test_fetch_evicted_refusals_change_nothing(store, tmp_path):
    con = store.prepare(connect(tmp_path / "repository"))
    refused(con, "SELECT * FROM differential_fetch_evicted('nosuch')", "database_not_found")
    refused(con, "SELECT * FROM differential_fetch_evicted('bad name!')", "invalid_name")
    con.execute("ATTACH 'differential:local' AS local")
    con.execute("CREATE TABLE local.t AS SELECT range AS id FROM range(1000)")
    con.execute("CALL differential_create_snapshot('local')")
    # Nothing of a local database is evicted: nothing to fetch.
    assert con.execute("SELECT * FROM differential_fetch_evicted('local')").fetchone() == (0, 0)
    assert con.execute("SELECT count(*) FROM local.t").fetchone() == (1000,)
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0


RECOVER = """
import json
from differential_testing import connect, refused
con = connect({repository!r})
con.execute({setup!r})
con.execute("SET enable_logging = true")
row = con.execute("SELECT * FROM differential_recover_export(?, '{name}')", [{locator!r}]).fetchone()
con.execute("ATTACH 'differential:{name}' AS orders")
result = {{"": [repr(con.execute(q.format(db="orders", at="")).fetchall()) for q in {queries!r}]}}
gets = con.execute("SELECT detail FROM duckdb_logs_parsed('differential') WHERE event = 'remote_get'").fetchall()
problems = con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0]
# Writable: a change, then snapshot 2, whose export uploads only the changed chunks.
con.execute("INSERT INTO orders.t VALUES (-1, 7, 'new')")
con.execute("CALL differential_create_snapshot('orders')")
after = con.execute("SELECT count(*), sum(v) FROM orders.t").fetchone()
uploads = con.execute("SELECT detail FROM duckdb_logs_parsed('differential') WHERE event = 'export_request'").fetchall()
refused(con, "SELECT * FROM differential_recover_export('{locator}', '{name}')", "database_exists")
print(json.dumps({{"row": list(row), "answers": result, "gets": [g[0] for g in gets], "problems": problems,
                  "after": list(after), "uploads": [u[0] for u in uploads]}}))
"""


def recover_in_process(store, repository, locator, name):
    code = RECOVER.format(repository=str(repository), setup=store.setup_sql or "SELECT 1", locator=locator,
                          queries=QUERIES, name=name)
    return json.loads(run_python(code, timeout=300).strip().splitlines()[-1])


def test_recover_export_from_a_head_and_a_descriptor(store, tmp_path):
    con = make_s3_database(store, tmp_path / "writer")
    latest = all_answers(con)[""]
    count, total = con.execute("SELECT count(*), sum(v) FROM orders.t").fetchone()
    con.close()
    commit = (store.root / "commits" / "orders" / f"{1:020d}").read_text().splitlines()
    descriptor = [line for line in commit if line.startswith("descriptor ")][0].split(" ")[1]
    pack_bytes = sum(p.stat().st_size for p in (store.root / "packs").iterdir())

    head = recover_in_process(store, tmp_path / "fresh-1", f"{store.url}heads/orders/main", "rec")
    assert head["row"][0] == "rec" and head["row"][1] == 1 and head["row"][3] > 3
    assert head["answers"][""] == latest
    assert any("packs/" in g for g in head["gets"])
    assert head["problems"] == 0
    assert head["after"] == [count + 1, total + 7]
    # Snapshot 2's export: a few changed chunks, far less than the data the export already held.
    new_packs = [u for u in head["uploads"] if "packs/" in u]
    assert len(new_packs) <= 2, head["uploads"]
    assert (store.root / "heads" / "rec" / "main").exists()
    assert sum(p.stat().st_size for p in (store.root / "packs").iterdir()) < pack_bytes * 5 // 4

    # Another repository publishing to the same store needs another name (the store's commits are per name).
    old = recover_in_process(store, tmp_path / "fresh-2", f"{store.url}descriptors/{descriptor}", "rec_v1")
    assert old["answers"][""] != latest
    assert old["row"][0] == "rec_v1" and old["row"][1] == 1 and old["problems"] == 0


def test_recover_export_refusals_change_nothing(store, tmp_path):
    con = make_s3_database(store, tmp_path / "writer")
    con.close()
    con = store.prepare(connect(tmp_path / "fresh"))
    refused(con, "SELECT * FROM differential_recover_export('not a locator', 'rec')", "invalid_locator")
    refused(con, f"SELECT * FROM differential_recover_export('{store.url}descriptors/xyz', 'rec')", "invalid_locator")
    refused(con, f"SELECT * FROM differential_recover_export('{store.url}heads/nosuch/main', 'rec')", "head_not_found")
    refused(con, f"SELECT * FROM differential_recover_export('{store.url}heads/orders/main', 'bad name!')",
            "invalid_name")
    assert con.execute("SELECT count(*) FROM differential_databases()").fetchone() == (0,)
    con.execute("ATTACH 'differential:taken'")
    refused(con, f"SELECT * FROM differential_recover_export('{store.url}heads/orders/main', 'taken')",
            "database_exists")
    assert con.execute("SELECT count(*) FROM differential_databases()").fetchone() == (1,)
