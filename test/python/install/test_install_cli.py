"""The same install as a CLI user does it: build/release/duckdb, driven as a subprocess, installs from the generated
repository into a fresh extension directory, loads by name, and a later shell loads by name alone."""
import gzip

from differential_testing import RELEASE_EXTENSION
from install_testing import (
    REPOSITORY,
    SHELL,
    configured_extension_version,
    engine_version_and_platform,
    extension_repository,
    published_file,
    run_shell,
)

# The README's round trip in the shell; the snapshot's columns are picked so that the output is exact.
ROUND_TRIP_SQL = """
ATTACH 'differential:analytics' AS analytics;
CREATE TABLE analytics.pageviews (day DATE, page VARCHAR, views INTEGER);
INSERT INTO analytics.pageviews VALUES ('2026-10-01', '/pricing', 120), ('2026-10-01', '/docs', 340);
SELECT snapshot_id, snapshot_name, branch_name
  FROM differential_create_snapshot('analytics', name => 'october-import');
DELETE FROM analytics.pageviews WHERE page = '/pricing';
"""
CHECK_SQL = """
SELECT (SELECT sum(views) FROM analytics.pageviews) AS now,
       (SELECT sum(views) FROM analytics.pageviews AT (VERSION => 1)) AS at_snapshot_1;
SELECT extension_version, install_mode, installed_from FROM duckdb_extensions()
 WHERE extension_name = 'differential';
"""


def test_the_shell_is_the_pinned_duckdb():
    version, _ = engine_version_and_platform()
    assert SHELL.exists(), f"{SHELL} is missing: build it with `make build`"
    assert run_shell("-version").stdout.strip() == version
    assert run_shell("-csv", "-c", "PRAGMA platform").stdout == f"platform\n{engine_version_and_platform()[1]}\n"
    # Every type prints as DuckDB casts it to VARCHAR (snapshots report TIMESTAMP WITH TIME ZONE, merges lists).
    typed = "SELECT TIMESTAMPTZ '2026-10-01 12:00:00+00' AS t, [1, 2] AS l, {'k': 'v'} AS s, NULL AS n"
    assert run_shell("-csv", "-c", typed).stdout == "t,l,s,n\n2026-10-01 12:00:00+00,\"[1, 2]\",{'k': v},\n"


def test_install_from_the_repository_and_load_by_name_in_the_shell(tmp_path):
    extensions = tmp_path / "extensions"
    history = tmp_path / "history"
    setup = f"""
SET extension_directory = '{extensions}';
INSTALL differential FROM '{REPOSITORY}';
LOAD differential;
SET differential_repository = '{history}';
"""
    result = run_shell("-unsigned", "-csv", sql=setup + ROUND_TRIP_SQL + CHECK_SQL)
    version = configured_extension_version()
    assert result.stdout == (
        "snapshot_id,snapshot_name,branch_name\n1,october-import,main\n"
        "now,at_snapshot_1\n340,460\n"
        f"extension_version,install_mode,installed_from\n{version},REPOSITORY,{REPOSITORY}\n"
    )
    assert result.stderr == ""

    # A new shell: LOAD by name alone, and the history written by the first one is there.
    later = f"""
SET extension_directory = '{extensions}';
LOAD differential;
SET differential_repository = '{history}';
ATTACH 'differential:analytics' AS analytics;
"""
    result = run_shell("-unsigned", "-csv", "-c", later + CHECK_SQL)
    assert result.stdout == (
        f"now,at_snapshot_1\n340,460\nextension_version,install_mode,installed_from\n{version},REPOSITORY,{REPOSITORY}\n"
    )


def test_without_unsigned_the_shell_refuses_to_install(tmp_path):
    result = run_shell(
        "-c", f"SET extension_directory = '{tmp_path / 'extensions'}'; INSTALL differential FROM '{REPOSITORY}';",
        check=False,
    )
    assert result.returncode == 1
    assert "Attempting to install an extension file that doesn't have a valid signature" in result.stderr
    assert not (tmp_path / "extensions").exists() or not list((tmp_path / "extensions").rglob("*.duckdb_extension"))


def test_the_shell_refuses_a_file_built_for_another_platform(tmp_path):
    _, platform = engine_version_and_platform()
    wrong = "linux_arm64" if platform != "linux_arm64" else "linux_amd64"
    crafted = tmp_path / "differential.duckdb_extension"
    extension_repository.rewrite_footer(RELEASE_EXTENSION, crafted, platform=wrong)
    served = tmp_path / "served"
    target = served / published_file().relative_to(REPOSITORY)
    target.parent.mkdir(parents=True)
    target.write_bytes(gzip.compress(crafted.read_bytes(), compresslevel=1))
    result = run_shell(
        "-unsigned",
        "-c",
        f"SET extension_directory = '{tmp_path / 'extensions'}'; INSTALL differential FROM '{served}';",
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr == (
        f"IO Error: Failed to install 'differential'\nThe file was built for the platform '{wrong}', but we can only "
        f"load extensions built for platform '{platform}'.\n"
    )
