"""SQL for callers, run in a throwaway DuckDB instance whose attachments and locked settings are the rules."""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

import duckdb

from .engine import Engine, ident, jsonable, literal
from .errors import ServiceError
from .tokens import Caller

MAX_ROWS = 1000


def _size(con: duckdb.DuckDBPyConnection, alias: str) -> tuple:
    return tuple(con.execute(
        "SELECT total_blocks, used_blocks, free_blocks, wal_size FROM pragma_database_size() WHERE database_name = ?",
        [alias]).fetchone() or ())


@contextlib.contextmanager
def sandbox(engine: Engine, database: str, branch: str | None, writable: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """Attachments first, then external access off and the configuration locked, so SQL cannot undo them.

    The repository is passed per attachment, never set globally: the extension's repository functions
    (merge, drop, expire, create branch) then find no repository here and refuse.
    """
    con = engine._instance()
    try:
        repo = f"REPOSITORY {literal(engine.repository)}"
        source = literal("differential:" + database)
        if branch is None:
            mode = "" if writable else ", READ_ONLY"
            con.execute(f"ATTACH {source} AS {ident(database)} ({repo}{mode})")
        else:
            mode = "" if writable else ", READ_ONLY"
            con.execute(f"ATTACH {source} AS {ident(database)} ({repo}, BRANCH {literal(branch)}{mode})")
            con.execute(f"ATTACH {source} AS {ident(database + '_main')} ({repo}, READ_ONLY)")
        con.execute(f"USE {ident(database)}")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        yield con
    finally:
        con.close()


def _refusal(error: duckdb.Error, on_main_read_only: bool) -> ServiceError:
    text = str(error)
    if isinstance(error, duckdb.InterruptException):
        return ServiceError("sql_timeout", "the statement was interrupted after sqlTimeoutSec")
    if "read-only mode" in text or "read_only" in text:
        if on_main_read_only:
            return ServiceError("write_requires_branch",
                                "this token may write on branches only: pass a branch", detail=text)
    if isinstance(error, duckdb.PermissionException) or "configuration has been locked" in text:
        return ServiceError("external_access_denied", "files, settings and extensions are not reachable from here",
                            detail=text)
    if "repository_not_set" in text:
        return ServiceError("external_access_denied", "repository functions are the server's, not SQL's",
                            detail=text)
    return ServiceError("sql_error", "DuckDB refused the statement", detail=text)


def run_sql(engine: Engine, caller: Caller, database: str, branch: str | None, sql: str,
            timeout_sec: float) -> dict[str, Any]:
    """Runs sql on the branch (or main) and reports rows; a write on a branch is snapshotted as the caller."""
    if branch is not None:
        lock = engine.branch_lock(database, branch)
        if not lock.acquire(timeout=timeout_sec):
            raise ServiceError("branch_busy", "another request is using this branch")
        try:
            with engine.gate(database).shared():
                return _execute(engine, caller, database, branch, sql, True, timeout_sec, False)
        finally:
            lock.release()
    if caller.branch_only:
        with engine.gate(database).shared():
            return _execute(engine, caller, database, None, sql, False, timeout_sec, True)
    with engine.main_released(database):
        return _execute(engine, caller, database, None, sql, True, timeout_sec, False)


def _execute(engine: Engine, caller: Caller, database: str, branch: str | None, sql: str, writable: bool,
             timeout_sec: float, main_read_only: bool) -> dict[str, Any]:
    with sandbox(engine, database, branch, writable) as con:
        before = _size(con, database)
        timer = threading.Timer(timeout_sec, con.interrupt)
        timer.start()
        try:
            con.execute(sql)
            columns = [d[0] for d in con.description] if con.description else []
            rows = con.fetchmany(MAX_ROWS + 1) if columns else []
        except duckdb.Error as error:
            raise _refusal(error, main_read_only or branch is not None) from None
        finally:
            timer.cancel()
        # A transaction the statement left open ends with the session; roll it back explicitly first.
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        changed = writable and _size(con, database) != before
        snapshot = None
        if changed:
            # Every write is a snapshot at once, authored by the writer: a branch's head then is its state, and
            # main never needs a snapshot taken on someone else's behalf (a refusal must change nothing).
            where = f"branch {branch}" if branch else "main"
            snapshot = con.execute(
                "SELECT snapshot_id FROM differential_create_snapshot(?, author => ?, message => ?)",
                [database, caller.name, f"write on {where} by {caller.name}"]).fetchone()[0]
            if branch is None:
                engine.main_dirty[database] = False
    return {"columns": columns, "rows": [[jsonable(v) for v in r] for r in rows[:MAX_ROWS]],
            "truncated": len(rows) > MAX_ROWS, "changed": changed, "snapshot_id": snapshot}


def list_tables(engine: Engine, database: str, branch: str | None) -> list[dict[str, Any]]:
    with engine.gate(database).shared(), sandbox(engine, database, branch, False) as con:
        rows = con.execute(
            "SELECT schema_name, table_name, estimated_size, column_count FROM duckdb_tables()"
            " WHERE database_name = ? ORDER BY 1, 2", [database]).fetchall()
    return [{"schema": s, "table": t, "estimated_rows": n, "columns": c} for s, t, n, c in rows]


def describe_table(engine: Engine, database: str, branch: str | None, table: str) -> dict[str, Any]:
    with engine.gate(database).shared(), sandbox(engine, database, branch, False) as con:
        columns = con.execute(
            "SELECT column_name, data_type, is_nullable, column_default FROM duckdb_columns()"
            " WHERE database_name = ? AND schema_name = 'main' AND table_name = ? ORDER BY column_index",
            [database, table]).fetchall()
        keys = con.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() WHERE database_name = ?"
            " AND schema_name = 'main' AND table_name = ? AND constraint_type = 'PRIMARY KEY'",
            [database, table]).fetchone()
    if not columns:
        raise ServiceError("table_not_found", f"no table main.{table} here")
    return {"table": table, "primary_key": list(keys[0]) if keys else [],
            "columns": [{"name": n, "type": t, "nullable": bool(nl), "default": d} for n, t, nl, d in columns]}
