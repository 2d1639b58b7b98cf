"""INSTALL differential FROM the repository the build writes, LOAD it by name, and UPDATE EXTENSIONS, in the pinned
DuckDB wheel, each into a fresh extension directory."""
import gzip
import http.server
import json
import threading

from differential_testing import RELEASE_EXTENSION, run_python
from install_testing import (
    REPOSITORY,
    ROUND_TRIP,
    ROUND_TRIP_CHECK,
    ROUND_TRIP_RESULT,
    configured_extension_version,
    connect,
    copy_repository,
    engine_version_and_platform,
    extension_repository,
    installed_row,
    published_file,
)


def test_repository_holds_the_built_file_where_duckdb_looks(tmp_path):
    version, platform = engine_version_and_platform()
    path = published_file()
    assert path.relative_to(REPOSITORY).parts == (version, platform, "differential.duckdb_extension.gz")
    unpacked = tmp_path / "differential.duckdb_extension"
    unpacked.write_bytes(gzip.decompress(path.read_bytes()))
    assert unpacked.read_bytes() == RELEASE_EXTENSION.read_bytes()
    assert extension_repository.read_footer(unpacked) == {
        "magic": "4",
        "platform": platform,
        "duckdb_version": version,
        "extension_version": configured_extension_version(),
        "abi_type": "CPP",
    }


def test_install_from_the_repository_then_load_by_name_here_and_in_a_new_process(tmp_path):
    extensions = tmp_path / "extensions"
    repository = tmp_path / "history"
    version, platform = engine_version_and_platform()
    con = connect(extensions)
    assert installed_row(con) is None
    con.execute(f"INSTALL differential FROM '{REPOSITORY}'")
    assert installed_row(con) == {
        "extension_name": "differential",
        "loaded": False,
        "installed": True,
        "install_path": str(extensions / version / platform / "differential.duckdb_extension"),
        "extension_version": configured_extension_version(),
        "install_mode": "REPOSITORY",
        "installed_from": str(REPOSITORY),
    }
    con.execute("LOAD differential")
    assert installed_row(con)["loaded"] is True
    con.execute(f"SET differential_repository = '{repository}'")
    for sql in ROUND_TRIP:
        con.execute(sql)
    assert con.execute(ROUND_TRIP_CHECK).fetchone() == ROUND_TRIP_RESULT
    con.close()

    # A later process names neither a path nor a repository: LOAD finds the installed file by name.
    output = run_python(
        f"""
import duckdb, json
con = duckdb.connect(config={{"allow_unsigned_extensions": "true"}})
con.execute("SET extension_directory = '{extensions}'")
con.execute("LOAD differential")
con.execute("SET differential_repository = '{repository}'")
con.execute("ATTACH 'differential:analytics' AS analytics")
print(json.dumps({{
    "round_trip": list(con.execute({ROUND_TRIP_CHECK!r}).fetchone()),
    "extension": list(con.execute("SELECT loaded, extension_version, install_mode FROM duckdb_extensions() "
                                  "WHERE extension_name = 'differential'").fetchone()),
}}))
"""
    )
    assert json.loads(output) == {
        "round_trip": list(ROUND_TRIP_RESULT),
        "extension": [True, configured_extension_version(), "REPOSITORY"],
    }


def test_install_is_a_no_op_once_installed_and_force_install_replaces(tmp_path):
    served = copy_repository(tmp_path / "served")
    con = connect(tmp_path / "extensions")
    con.execute(f"INSTALL differential FROM '{served}'")
    installed = installed_row(con)["install_path"]
    before = open(installed, "rb").read()
    # The repository now serves another build (its version field changed, as a release would change it).
    bumped = tmp_path / "differential.duckdb_extension"
    extension_repository.rewrite_footer(RELEASE_EXTENSION, bumped, extension_version="v9.9.9")
    extension_repository.publish(bumped, served)
    con.execute(f"INSTALL differential FROM '{served}'")
    assert open(installed, "rb").read() == before
    assert installed_row(con)["extension_version"] == configured_extension_version()
    con.execute(f"FORCE INSTALL differential FROM '{served}'")
    assert installed_row(con)["extension_version"] == "v9.9.9"


def test_update_extensions_reinstalls_from_the_repository_it_came_from(tmp_path):
    served = copy_repository(tmp_path / "served")
    extensions = tmp_path / "extensions"
    con = connect(extensions)
    con.execute(f"INSTALL differential FROM '{served}'")
    version = configured_extension_version()
    assert con.execute("UPDATE EXTENSIONS (differential)").fetchall() == [("differential", str(served), "NO_UPDATE_AVAILABLE", version, version)]

    bumped = tmp_path / "differential.duckdb_extension"
    extension_repository.rewrite_footer(RELEASE_EXTENSION, bumped, extension_version="v9.9.9")
    extension_repository.publish(bumped, served)
    assert con.execute("UPDATE EXTENSIONS").fetchall() == [
        ("differential", str(served), "UPDATED", version, "v9.9.9")
    ]
    assert installed_row(con)["extension_version"] == "v9.9.9"
    con.close()
    output = run_python(
        f"""
import duckdb
con = duckdb.connect(config={{"allow_unsigned_extensions": "true"}})
con.execute("SET extension_directory = '{extensions}'")
con.execute("LOAD differential")
print(con.execute("SELECT extension_version FROM duckdb_extensions() WHERE extension_name = 'differential'").fetchone()[0])
"""
    )
    assert output.strip() == "v9.9.9"


def test_update_extensions_leaves_a_file_loaded_by_path_alone(tmp_path):
    con = connect(tmp_path / "extensions")
    con.execute(f"INSTALL '{RELEASE_EXTENSION}'")
    assert installed_row(con)["install_mode"] == "CUSTOM_PATH"
    assert con.execute("UPDATE EXTENSIONS").fetchall() == [
        ("differential", "", "NOT_A_REPOSITORY", configured_extension_version(), configured_extension_version())
    ]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def test_install_from_the_repository_served_over_http(tmp_path):
    served = copy_repository(tmp_path / "served")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *args: _QuietHandler(*args, directory=str(served))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        con = connect(tmp_path / "extensions")
        con.execute(f"INSTALL differential FROM '{url}'")
        con.execute("LOAD differential")
        row = installed_row(con)
        assert (row["loaded"], row["install_mode"], row["installed_from"], row["extension_version"]) == (
            True,
            "REPOSITORY",
            url,
            configured_extension_version(),
        )
        con.execute(f"SET differential_repository = '{tmp_path / 'history'}'")
        for sql in ROUND_TRIP:
            con.execute(sql)
        assert con.execute(ROUND_TRIP_CHECK).fetchone() == ROUND_TRIP_RESULT
    finally:
        server.shutdown()
        server.server_close()
