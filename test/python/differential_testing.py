"""Shared helpers for the SQL tests: load the built extension into the pinned DuckDB wheel."""
import os
import pathlib
import re
import subprocess
import sys

import duckdb
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
# The tests load the testing build (build/testing/): the release build compiles the crash, fault, pause and mutation
# switches out (test/python/access/test_release_switches.py proves it). DIFFERENTIAL_EXTENSION points them at another
# build: `make test-asan` sets it to build/asan/differential.duckdb_extension (scripts/test_asan.sh). Child processes
# inherit it (see child_env).
RELEASE_EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"
EXTENSION = pathlib.Path(
    os.environ.get("DIFFERENTIAL_EXTENSION") or REPO_ROOT / "build" / "testing" / "differential.duckdb_extension"
).resolve()
# The metadata schema this build writes (src/metadata/metadata_core.hpp): what every migration test expects to find.
METADATA_SCHEMA = "14"
# What a child process needs to load the same build the same way: the extension's path and, under
# `make test-asan`, the preloaded sanitizer runtimes and their options.
INHERITED_ENVIRONMENT = ("DIFFERENTIAL_EXTENSION", "LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")


def child_env(**values):
    """A minimal environment for a child process that loads the extension: values plus INHERITED_ENVIRONMENT."""
    env = {name: os.environ[name] for name in INHERITED_ENVIRONMENT if name in os.environ}
    env.update(values)
    return env


# The stand-in for httpfs that the build puts beside the testing extension (test/extensions/httpfs_standin.cpp).
HTTPFS_STANDIN = EXTENSION.parent / "httpfs" / "httpfs.duckdb_extension"


def connect(repository=None, load=True, **settings):
    """A fresh DuckDB instance with the extension loaded and, if given, the repository set (with load false: neither,
    for a test that loads another extension first); settings are more DuckDB options for the instance."""
    # autoinstall_known_extensions off: with DuckDB's default, the first CREATE SECRET (TYPE s3 …) of each instance
    # makes DuckDB download httpfs, which provides that type in the official builds, before differential registers
    # its own: a failed connection attempt per test here (no network), a test against a downloaded httpfs elsewhere.
    # test/python/s3/test_httpfs_coexistence.py runs the default once (test_default_settings_fall_back_to_ours).
    config = {"allow_unsigned_extensions": "true", "autoinstall_known_extensions": "false", **settings}
    con = duckdb.connect(config=config)
    # No progress bar on stdout: subprocess tests read their results from stdout, and a loaded machine
    # makes queries slow enough for DuckDB to start drawing it (progress is still tracked).
    con.execute("SET enable_progress_bar_print = false")
    if load:
        con.execute(f"LOAD '{EXTENSION}'")
        if repository is not None:
            con.execute(f"SET differential_repository = '{repository}'")
    return con


def scalar(con, sql, params=None):
    row = con.execute(sql, params or []).fetchone()
    assert row is not None, f"no row from {sql}"
    return row[0]


def refused(con, sql, code):
    """Runs sql, asserts it fails with [differential:<code>] leading the message, returns the message."""
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql)
    message = str(info.value)
    # DuckDB prefixes the exception type ("Invalid Input Error: "); our code must come right after it. The
    # plain "Invalid Error" type (which the 1.1 spec shows for two refusals) reaches Python unprefixed.
    assert re.match(r"^([A-Za-z ]*Error: )?\[differential:" + re.escape(code) + r"\] ", message), message
    return message


def repository_state(con):
    """Everything a refusal must leave unchanged: databases, branches and snapshots."""
    state = []
    for (name,) in con.execute("SELECT database_name FROM differential_databases() ORDER BY 1").fetchall():
        state.append(("database", name))
        for row in con.execute(
            "SELECT branch_name, base_snapshot_id, head_snapshot_id FROM differential_branches(?) ORDER BY 1", [name]
        ).fetchall():
            state.append(("branch", name) + tuple(row))
        for row in con.execute(
            "SELECT snapshot_id, snapshot_name, branch_name FROM differential_snapshots(?) ORDER BY 1", [name]
        ).fetchall():
            state.append(("snapshot", name) + tuple(row))
    return state


def whole_value(b, o, t):
    """The specification's cell rule, for the tests' reference models: (merged, conflict) of one value."""
    if o == b:
        return t, False
    if t == b or o == t:
        return o, False
    return None, True


def three_way_database(con, name, columns, rows_of):
    """Database `name` with table m (`columns`: its column definitions): the base is snapshot 1, ours main
    (snapshot 2), theirs branch 'theirs' (snapshot 3); rows_of(i) gives the row literals of base, ours, theirs."""
    con.execute(f"ATTACH 'differential:{name}' AS {name}")
    con.execute(f"CREATE TABLE {name}.m ({columns})")

    def load(target, index):
        con.execute(f"DELETE FROM {target}.m")
        values = rows_of(index)
        if values:
            con.execute(f"INSERT INTO {target}.m VALUES " + ", ".join(values))

    load(name, 0)
    con.execute(f"CALL differential_create_snapshot('{name}')")
    con.execute(f"CALL differential_create_branch('{name}', 'theirs', snapshot => 1)")
    con.execute(f"ATTACH 'differential:{name}' AS {name}_theirs (BRANCH 'theirs')")
    load(f"{name}_theirs", 2)
    con.execute(f"CALL differential_create_snapshot('{name}_theirs')")
    con.execute(f"DETACH {name}_theirs")
    load(name, 1)
    con.execute(f"CALL differential_create_snapshot('{name}')")
    con.execute(f"DETACH {name}")


def run_python(code, timeout=120, env=None):
    """Runs a Python snippet in another process (with this module importable) and returns its stdout."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(pathlib.Path(__file__).resolve().parent)
    full_env.update(env or {})
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=full_env
    )
    if result.returncode != 0:
        raise AssertionError(f"subprocess failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


SQLITE_FILES = ("metadata.sqlite", "pins.sqlite")


def _sqlite_dump(path):
    """Every row of every table, sorted: what a SQLite file holds, independent of its page layout. Left out: how
    many reader pins pins.sqlite ever handed out (its sqlite_sequence), which every read moves."""
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1")
                  if not (path.name == "pins.sqlite" and r[0] == "sqlite_sequence")]
        return [(t, sorted(db.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)) for t in tables]
    finally:
        db.close()


def tree_fingerprint(*roots):
    """A hash of everything under `roots` (directories, or single files): each file's path and bytes, each
    directory's path, and for the repository's SQLite files their rows (their bytes change with reads too: WAL
    index, checkpoints)."""
    import hashlib

    digest = hashlib.sha256()
    for root in roots:
        root = pathlib.Path(root)
        if not root.exists():
            digest.update(f"missing {root}\n".encode())
            continue
        for path in sorted(root.rglob("*")) if root.is_dir() else [root]:
            rel = path.relative_to(root).as_posix()
            if path.name.endswith(("-wal", "-shm")) and path.name.split("-")[0] in SQLITE_FILES:
                continue
            if path.is_dir():
                digest.update(f"dir {root}/{rel}\n".encode())
            elif path.name in SQLITE_FILES:
                digest.update(f"db {root}/{rel} {_sqlite_dump(path)!r}\n".encode())
            else:
                digest.update(f"file {root}/{rel} ".encode() + hashlib.sha256(path.read_bytes()).digest() + b"\n")
    return digest.hexdigest()


_HOLDER = """
import sys
from differential_testing import connect
con = connect(sys.argv[1])
for branch in sys.argv[2:]:
    con.execute(f"ATTACH 'differential:{branch.split('@')[0]}' AS \\"{branch}\\" (BRANCH '{branch.split('@')[1]}')")
print('ready', flush=True)
sys.stdin.read()
"""


class held_branches:
    """Another process holding `database@branch` attachments open for writing until the block ends."""

    def __init__(self, repository, *branches):
        self.args = [sys.executable, "-c", _HOLDER, str(repository), *branches]

    def __enter__(self):
        env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parent))
        self.process = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        line = self.process.stdout.readline().strip()
        if line != "ready":
            self.process.kill()
            raise AssertionError(f"the holder did not start: {line!r}")
        return self

    def __exit__(self, *exc):
        self.process.stdin.close()
        self.process.wait(timeout=60)
