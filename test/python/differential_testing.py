"""Shared helpers for the SQL tests: load the built extension into the pinned DuckDB wheel."""
import os
import pathlib
import re
import subprocess
import sys

import duckdb
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
# DIFFERENTIAL_EXTENSION points the tests at another build of the extension: `make test-asan` sets it to
# build/asan/differential.duckdb_extension (scripts/test_asan.sh). Child processes inherit it (see child_env).
EXTENSION = pathlib.Path(
    os.environ.get("DIFFERENTIAL_EXTENSION") or REPO_ROOT / "build" / "release" / "differential.duckdb_extension"
).resolve()
# What a child process needs to load the same build the same way: the extension's path and, under
# `make test-asan`, the preloaded sanitizer runtimes and their options.
INHERITED_ENVIRONMENT = ("DIFFERENTIAL_EXTENSION", "LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")


def child_env(**values):
    """A minimal environment for a child process that loads the extension: values plus INHERITED_ENVIRONMENT."""
    env = {name: os.environ[name] for name in INHERITED_ENVIRONMENT if name in os.environ}
    env.update(values)
    return env


def connect(repository=None):
    """A fresh DuckDB instance with the extension loaded and, if given, the repository set."""
    # No progress bar on stdout: subprocess tests read their results from stdout, and a loaded machine
    # makes queries slow enough for DuckDB to start drawing it (progress is still tracked).
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute("SET enable_progress_bar_print = false")
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
