"""Remote read-only attach of an export (the read side): a branch head or a descriptor attaches without the
writer's repository, reads equal the source database, damaged or missing objects are refused with their codes and
never read as data, and bad locators are refused before anything is attached."""
import os
import pathlib

import duckdb
import pytest
from export_writer import write_export
from remote_fixtures import answers, make_source
from differential_testing import connect, refused, run_python


def attached_names(con):
    return sorted(row[0] for row in con.execute("SELECT database_name FROM duckdb_databases()").fetchall())


def test_head_and_descriptor_read_like_the_source(store, source):
    export = store.export(source)
    native = duckdb.connect(str(source), read_only=True)
    expected = answers(native, "main")
    native.close()
    # No differential_repository: a remote attach needs none.
    con = store.prepare(connect())
    con.execute(f"ATTACH 'differential:{store.url}heads/orders/main' AS orders_latest")
    con.execute(f"ATTACH 'differential:{store.url}descriptors/{export.descriptor}' AS pinned")
    assert answers(con, "orders_latest") == expected
    assert answers(con, "pinned") == expected
    tables = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'pinned' ORDER BY 1"
    ).fetchall()
    assert tables == [("items",), ("small",)]
    con.execute("DETACH orders_latest")
    con.execute("DETACH pinned")
    # The same export attached again (two names at once) reads the same.
    con.execute(f"ATTACH 'differential:{store.url}heads/orders/main' AS a")
    con.execute(f"ATTACH 'differential:{store.url}heads/orders/main' AS b")
    assert answers(con, "a") == answers(con, "b") == expected


def flip_byte(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


def test_corrupted_chunks_are_refused_never_returned(store, source):
    export = store.export(source)
    con = store.prepare(connect())
    con.execute(f"ATTACH 'differential:{store.url}descriptors/{export.descriptor}' AS d")
    # Attaching read the headers and the catalog; the table's data chunks are read by the query below only.
    # Damage one byte of every chunk that is in a pack, the way a bad disk or a bad copy would.
    for index, (_, pack_hash, offset, length) in enumerate(export.slots):
        if length and index > 0:
            flip_byte(export.path(f"packs/{pack_hash.hex()}"), offset + length // 2)
    for _ in range(2):
        # Refused again on a retry: nothing of a bad chunk was cached.
        refused(con, "SELECT sum(price), count(*) FROM d.items", "corrupt_chunk")


def test_a_missing_pack_is_a_clear_error(store, source):
    export = store.export(source)
    con = store.prepare(connect())
    con.execute(f"ATTACH 'differential:{store.url}heads/orders/main' AS h")
    for key in export.packs:
        export.path(key).unlink()
    message = refused(con, "SELECT sum(price) FROM h.items", "missing_object")
    assert "packs/" in message


def test_bad_locators_each_get_their_own_error_and_attach_nothing(store, source):
    store.export(source)
    con = store.prepare(connect())
    before = attached_names(con)
    url = store.url
    refused(con, f"ATTACH 'differential:{url}orders' AS x", "invalid_locator")
    refused(con, f"ATTACH 'differential:{url}heads/orders' AS x", "invalid_locator")
    message = refused(con, f"ATTACH 'differential:{url}descriptors/not-a-hash' AS x", "invalid_locator")
    assert "64 hexadecimal digits" in message
    message = refused(con, f"ATTACH 'differential:{url}heads/orders/nightly' AS x", "head_not_found")
    assert "main" in message  # the branches that do have heads
    refused(con, f"ATTACH 'differential:{url}heads/nobody/main' AS x", "head_not_found")
    refused(con, f"ATTACH 'differential:{url}descriptors/{'ab' * 32}' AS x", "descriptor_not_found")
    refused(con, f"ATTACH 'differential:{url}heads/../main' AS x", "invalid_name")
    assert attached_names(con) == before


def test_a_damaged_head_or_descriptor_is_refused(store, source):
    export = store.export(source)
    con = store.prepare(connect())
    flip_byte(export.path(f"descriptors/{export.descriptor}"), 5)
    refused(con, f"ATTACH 'differential:{store.url}heads/orders/main' AS x", "corrupt_descriptor")
    export.path("heads/orders/main").write_text("not a head\n")
    refused(con, f"ATTACH 'differential:{store.url}heads/orders/main' AS x", "corrupt_head")
    flip_byte(export.path(export.index_pages[0]), 40)
    flip_byte(export.path(f"descriptors/{export.descriptor}"), 5)
    refused(con, f"ATTACH 'differential:{store.url}descriptors/{export.descriptor}' AS x", "corrupt_index_page")


def test_writes_history_and_options_are_refused(store, source):
    store.export(source)
    con = store.prepare(connect())
    con.execute(f"ATTACH 'differential:{store.url}heads/orders/main' AS r")
    for sql in [
        "INSERT INTO r.small VALUES (100, 200)",
        "UPDATE r.small SET v = 0",
        "DELETE FROM r.small",
        "CREATE TABLE r.copy AS SELECT * FROM r.small",
        "CREATE INDEX small_k ON r.small (k)",
        "CREATE SCHEMA r.other",
    ]:
        message = refused(con, sql, "read_only")
        assert "remote attachment" in message
    # DDL that DuckDB refuses before any catalog hook runs: its own read-only error.
    with pytest.raises(duckdb.Error, match="read-only"):
        con.execute("CREATE TABLE r.t (x INTEGER)")
    with pytest.raises(duckdb.Error, match="read-only"):
        con.execute("DROP TABLE r.small")
    refused(con, "SELECT * FROM r.small AT (VERSION => 1)", "not_supported")
    refused(con, "SELECT * FROM r.snapshots()", "not_supported")
    refused(con, "CALL differential_create_snapshot('r')", "not_supported")
    refused(con, f"ATTACH 'differential:{store.url}heads/orders/main' AS w (READ_WRITE)", "read_only")
    refused(con, f"ATTACH 'differential:{store.url}heads/orders/main' AS w (BRANCH 'dev')", "invalid_option")
    assert con.execute("SELECT count(*) FROM r.small").fetchone() == (10,)


def test_s3_wrong_bucket_and_credentials_get_their_own_errors(s3, s3_server, source, tmp_path):
    export = write_export(pathlib.Path(s3.path) / "lake", source)
    locator = f"{s3.url}heads/orders/main"
    # Credentials for every bucket of the server, and a bucket that does not exist.
    con = connect()
    con.execute(s3_server.secret_sql("s3://", name="everywhere"))
    message = refused(con, "ATTACH 'differential:s3://no-such-bucket-here/lake/heads/orders/main' AS x",
                      "bucket_not_found")
    assert "no-such-bucket-here" in message
    # A secret the server does not accept: refused, and the secret is in no message and no log line.
    con = connect()
    con.execute("SET enable_logging = true")
    wrong = s3.secret_sql.replace(s3_server.secret, "0" * len(s3_server.secret))
    con.execute(wrong)
    message = refused(con, f"ATTACH 'differential:{locator}' AS x", "remote_denied")
    assert "0" * len(s3_server.secret) not in message
    # (DuckDB's own query log holds the CREATE SECRET text; the extension's entries must not.)
    logs = " ".join(str(row) for row in con.execute("SELECT * FROM duckdb_logs WHERE type = 'differential'").fetchall())
    assert "remote_get" in logs
    assert "0" * len(s3_server.secret) not in logs
    # No secret at all and nothing in the AWS chain: the same code, in a process whose environment is empty of it.
    code = f"""
from differential_testing import connect
con = connect()
try:
    con.execute("ATTACH 'differential:{locator}' AS x")
    print("attached")
except Exception as e:
    print(str(e))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"HOME": str(tmp_path), "AWS_EC2_METADATA_DISABLED": "true",
                "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), "AWS_CONFIG_FILE": str(tmp_path / "none")})
    out = run_python(code, env=env, timeout=300)
    assert "[differential:remote_denied]" in out, out
    # With the right secret it attaches: the export was fine all along.
    con = connect()
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:{s3.url}descriptors/{export.descriptor}' AS ok")
    assert con.execute("SELECT count(*) FROM ok.small").fetchone() == (10,)


def test_each_attach_reads_the_head_as_it_is_then(store, source, tmp_path):
    store.export(source)
    con = store.prepare(connect())
    con.execute(f"ATTACH 'differential:{store.url}heads/orders/main' AS before (READ_ONLY)")
    # The writer exports a newer snapshot and moves the head (here: a smaller database, snapshot 2).
    newer = make_source(tmp_path / "newer.duckdb", rows=1000)
    store.export(newer, snapshot_id=2)
    con.execute(f"ATTACH 'differential:{store.url}heads/orders/main' AS after")
    assert con.execute("SELECT count(*) FROM before.items").fetchone() == (300_000,)
    assert con.execute("SELECT count(*) FROM after.items").fetchone() == (1000,)
    # Without AS, DuckDB names the attachment after the path's last segment (main_db for a branch `main`,
    # since `main` is reserved), and DETACH lets the image go.
    con.execute(f"ATTACH 'differential:{store.url}heads/orders/main'")
    assert con.execute("SELECT count(*) FROM main_db.items").fetchone() == (1000,)
    for alias in ("before", "after", "main_db"):
        con.execute(f"DETACH {alias}")
    assert attached_names(con) == ["memory", "system", "temp"]


def test_damaged_headers_refuse_the_attach_itself(store, source):
    export = store.export(source)
    con = store.prepare(connect())
    _, pack_hash, offset, length = export.slots[0]
    flip_byte(export.path(f"packs/{pack_hash.hex()}"), offset + 100)
    refused(con, f"ATTACH 'differential:{store.url}heads/orders/main' AS x", "corrupt_chunk")
    assert "x" not in attached_names(con)
