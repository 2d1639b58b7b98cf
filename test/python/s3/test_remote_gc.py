"""Remote garbage collection with real exports on versitygw: expiry records, condemn-then-delete, the dry
run's list, the deletion journal that keeps exporters from reusing deleted packs, and a randomized run of
exports, expiries and cleanups from two processes in which every unexpired snapshot stays complete."""
import json
import os
import pathlib
import random
import subprocess
import sys

from differential_testing import REPO_ROOT, connect
from export_objects import check_descriptor, check_head, count, text_object


def bucket_root(s3):
    return pathlib.Path(s3.path) / s3.url.split("/", 3)[3]


def cleanup(con, s3, dry_run=False, grace="0 seconds"):
    row = con.execute(
        f"SELECT deleted_objects, condemned_objects, hold, deleted_keys, roots, live_objects, unreachable_objects "
        f"FROM differential_cleanup_remote_files('{s3.url}', dry_run => {str(dry_run).lower()}, "
        f"grace => INTERVAL '{grace}')").fetchone()
    keys = ("deleted", "condemned", "hold", "keys", "roots", "live", "unreachable")
    return dict(zip(keys, row))


def exported_descriptors(root, database):
    """Snapshot id -> descriptor of every commit record of `database` without an expiry record."""
    out = {}
    commits = root / "commits" / database
    for record in sorted(commits.iterdir()) if commits.exists() else []:
        if not (root / "expiries" / database / record.name).exists():
            out[int(record.name)] = text_object(record)[1]["descriptor"][0]
    return out


def snapshot(con, database):
    return con.execute(f"SELECT snapshot_id FROM differential_create_snapshot('{database}')").fetchone()[0]


def test_spec_dry_run_counts_roots_and_live_objects(repository, s3):
    con = connect(repository)
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE orders.t AS SELECT range AS id FROM range(100000)")
    snapshot(con, "orders")
    con.execute("INSERT INTO orders.t SELECT range FROM range(100000, 200000)")
    snapshot(con, "orders")
    root = bucket_root(s3)
    result = cleanup(con, s3, dry_run=True)
    # Two unexpired snapshots; the head names the second. Every object is reachable.
    assert result["roots"] == 2
    assert result["live"] == count(root, "packs") + count(root, "indexes") + count(root, "descriptors")
    assert (result["unreachable"], result["deleted"], result["condemned"], result["keys"]) == (0, 0, 0, [])


def test_expired_snapshot_is_condemned_then_deleted_after_grace(repository, s3):
    con = connect(repository)
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE orders.t AS SELECT range AS id, md5(range::VARCHAR) AS v FROM range(300000)")
    first = snapshot(con, "orders")
    con.execute("UPDATE orders.t SET v = 'rewritten'")
    second = snapshot(con, "orders")
    root = bucket_root(s3)
    old_descriptor = exported_descriptors(root, "orders")[first]
    con.execute(f"SELECT * FROM differential_expire_snapshots('orders', versions => [{first}])").fetchall()
    assert (root / "expiries" / "orders" / f"{first:020d}").exists()
    # The default grace period (a week) only condemns.
    week = cleanup(con, s3, grace="7 days")
    assert week["condemned"] > 0 and week["deleted"] == 0
    assert (root / "descriptors" / old_descriptor).exists()
    dry = cleanup(con, s3, dry_run=True)
    assert dry["deleted"] == week["condemned"] and f"descriptors/{old_descriptor}" in dry["keys"]
    real = cleanup(con, s3)
    assert real["keys"] == dry["keys"] and real["deleted"] == dry["deleted"]
    assert not (root / "descriptors" / old_descriptor).exists()
    # What the head and the unexpired snapshot reach is complete.
    assert check_head(root, "orders") == second
    check_descriptor(root, exported_descriptors(root, "orders")[second])
    assert cleanup(con, s3)["unreachable"] == 0


def test_export_after_cleanup_reuploads_what_was_deleted(repository, s3):
    """A clone shares its source's chunks; once the source's only snapshot naming them is expired and its
    packs deleted, the clone's first export must upload them again (the deletion journal), not point at
    the deleted packs."""
    con = connect(repository)
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE orders.t AS SELECT range AS id, md5(range::VARCHAR) AS v FROM range(300000)")
    first = snapshot(con, "orders")
    con.execute("CALL differential_clone_database('orders', 'copy')")
    # New data in every block, so the first snapshot's packs hold nothing the second one needs.
    con.execute("DROP TABLE orders.t")
    con.execute("CREATE TABLE orders.u AS SELECT range AS id, md5((range + 7)::VARCHAR) AS w FROM range(300000)")
    snapshot(con, "orders")
    con.execute(f"SELECT * FROM differential_expire_snapshots('orders', versions => [{first}])").fetchall()
    assert cleanup(con, s3)["condemned"] > 0
    deleted = cleanup(con, s3)
    assert any(key.startswith("packs/") for key in deleted["keys"]), deleted
    con.execute("ATTACH 'differential:copy' AS copy")
    con.execute("INSERT INTO copy.t VALUES (-1, 'new')")
    snapshot(con, "copy")
    root = bucket_root(s3)
    check_head(root, "copy")
    assert cleanup(con, s3, dry_run=True)["unreachable"] == 0


WORKER = """
import json, sys
from differential_testing import connect
repository, secret_sql, url, database = sys.argv[1:5]
con = connect(repository)
con.execute(secret_sql)
con.execute(f"ATTACH 'differential:{database}' AS {database} (DATA_PATH '{url}')")
con.execute(f"CREATE TABLE {database}.t (id BIGINT, v VARCHAR)")
for line in sys.stdin:
    command = json.loads(line)
    try:
        rows = con.execute(command["sql"]).fetchall()
        print(json.dumps({"rows": [[str(v) for v in row] for row in rows]}), flush=True)
    except Exception as e:
        print(json.dumps({"error": str(e)}), flush=True)
"""


class Worker:
    """A process with its own repository and database, writing into the shared prefix."""

    def __init__(self, tmp_path, s3, database):
        self.database = database
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "test" / "python"))
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path / f"repo-{database}"), s3.secret_sql, s3.url, database],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.snapshots = []

    def send(self, sql):
        self.process.stdin.write(json.dumps({"sql": sql}) + "\n")
        self.process.stdin.flush()

    def receive(self):
        reply = json.loads(self.process.stdout.readline())
        assert "error" not in reply, reply["error"]
        return reply["rows"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def operation(worker, rng, s3):
    """A random step for one worker: write and snapshot (an export), expire an old snapshot, or clean up."""
    kind = rng.choice(["write", "write", "expire", "cleanup"])
    if kind == "expire" and len(worker.snapshots) > 1:
        victim = worker.snapshots.pop(rng.randrange(len(worker.snapshots) - 1))
        return kind, f"SELECT * FROM differential_expire_snapshots('{worker.database}', versions => [{victim}])"
    if kind == "cleanup":
        return kind, f"SELECT * FROM differential_cleanup_remote_files('{s3.url}', grace => INTERVAL '0 seconds')"
    start = rng.randrange(0, 200000)
    return "write", (f"INSERT INTO {worker.database}.t SELECT range, md5((range * {rng.randrange(1, 5)})::VARCHAR) "
                     f"FROM range({start}, {start + rng.randrange(1000, 40000)}); "
                     f"SELECT snapshot_id FROM differential_create_snapshot('{worker.database}')")


def test_randomized_exports_expiry_and_cleanup_in_two_processes(tmp_path, s3):
    rng = random.Random(20261202)
    workers = [Worker(tmp_path, s3, name) for name in ("alpha", "beta")]
    root = bucket_root(s3)
    con = connect()
    con.execute(s3.secret_sql)
    try:
        for _ in range(14):
            steps = [operation(worker, rng, s3) for worker in workers]
            for worker, (_, sql) in zip(workers, steps):
                worker.send(sql)  # both processes run their step at the same time
            for worker, (kind, _) in zip(workers, steps):
                rows = worker.receive()
                if kind == "write":
                    worker.snapshots.append(int(rows[0][0]))
            # Every unexpired snapshot that was exported, and every head, reaches only complete objects.
            for worker in workers:
                if worker.snapshots:
                    check_head(root, worker.database)
                for descriptor in exported_descriptors(root, worker.database).values():
                    check_descriptor(root, descriptor)
            # With nobody else writing, the dry run's list is what the next real run deletes.
            dry = cleanup(con, s3, dry_run=True)
            real = cleanup(con, s3)
            assert real["keys"] == dry["keys"] and real["hold"] == "none"
    finally:
        for worker in workers:
            worker.close()
