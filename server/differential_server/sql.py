"""SQL for callers, run in a throwaway DuckDB instance whose attachments and locked settings are the rules."""
from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

import duckdb

from .engine import Engine, ident, jsonable, literal
from .errors import ServiceError
from .tokens import Caller

MAX_ROWS = 1000


def _size(con: duckdb.DuckDBPyConnection, alias: str) -> tuple:
    return tuple(con.execute(
        "SELECT total_blocks, used_blocks, free_blocks, wal_size FROM pragma_database_size() WHERE database_name = ?",
        [alias]).fetchone() or ())


# Statement kinds an agent's SQL may use: reads, writes of the attached databases, DDL and transactions. Everything
# else (ATTACH, DETACH, COPY, EXPORT, INSTALL, LOAD, SET, PREPARE/EXECUTE, ...) is refused before DuckDB runs it.
ALLOWED_KINDS = {"SELECT", "INSERT", "UPDATE", "DELETE", "MERGE_INTO", "CREATE", "ALTER", "DROP", "TRANSACTION",
                 "CALL", "VACUUM", "MULTI", "EXPLAIN", "PRAGMA", "SET"}
# PRAGMAs that only read: the others change settings or reach files (IMPORT DATABASE is a PRAGMA too).
READ_PRAGMAS = {"table_info", "show", "show_tables", "show_tables_expanded", "show_databases", "database_list",
                "database_size", "storage_info", "version", "platform", "functions", "collations", "user_agent",
                "metadata_info"}
_LEADING = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)
_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_USE = re.compile(rf"^USE\s+({_NAME})(?:\s*\.\s*{_NAME})?\s*;?\s*$", re.I)
_PRAGMA = re.compile(r"^PRAGMA\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)
_EXPLAIN = re.compile(r"^EXPLAIN(?:\s+ANALY[SZ]E)?(?:\s*\([^)]*\))?\s+", re.I)


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def check_statements(sql: str, aliases: set[str]) -> None:
    """Refuses a statement outside the allow-list, classified by DuckDB's own parser, never by guessing its kind."""
    try:
        statements = [(s.type.name, _LEADING.sub("", s.query)) for s in duckdb.extract_statements(sql)]
    except duckdb.Error as error:
        raise ServiceError("sql_error", "DuckDB cannot parse the statement", detail=str(error)) from None
    except ValueError:  # a kind this client library does not even name (UPDATE EXTENSIONS): not on the list
        raise ServiceError("statement_not_allowed", "this kind of statement is not available to SQL here") from None
    for kind, text in statements:
        _check_one(kind, text, aliases)


def _check_one(kind: str, text: str, aliases: set[str]) -> None:
    refusal = ServiceError("statement_not_allowed", f"{kind} statements are not available here: only reads, writes"
                           " of the attached branch, DDL and transactions are", statement=kind)
    if kind not in ALLOWED_KINDS:
        raise refusal
    if kind == "SET":
        # USE is the only SET allowed, and only of what the session attached; settings are locked anyway.
        match = _USE.match(text)
        if not match or _unquote(match.group(1)).lower() not in aliases:
            raise ServiceError("statement_not_allowed", "SET, RESET and USE of anything but the attached databases are"
                               f" not available here (attached: {', '.join(sorted(aliases))})", statement=kind)
    elif kind == "PRAGMA":
        match = _PRAGMA.match(text)
        if not match or match.group(1).lower() not in READ_PRAGMAS:
            raise ServiceError("statement_not_allowed", "only PRAGMAs that read are available here: "
                               + ", ".join(sorted(READ_PRAGMAS)), statement=kind)
    elif kind == "EXPLAIN":
        # EXPLAIN ANALYZE runs what it explains: the inner statement must pass on its own.
        inner = _EXPLAIN.sub("", text, count=1)
        if inner == text:
            raise refusal
        check_statements(inner, aliases)


@contextlib.contextmanager
def sandbox(engine: Engine, database: str, branch: str | None, writable: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """Attachments first, then the extension's writers off, external access off and the configuration locked.

    The repository is passed per attachment, never set globally, and differential_sql_functions is 'read_only':
    every extension function that writes a repository refuses, and process-wide listings show only what this
    instance attached. DuckDB enforces the rest: no files, no extensions, no settings.
    """
    # Secrets stay in memory: the secret manager reads this before anything could change it.
    con = engine._instance(allow_persistent_secrets="false")
    try:
        _attach(con, engine.repository, database, branch, writable)
        con.execute(f"USE {ident(database)}")
        con.execute("SET differential_sql_functions = 'read_only'")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        yield con
    finally:
        con.close()


def _attach(con: duckdb.DuckDBPyConnection, repository: str, database: str, branch: str | None,
            writable: bool) -> None:
    repo = f"REPOSITORY {literal(repository)}"
    source = literal("differential:" + database)
    mode = "" if writable else ", READ_ONLY"
    if branch is None:
        con.execute(f"ATTACH {source} AS {ident(database)} ({repo}{mode})")
    else:
        con.execute(f"ATTACH {source} AS {ident(database)} ({repo}, BRANCH {literal(branch)}{mode})")
        con.execute(f"ATTACH {source} AS {ident(database + '_main')} ({repo}, READ_ONLY)")


def aliases(database: str, branch: str | None) -> set[str]:
    return {database.lower()} if branch is None else {database.lower(), (database + "_main").lower()}


def _refusal(error: duckdb.Error, on_main_read_only: bool) -> ServiceError:
    text = str(error)
    if isinstance(error, duckdb.InterruptException):
        return ServiceError("sql_timeout", "the statement was interrupted after sqlTimeoutSec")
    if "[differential:function_not_allowed]" in text:
        return ServiceError("function_not_allowed", "differential functions that write a repository are the server's:"
                            " snapshots, branches and merges go through its API", detail=text)
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
    check_statements(sql, aliases(database, branch))
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
        # Every write is a snapshot at once, authored by the writer: a branch's head then is its state, and main
        # never needs a snapshot taken on someone else's behalf. The sandbox cannot write history, so the server
        # takes it from an instance of its own once the agent's session is closed.
        where = f"branch {branch}" if branch else "main"
        snapshot = engine.snapshot_attachment(database, branch, caller.name, f"write on {where} by {caller.name}")
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
