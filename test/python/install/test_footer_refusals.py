"""DuckDB itself refuses a differential file whose footer names another DuckDB version or another platform, with its
usual message, whether it comes from a repository (INSTALL) or from a path (LOAD); nothing gets installed."""
import gzip

import duckdb
import pytest

from differential_testing import RELEASE_EXTENSION
from install_testing import (
    connect,
    engine_version_and_platform,
    extension_repository,
    installed_row,
    published_file,
    REPOSITORY,
)


def other_platform(platform):
    return "linux_arm64" if platform != "linux_arm64" else "linux_amd64"


def crafted(tmp_path, **footer):
    """A copy of the built extension with footer fields rewritten, and a repository serving it where this DuckDB
    looks (so only the footer is wrong, never the path)."""
    path = tmp_path / "crafted" / "differential.duckdb_extension"
    path.parent.mkdir()
    extension_repository.rewrite_footer(RELEASE_EXTENSION, path, **footer)
    served = tmp_path / "served"
    # Published by path, not by footer: the footer now names another version or platform.
    target = served / published_file().relative_to(REPOSITORY)
    target.parent.mkdir(parents=True)
    target.write_bytes(gzip.compress(path.read_bytes(), compresslevel=1))
    return path, served


def version_message(version):
    engine_version, _ = engine_version_and_platform()
    return (
        f"The file was built specifically for DuckDB version '{version}' and can only be loaded with that version of "
        f"DuckDB. (this version of DuckDB is '{engine_version}')"
    )


def platform_message(platform):
    _, engine_platform = engine_version_and_platform()
    return (
        f"The file was built for the platform '{platform}', but we can only load extensions built for platform "
        f"'{engine_platform}'."
    )


def assert_install_refused(tmp_path, served, message):
    con = connect(tmp_path / "extensions")
    with pytest.raises(duckdb.IOException) as info:
        con.execute(f"INSTALL differential FROM '{served}'")
    assert str(info.value) == f"IO Error: Failed to install 'differential'\n{message}"
    assert installed_row(con) is None
    assert not list((tmp_path / "extensions").rglob("differential.duckdb_extension*"))


def assert_load_refused(tmp_path, path, message):
    con = connect(tmp_path / "extensions")
    with pytest.raises(duckdb.InvalidInputException) as info:
        con.execute(f"LOAD '{path}'")
    assert str(info.value) == f"Invalid Input Error: Failed to load '{path}', {message}"
    assert con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name LIKE 'differential%'").fetchone() == (
        0,
    )


def test_a_file_built_for_another_duckdb_version_is_refused(tmp_path):
    path, served = crafted(tmp_path, duckdb_version="v2.0.0")
    assert_install_refused(tmp_path, served, version_message("v2.0.0"))
    assert_load_refused(tmp_path, path, version_message("v2.0.0"))


def test_a_file_built_for_another_platform_is_refused(tmp_path):
    _, platform = engine_version_and_platform()
    wrong = other_platform(platform)
    path, served = crafted(tmp_path, platform=wrong)
    assert_install_refused(tmp_path, served, platform_message(wrong))
    assert_load_refused(tmp_path, path, platform_message(wrong))


def test_both_wrong_are_reported_together(tmp_path):
    _, platform = engine_version_and_platform()
    wrong = other_platform(platform)
    path, served = crafted(tmp_path, duckdb_version="v2.0.0", platform=wrong)
    message = version_message("v2.0.0") + " Also, t" + platform_message(wrong)[1:]
    assert_install_refused(tmp_path, served, message)


def test_the_untouched_file_passes_the_same_checks(tmp_path):
    """The control: the refusals above come from the rewritten field alone."""
    version, platform = engine_version_and_platform()
    path, served = crafted(tmp_path, duckdb_version=version, platform=platform)
    assert path.read_bytes() == RELEASE_EXTENSION.read_bytes()
    con = connect(tmp_path / "extensions")
    con.execute(f"INSTALL differential FROM '{served}'")
    con.execute("LOAD differential")
    assert installed_row(con)["loaded"] is True
