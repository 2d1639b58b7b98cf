"""An ATTACH that gives a database a DATA_PATH asks the store once (a listing of one key) before it writes anything:
a bucket that does not exist is refused with export_failed, credentials the store refuses with access_denied (the
codes the first export would give), and the repository is left byte-identical; a store that cannot be reached only
warns (data_path_unreachable in duckdb_logs) and the database attaches, so local work goes on; a database that
already has its DATA_PATH attaches whatever its store says."""
import socket

from differential_testing import connect, refused, scalar, tree_fingerprint


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_bucket_that_does_not_exist_is_refused_at_attach_and_changes_nothing(repository, s3):
    con = connect(repository)
    con.execute(s3.server.secret_sql("s3://"))  # credentials the server accepts, for every bucket
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.t AS SELECT 1 AS x")
    con.execute("DETACH shop")
    before = tree_fingerprint(repository)
    for database in ("shop", "fresh"):  # an existing local database, and a new one
        message = refused(con, f"ATTACH 'differential:{database}' AS d (DATA_PATH 's3://no-such-bucket-{database}/lake/')",
                          "export_failed")
        assert "bucket does not exist" in message and "Nothing was attached" in message, message
    assert tree_fingerprint(repository) == before
    assert scalar(con, "SELECT count(*) FROM duckdb_databases() WHERE database_name = 'd'") == 0
    con.close()


def test_credentials_the_store_refuses_are_refused_at_attach(repository, s3):
    con = connect(repository)
    con.execute(s3.secret_sql.replace(f"SECRET '{s3.server.secret}'", "SECRET 'not-the-secret'"))
    before = tree_fingerprint(repository)
    message = refused(con, f"ATTACH 'differential:shop' AS shop (DATA_PATH '{s3.url}')", "access_denied")
    assert "not-the-secret" not in message
    assert tree_fingerprint(repository) == before
    con.close()


def test_an_unreachable_store_attaches_with_a_warning_and_local_work_goes_on(repository, s3):
    con = connect(repository)
    endpoint = f"127.0.0.1:{closed_port()}"
    con.execute(s3.secret_sql.replace(f"ENDPOINT '{s3.server.endpoint}'", f"ENDPOINT '{endpoint}'"))
    con.execute("CALL enable_logging('differential')")
    con.execute(f"ATTACH 'differential:shop' AS shop (DATA_PATH '{s3.url}')")
    warnings = con.execute("SELECT message FROM duckdb_logs WHERE log_level = 'WARNING' "
                           "AND message LIKE '%data_path_unreachable%'").fetchall()
    assert len(warnings) == 1 and s3.url in warnings[0][0], warnings
    con.execute("CREATE TABLE shop.t AS SELECT range AS x FROM range(10)")
    assert scalar(con, "SELECT sum(x) FROM shop.t") == 45
    # The DATA_PATH is the database's: once the store answers, the snapshots export.
    con.execute(s3.secret_sql)
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('shop')") == 1
    con.execute(f"ATTACH 'differential:{s3.url}heads/shop/main' AS head")  # what another host would read
    assert scalar(con, "SELECT sum(x) FROM head.t") == 45
    con.close()


def test_a_database_with_its_data_path_attaches_whatever_its_store_says(repository, s3):
    con = connect(repository)
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:shop' AS shop (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE shop.t AS SELECT 1 AS x")
    con.execute("DETACH shop")
    con.execute(s3.secret_sql.replace(f"SECRET '{s3.server.secret}'", "SECRET 'not-the-secret'"))
    con.execute(f"ATTACH 'differential:shop' AS shop (DATA_PATH '{s3.url}')")  # nothing new to record: no probe
    con.execute("INSERT INTO shop.t VALUES (2)")
    assert scalar(con, "SELECT count(*) FROM shop.t") == 2
    con.close()
