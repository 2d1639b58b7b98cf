"""The TYPE s3 secret differential registers (httpfs's parameter names), and the CRT kept private."""
import subprocess

import duckdb
import pytest

from differential_testing import EXTENSION, connect


def test_secret_with_httpfs_parameter_names_is_redacted():
    con = connect()
    con.execute("CREATE SECRET lake (TYPE s3, KEY_ID 'AKIAEXAMPLE', SECRET 'do-not-show-me', SESSION_TOKEN 'tok-xyz', "
                "REGION 'eu-central-1', ENDPOINT '127.0.0.1:9', URL_STYLE 'path', USE_SSL false, "
                "SCOPE 's3://my-bucket/lake/')")
    name, kind, provider, scope, text = con.execute(
        "SELECT name, type, provider, scope, secret_string FROM duckdb_secrets()").fetchone()
    assert (name, kind, provider, scope) == ("lake", "s3", "config", ["s3://my-bucket/lake/"])
    assert "key_id=AKIAEXAMPLE" in text
    assert "do-not-show-me" not in text and "tok-xyz" not in text


def test_credential_chain_provider_takes_no_keys():
    con = connect()
    con.execute("CREATE SECRET chain (TYPE s3, PROVIDER credential_chain, REGION 'eu-central-1', "
                "SCOPE 's3://my-bucket/lake/')")
    assert con.execute("SELECT provider FROM duckdb_secrets()").fetchone() == ("credential_chain",)
    with pytest.raises(duckdb.Error, match=r"\[differential:invalid_secret\]"):
        con.execute("CREATE SECRET bad (TYPE s3, PROVIDER credential_chain, KEY_ID 'x', SECRET 'y')")
    assert con.execute("SELECT count(*) FROM duckdb_secrets()").fetchone() == (1,)


def test_unknown_secret_parameter_is_refused():
    con = connect()
    with pytest.raises(duckdb.Error, match="Unknown parameter \"password\""):
        con.execute("CREATE SECRET bad (TYPE s3, KEY_ID 'x', SECRET 'y', PASSWORD 'z')")


def test_extension_exports_no_crt_symbols():
    # The CRT is linked statically with hidden symbols, so Python's own OpenSSL/s2n users are never interposed.
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(EXTENSION)], capture_output=True, text=True,
                             check=True).stdout
    leaked = [line for line in symbols.splitlines() if line.split()[-1].startswith(("aws_", "s2n_"))]
    assert leaked == []
    # ...although the CRT is in there (its error names are compiled in): hidden, not absent.
    assert b"AWS_ERROR_S3_" in EXTENSION.read_bytes()
