"""differential and httpfs in one process, in either order, sharing one `s3` secret type. differential registers its
own type only when a CREATE SECRET needs it and httpfs is neither loaded nor autoloadable, and then refuses a later
httpfs load with secret_type_taken instead of DuckDB's internal error. httpfs here is the build's stand-in
(test/extensions/httpfs_standin.cpp: httpfs's s3 secret type, nothing else); the exports run against versitygw."""
import pathlib
import sys

import duckdb
import pytest

from differential_testing import EXTENSION, HTTPFS_STANDIN, REPO_ROOT, connect, refused, scalar
from export_objects import check_head

sys.path.insert(0, str(REPO_ROOT / "scripts"))
import extension_repository  # noqa: E402


def s3_type_owner(con):
    """The extension that registered the s3 secret type, or None while nobody has."""
    row = con.execute("SELECT extension FROM duckdb_secret_types() WHERE type = 's3'").fetchone()
    return row[0] if row else None


def httpfs_loaded(con):
    return scalar(con, "SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'httpfs'")


def export_with_secret(con, s3):
    """Creates the bucket's secret, attaches an S3 database and snapshots it: the export reaches versitygw only
    with that secret's keys. Returns the snapshot the bucket's head names."""
    con.execute(s3.secret_sql)
    con.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}')")
    con.execute("CREATE TABLE orders.items AS SELECT range AS id FROM range(1000)")
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('orders')") == 1
    return check_head(pathlib.Path(s3.path) / s3.url.split("/", 3)[3], "orders")


def test_httpfs_loads_after_differential(repository, s3):
    con = connect(repository)
    con.execute(f"LOAD '{HTTPFS_STANDIN}'")
    assert httpfs_loaded(con)
    assert export_with_secret(con, s3) == 1
    assert s3_type_owner(con) == "httpfs"
    assert con.execute("SELECT type, provider FROM duckdb_secrets()").fetchall() == [("s3", "config")]


@pytest.mark.parametrize("load_httpfs", ["LOAD '{path}'", "LOAD '{path}' AS web"])
def test_differential_loads_after_httpfs(repository, s3, load_httpfs):
    con = connect(load=False)
    con.execute(load_httpfs.format(path=HTTPFS_STANDIN))
    con.execute(f"LOAD '{EXTENSION}'")
    con.execute(f"SET differential_repository = '{repository}'")
    assert export_with_secret(con, s3) == 1
    assert s3_type_owner(con) == "httpfs"
    # httpfs has no credential_chain provider and aws is not installed: differential adds its own to httpfs's type.
    con.execute("CREATE SECRET chain (TYPE s3, PROVIDER credential_chain, SCOPE 's3://elsewhere/')")
    assert con.execute("SELECT name, provider FROM duckdb_secrets() ORDER BY name").fetchall() == [
        ("chain", "credential_chain"), ("lake", "config")]
    assert s3_type_owner(con) == "httpfs"


def test_installed_httpfs_is_autoloaded_for_the_first_secret(repository, s3, tmp_path):
    con = connect(repository, extension_directory=str(tmp_path / "extensions"))
    # Installed after differential's LOAD: what differential does about the type is decided at CREATE SECRET.
    con.execute(f"INSTALL '{HTTPFS_STANDIN}'")
    assert not httpfs_loaded(con)
    assert export_with_secret(con, s3) == 1
    assert httpfs_loaded(con)
    assert s3_type_owner(con) == "httpfs"


def test_without_httpfs_differential_serves_the_type_and_refuses_httpfs_later(repository, s3, tmp_path):
    con = connect(repository, extension_directory=str(tmp_path / "extensions"))
    assert s3_type_owner(con) is None
    assert export_with_secret(con, s3) == 1
    assert s3_type_owner(con) == "differential"
    # Twice under an alias: a refused load leaves its alias free, so the second is refused for the same reason.
    for load in (f"LOAD '{HTTPFS_STANDIN}'", f"LOAD '{HTTPFS_STANDIN}' AS web", f"LOAD '{HTTPFS_STANDIN}' AS web",
                 "LOAD httpfs"):
        message = refused(con, load, "secret_type_taken")
        assert "Restart the process and LOAD httpfs" in message, message
    # The autoload that a first s3:// read of a file triggers is refused the same way.
    con.execute(f"INSTALL '{HTTPFS_STANDIN}'")
    with pytest.raises(duckdb.Error, match=r"\[differential:secret_type_taken\]"):
        con.execute(f"SELECT * FROM read_parquet('{s3.url}data.parquet')")
    # Nothing was loaded, and the process goes on: secrets, exports.
    assert not httpfs_loaded(con)
    con.execute(s3.server.secret_sql(s3.url, name="narrower"))
    con.execute("INSERT INTO orders.items VALUES (1000)")
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('orders')") == 2
    assert check_head(pathlib.Path(s3.path) / s3.url.split("/", 3)[3], "orders") == 2
    assert s3_type_owner(con) == "differential"


@pytest.mark.parametrize("repository_holds_httpfs", [False, True])
def test_default_settings_download_httpfs_or_fall_back(repository, s3, tmp_path, repository_holds_httpfs):
    # DuckDB's defaults (autoload and autoinstall on), with the autoinstall repository a local directory so the
    # outcome does not depend on the network: with httpfs in it, the first CREATE SECRET installs and loads httpfs;
    # without, the download fails and differential registers its own type for the same statement.
    served = tmp_path / "served"
    served.mkdir()
    if repository_holds_httpfs:
        extension_repository.publish(HTTPFS_STANDIN, served)
    con = connect(repository, autoinstall_known_extensions="true", autoload_known_extensions="true",
                  autoinstall_extension_repository=str(served), extension_directory=str(tmp_path / "extensions"))
    assert export_with_secret(con, s3) == 1
    assert s3_type_owner(con) == ("httpfs" if repository_holds_httpfs else "differential")


def test_aws_is_refused_only_once_differential_provides_credential_chain(repository):
    con = connect(repository)
    con.execute("CREATE SECRET lake (TYPE s3, KEY_ID 'k', SECRET 's')")
    # Not installed, so LOAD aws fails, but for that: differential has not registered credential_chain yet.
    with pytest.raises(duckdb.Error) as info:
        con.execute("LOAD aws")
    assert "differential" not in str(info.value)
    con.execute("CREATE SECRET chain (TYPE s3, PROVIDER credential_chain, SCOPE 's3://elsewhere/')")
    message = refused(con, "LOAD aws", "secret_type_taken")
    assert "the s3 secret provider credential_chain" in message and "LOAD aws" in message, message
    assert con.execute("SELECT name, provider FROM duckdb_secrets() ORDER BY name").fetchall() == [
        ("chain", "credential_chain"), ("lake", "config")]
