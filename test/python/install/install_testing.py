"""Helpers for the install tests: the extension repository the build writes, fresh extension directories, the
README's snapshot + time travel round trip, and the CLI at build/release/duckdb driven as a subprocess."""
import csv
import io
import re
import shutil
import subprocess
import sys

import duckdb

from differential_testing import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
import extension_repository  # noqa: E402

REPOSITORY = REPO_ROOT / "build" / "repository"
SHELL = REPO_ROOT / "build" / "release" / "duckdb"


def configured_extension_version():
    """EXTENSION_VERSION from extension_config.cmake: the one place the extension's version is written."""
    text = (REPO_ROOT / "extension_config.cmake").read_text()
    return re.search(r"duckdb_extension_load\(differential\b[^)]*\bEXTENSION_VERSION\s+(\S+?)\s*\)", text).group(1)


def engine_version_and_platform():
    """The repository directory names DuckDB itself derives: 'v<version>' and its platform string."""
    con = duckdb.connect()
    version = con.execute("SELECT library_version FROM pragma_version()").fetchone()[0]
    platform = con.execute("PRAGMA platform").fetchone()[0]
    con.close()
    return version, platform


def published_file():
    version, platform = engine_version_and_platform()
    return REPOSITORY / version / platform / "differential.duckdb_extension.gz"


def copy_repository(target):
    """A private copy of the generated repository, for tests that change what it serves."""
    shutil.copytree(REPOSITORY, target)
    return target


def connect(extension_directory):
    """A fresh DuckDB that installs into and loads from extension_directory, unsigned extensions allowed."""
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"SET extension_directory = '{extension_directory}'")
    return con


def installed_row(con):
    """differential's row of duckdb_extensions() as a dict."""
    cursor = con.execute(
        "SELECT extension_name, loaded, installed, install_path, extension_version, install_mode, installed_from "
        "FROM duckdb_extensions() WHERE extension_name = 'differential'"
    )
    names = [column[0] for column in cursor.description]
    row = cursor.fetchone()
    return dict(zip(names, row)) if row else None


# The README's first steps: a database, a snapshot, a change, then the table now and at the snapshot.
ROUND_TRIP = [
    "ATTACH 'differential:analytics' AS analytics",
    "CREATE TABLE analytics.pageviews (day DATE, page VARCHAR, views INTEGER)",
    "INSERT INTO analytics.pageviews VALUES ('2026-10-01', '/pricing', 120), ('2026-10-01', '/docs', 340)",
    "CALL differential_create_snapshot('analytics', name => 'october-import')",
    "DELETE FROM analytics.pageviews WHERE page = '/pricing'",
]
ROUND_TRIP_CHECK = (
    "SELECT (SELECT sum(views) FROM analytics.pageviews) AS now, "
    "(SELECT sum(views) FROM analytics.pageviews AT (VERSION => 1)) AS at_snapshot_1, "
    "(SELECT string_agg(snapshot_name, ',') FROM analytics.snapshots()) AS snapshots"
)
ROUND_TRIP_RESULT = (340, 460, "october-import")


def run_shell(*args, sql=None, check=True):
    """Runs build/release/duckdb with args (and sql on standard input); returns the completed process."""
    if sql is None:
        streams = {"stdin": subprocess.DEVNULL}
    else:
        streams = {"input": sql}
    result = subprocess.run([str(SHELL), *args], capture_output=True, text=True, timeout=300, **streams)
    if check and result.returncode != 0:
        raise AssertionError(f"duckdb {args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def csv_rows(text):
    """The rows of the shell's -csv output (one header line per result: the caller picks what it needs)."""
    return list(csv.reader(io.StringIO(text)))
