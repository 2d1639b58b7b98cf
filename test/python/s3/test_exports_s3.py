"""Exports to S3 (versitygw through the `s3` fixture): the spec's secret + DATA_PATH block, dedup
counted in requests, a head race between two processes, a server killed mid-export, and credentials
that never reach the repository, the logs or an error."""
import os
import pathlib
import re
import subprocess
import sys
import threading
import time

import pytest

from differential_testing import REPO_ROOT, connect, refused, run_python, scalar
from export_objects import check_head, count


def bucket_root(s3):
    """Where versitygw's posix backend keeps the objects under the fixture's prefix."""
    prefix = s3.url.split("/", 3)[3]
    return pathlib.Path(s3.path) / prefix


def attach_orders(con, s3, secret=True):
    if secret:
        con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')")


def test_spec_secret_and_data_path(repository, s3):
    con = connect(repository)
    attach_orders(con, s3)
    con.execute("CREATE TABLE orders.items AS SELECT range AS id, range % 7 AS kind FROM range(200000)")
    row = con.execute("SELECT snapshot_id FROM differential_create_snapshot('orders', name => 'first')").fetchone()
    assert row == (1,)
    root = bucket_root(s3)
    assert check_head(root, "orders") == 1
    assert count(root, "packs") >= 1 and count(root, "indexes") >= 1


def test_second_export_of_unchanged_database_uploads_no_data(repository, s3):
    con = connect(repository)
    attach_orders(con, s3)
    con.execute("CREATE TABLE orders.items AS SELECT range AS id, md5(range::VARCHAR) AS v FROM range(1000000)")
    con.execute("CALL differential_create_snapshot('orders')")
    root = bucket_root(s3)
    packs = count(root, "packs")
    assert packs >= 3
    # Nothing due: no row, no request.
    assert con.execute("SELECT * FROM differential_export_snapshot('orders')").fetchall() == []
    # An unchanged snapshot: descriptor, commit record and head, plus the export marker (PUT, DELETE) and
    # the two listings for running cleanups and their deletions: seven requests, no data.
    con.execute("SET enable_logging = true")
    con.execute("CALL differential_create_snapshot('orders')")
    requests = con.execute(
        "SELECT detail FROM duckdb_logs_parsed('differential') WHERE event = 'export_request'"
    ).fetchall()
    assert len(requests) == 7, requests
    assert all("attempt(s)" in detail for (detail,) in requests)
    assert count(root, "packs") == packs
    # A clone's export uploads only its new chunks.
    con.execute("CALL differential_clone_database('orders', 'copy')")
    con.execute("ATTACH 'differential:copy' AS copy")
    con.execute("UPDATE copy.items SET v = 'x' WHERE id = 3")
    con.execute("CALL differential_create_snapshot('copy')")
    assert 1 <= count(root, "packs") - packs < packs
    assert check_head(root, "copy") == 1


RACER = """
import sys, time, pathlib
from differential_testing import connect
repository, secret_sql, url, go = sys.argv[1:5]
con = connect(repository)
con.execute(secret_sql)
con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{url}')")
con.execute("CREATE TABLE orders.t AS SELECT range AS id FROM range(50000)")
con.execute("CHECKPOINT orders")
while not pathlib.Path(go).exists():
    time.sleep(0.005)
try:
    con.execute("CALL differential_create_snapshot('orders')")
    print("won")
except Exception as e:
    print("lost", e)
print("snapshots", con.execute("SELECT count(*) FROM differential_snapshots('orders')").fetchone()[0])
"""


def test_two_processes_race_for_one_head(tmp_path, s3):
    go = tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "test" / "python"))
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, str(tmp_path / f"repo{i}"), s3.secret_sql, s3.url, str(go)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for i in range(2)
    ]
    time.sleep(1.0)
    go.write_text("go")
    outputs = [r.communicate(timeout=180) for r in racers]
    results = [out for out, _ in outputs]
    assert all(r.returncode == 0 for r in racers), outputs
    winners = [r for r in results if r.startswith("won")]
    losers = [r for r in results if r.startswith("lost")]
    assert len(winners) == 1 and len(losers) == 1, results
    assert "[differential:head_conflict]" in losers[0], losers[0]
    # Nothing is lost locally: both processes keep their snapshot.
    assert all("snapshots 1" in r for r in results), results
    assert check_head(bucket_root(s3), "orders") == 1


def test_server_killed_mid_export_then_retry(repository, s3):
    con = connect(repository)
    attach_orders(con, s3)
    con.execute("CREATE TABLE orders.o AS SELECT range AS id, md5(range::VARCHAR) || md5((range + 1)::VARCHAR) AS v "
                "FROM range(1500000)")
    root = bucket_root(s3)
    killed = threading.Event()

    def kill_at_first_pack():
        deadline = time.time() + 120
        while time.time() < deadline and not killed.is_set():
            if count(root, "packs") >= 1:
                s3.server.kill()
                killed.set()
                return
            time.sleep(0.002)

    killer = threading.Thread(target=kill_at_first_pack)
    killer.start()
    try:
        message = refused(con, "CALL differential_create_snapshot('orders')", "export_failed")
    finally:
        killed.set()
        killer.join()
        if s3.server.process.poll() is not None:
            s3.server.start()
    assert "Snapshot 1 of database orders is committed locally" in message
    assert "differential_export_snapshot('orders')" in message
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('orders')") == 1
    # No head was written, so none points at anything missing.
    assert not (root / "heads" / "orders" / "main").exists()
    con.execute(s3.server.secret_sql(f"s3://{s3.name}/"))  # the restarted server has a new port
    rows = con.execute("SELECT snapshot_id, head_moved FROM differential_export_snapshot('orders')").fetchall()
    assert rows == [(1, True)]
    assert check_head(root, "orders") == 1


def test_wrong_credentials_are_denied_and_never_written(repository, s3, tmp_path):
    con = connect(repository)
    good = s3.secret_sql
    secret_value = re.search(r"SECRET '([^']+)'", good).group(1)
    con.execute(good.replace(secret_value, "not-the-secret"))
    # Our log type only: DuckDB's own query log (SET enable_logging = true) records every statement as
    # written, CREATE SECRET included; that is DuckDB's, not ours (docs/S3.md §4).
    con.execute("CALL enable_logging('differential')")
    # The ATTACH that gives the DATA_PATH asks the store first: refused with the code the export would give.
    attach = f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')"
    refusal = refused(con, attach, "access_denied")
    assert "TYPE s3 secret" in refusal and "not-the-secret" not in refusal
    assert scalar(con, "SELECT count(*) FROM differential_databases()") == 0
    # Credentials that go bad after the ATTACH: the export refuses, the snapshot stays local.
    con.execute(good.replace("CREATE SECRET", "CREATE OR REPLACE SECRET"))
    con.execute(attach)
    con.execute(good.replace("CREATE SECRET", "CREATE OR REPLACE SECRET").replace(secret_value, "not-the-secret"))
    con.execute("CREATE TABLE orders.t AS SELECT 1 AS x")
    message = refused(con, "CALL differential_create_snapshot('orders')", "access_denied")
    assert "TYPE s3 secret" in message and "not-the-secret" not in message
    assert scalar(con, "SELECT count(*) FROM differential_snapshots('orders')") == 1
    # Now the right secret: the retry exports, and no secret is anywhere we write.
    con.execute(good.replace("CREATE SECRET", "CREATE OR REPLACE SECRET"))
    con.execute("SELECT * FROM differential_export_snapshot('orders')").fetchall()
    assert check_head(bucket_root(s3), "orders") == 1
    logs = "\n".join(m for (m,) in con.execute("SELECT message FROM duckdb_logs").fetchall())
    assert "export_request" in logs
    for value in (secret_value, "not-the-secret"):
        assert value not in logs and value not in message
        for path in pathlib.Path(repository).rglob("*"):
            if path.is_file():
                assert value.encode() not in path.read_bytes(), path


def test_spec_block_with_the_credential_chain(tmp_path, s3):
    """The spec's block as written (PROVIDER credential_chain, REGION, SCOPE), with the keys in the
    environment, where the AWS chain finds them; the endpoint of the local server is the one addition."""
    out = run_python(
        "from differential_testing import connect\n"
        f"con = connect({str(tmp_path / 'repo')!r})\n"
        "con.execute(\"CREATE SECRET lake (TYPE s3, PROVIDER credential_chain, REGION 'us-east-1', "
        f"ENDPOINT '{s3.server.endpoint}', URL_STYLE 'path', USE_SSL false, SCOPE '{s3.url}')\")\n"
        f"con.execute(\"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')\")\n"
        "con.execute('CREATE TABLE orders.o AS SELECT range AS id FROM range(10000)')\n"
        "print(con.execute(\"SELECT snapshot_id FROM differential_create_snapshot('orders')\").fetchone()[0])\n",
        env={"AWS_ACCESS_KEY_ID": s3.server.key_id, "AWS_SECRET_ACCESS_KEY": s3.server.secret,
             "AWS_EC2_METADATA_DISABLED": "true"})
    assert out.split() == ["1"]
    assert check_head(bucket_root(s3), "orders") == 1


def test_no_credentials_at_all_is_denied(tmp_path, s3):
    """No secret and nothing in the AWS chain: the ATTACH that gives the DATA_PATH is refused as access_denied (the
    code the export would give), and no database is made."""
    out = run_python(
        "import duckdb\n"
        "from differential_testing import connect\n"
        f"con = connect({str(tmp_path / 'repo')!r})\n"
        "try:\n"
        f"    con.execute(\"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')\")\n"
        "except duckdb.Error as e:\n"
        "    print(str(e).split(']')[0].split(':')[-1])\n"
        "print(con.execute(\"SELECT count(*) FROM differential_databases()\").fetchone()[0])\n",
        env={"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "", "HOME": str(tmp_path),
             "AWS_EC2_METADATA_DISABLED": "true"}, timeout=300)
    assert out.split() == ["access_denied", "0"], out
