"""differential_cleanup_remote_files against a real S3 server (versitygw): its refusals and an empty prefix.
The full lifecycle (exports, expiry, condemn, delete after the grace period) is in test_remote_gc.py."""
import duckdb
import pytest

from differential_testing import connect, refused

COLUMNS = ["dry_run", "roots", "live_objects", "unreachable_objects", "condemned_objects", "pending_objects",
           "deleted_objects", "deleted_bytes", "hold", "deleted_keys"]


def test_empty_prefix_reports_nothing(s3):
    con = connect()
    con.execute(s3.secret_sql)
    result = con.execute(f"SELECT * FROM differential_cleanup_remote_files('{s3.url}', dry_run => true)")
    assert [d[0] for d in result.description] == COLUMNS
    assert result.fetchall() == [(True, 0, 0, 0, 0, 0, 0, 0, "none", [])]
    # A real run on an empty prefix leaves nothing behind either (its marker is removed).
    assert con.execute(f"SELECT deleted_objects, hold FROM differential_cleanup_remote_files('{s3.url}')").fetchall() \
        == [(0, "none")]
    assert list(s3.path.rglob("*")) == [] or all(p.is_dir() for p in s3.path.rglob("*"))


def test_wrong_secret_is_denied_and_never_echoed(s3):
    con = connect()
    con.execute(s3.secret_sql.replace(f"SECRET '{s3.server.secret}'", "SECRET 'wrong-secret-value-123'"))
    message = refused(con, f"SELECT * FROM differential_cleanup_remote_files('{s3.url}')", "remote_denied")
    assert "wrong-secret-value-123" not in message and s3.server.secret not in message
    assert "TYPE s3 secret" in message


@pytest.mark.parametrize("url", ["s3://", "s3://UPPER/lake/", "http://bucket/lake/", "file://relative/dir",
                                 "s3://ab/lake/"])
def test_malformed_prefix_is_refused(url):
    con = connect()
    refused(con, f"SELECT * FROM differential_cleanup_remote_files('{url}')", "invalid_data_path")


def test_negative_grace_and_null_prefix_are_refused(s3):
    con = connect()
    refused(con, f"SELECT * FROM differential_cleanup_remote_files('{s3.url}', grace => INTERVAL '-1 day')",
            "invalid_argument")
    with pytest.raises(duckdb.Error, match=r"\[differential:"):
        con.execute("SELECT * FROM differential_cleanup_remote_files(NULL)")


def test_nothing_runs_at_bind_or_explain(s3):
    con = connect()
    con.execute(s3.secret_sql)
    con.execute(f"EXPLAIN SELECT * FROM differential_cleanup_remote_files('{s3.url}')")
    con.execute(f"PREPARE p AS SELECT * FROM differential_cleanup_remote_files('{s3.url}')")
    assert list(s3.path.rglob("*")) == []
