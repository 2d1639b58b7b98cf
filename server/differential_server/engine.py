"""DuckDB instances of the server: the primary one that holds main, and per-request sandboxes."""
from __future__ import annotations

import contextlib
import datetime
import decimal
import logging
import threading
from collections.abc import Iterator
from typing import Any

import duckdb

from .config import Settings
from .errors import ServiceError

log = logging.getLogger("differential_server")

def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def jsonable(value: Any) -> Any:
    """DuckDB values as JSON: exact numbers stay exact (as text when JSON numbers would round them)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value if not isinstance(value, int) or abs(value) < 2**53 else str(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)



def one_row(result: Any) -> tuple:
    """The row of a query that always returns one; a missing row is the server's own failure, said as `internal`."""
    row = result.fetchone()
    if row is None:
        raise ServiceError("internal", "a query that returns one row returned none")
    return row

class Gate:
    """A readers-writer lock for one database's main: sessions share it, a merge or main write owns it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writer)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writer)
            self._writer = True
            self._cond.wait_for(lambda: self._readers == 0)
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class Engine:
    """Owns the repository: main of every database stays attached read-write in the primary instance."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.repository = str(settings.repository)
        self.primary = self._instance()
        self.primary.execute(f"SET differential_repository = {literal(self.repository)}")
        self._gates: dict[str, Gate] = {}
        self._branch_locks: dict[tuple[str, str], threading.RLock] = {}
        self._guard = threading.Lock()
        self.main_dirty: dict[str, bool] = {}
        self._snap_guard = threading.Lock()
        self._snap_refs: dict[tuple[str, int], int] = {}
        self._main_snapshot_lock = threading.Lock()
        self._adopt_lock = threading.Lock()
        for database in self.databases():
            self.main_dirty[database] = self._dirty_at_start(database)
            self.attach_main(database)

    def adopt_new_databases(self) -> None:
        """Serves databases created in the repository since the server started (by any DuckDB on it).

        One that cannot be attached now (another process holds its main open for writing) is left for
        the next look: it is not served until then.
        """
        with self._adopt_lock:
            for database in self.databases():
                if database in self.main_dirty:
                    continue
                dirty = self._dirty_at_start(database)
                try:
                    self.cursor().execute(
                        f"ATTACH IF NOT EXISTS {literal('differential:' + database)} AS {ident(database)}")
                except duckdb.Error:
                    log.warning("database %r exists but cannot be attached yet; not served", database)
                    continue
                self.main_dirty[database] = dirty

    def _dirty_at_start(self, database: str) -> bool:
        """Whether main has writes after its latest snapshot, asked of the extension before main is attached."""
        try:
            row = self.cursor().execute(
                "SELECT target_state FROM differential_merge_branch_preflight(?, 'main', 'main', 'main')",
                [database]).fetchone()
        except duckdb.Error:
            return True  # no snapshot yet, or unreadable: snapshot before the first fork
        return row is None or row[0] != "clean"

    def _instance(self, **config: str) -> duckdb.DuckDBPyConnection:
        con = duckdb.connect(config={"allow_unsigned_extensions": "true", "autoinstall_known_extensions": "false",
                                     "autoload_known_extensions": "false", **config})
        con.execute(f"LOAD {literal(str(self.settings.extension))}")
        return con

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self.primary.cursor()

    def close(self) -> None:
        self.primary.close()

    def databases(self) -> list[str]:
        return [r[0] for r in self.cursor().execute("SELECT database_name FROM differential_databases()").fetchall()]

    def gate(self, database: str) -> Gate:
        with self._guard:
            return self._gates.setdefault(database, Gate())

    def branch_lock(self, database: str, branch: str) -> threading.RLock:
        with self._guard:
            return self._branch_locks.setdefault((database, branch), threading.RLock())

    def attach_main(self, database: str) -> None:
        self.cursor().execute(f"ATTACH IF NOT EXISTS {literal('differential:' + database)} AS {ident(database)}")
        self.main_dirty.setdefault(database, True)

    def detach_main(self, database: str) -> None:
        self.cursor().execute(f"DETACH DATABASE IF EXISTS {ident(database)}")

    def create_database(self, database: str) -> None:
        self.attach_main(database)

    def require_database(self, database: str) -> None:
        if database not in self.main_dirty:
            self.adopt_new_databases()
        if database not in self.main_dirty:
            raise ServiceError("database_not_found", f"no database {database!r} is served here")

    def main_head(self, database: str) -> int | None:
        row = self.cursor().execute(
            "SELECT head_snapshot_id FROM differential_branches(?) WHERE branch_name = 'main'", [database]).fetchone()
        return row[0] if row else None

    def branch_head(self, database: str, branch: str) -> tuple[int, int] | None:
        row = self.cursor().execute(
            "SELECT base_snapshot_id, head_snapshot_id FROM differential_branches(?) WHERE branch_name = ?",
            [database, branch]).fetchone()
        return (row[0], row[1]) if row else None

    def live_branch_head(self, database: str, branch: str) -> tuple[int, int]:
        """The branch's fork and head; refuses (branch_not_found) a branch dropped since the caller looked it up."""
        heads = self.branch_head(database, branch)
        if heads is None:
            raise ServiceError("branch_not_found", f"branch {branch!r} of {database!r} is gone")
        return heads

    def snapshot_main_if_dirty(self, database: str, author: str, message: str) -> int:
        """Main's head after making sure it holds main's current state (a fork or merge reads snapshots)."""
        with self._main_snapshot_lock:
            return self._snapshot_main_if_dirty(database, author, message)

    def _snapshot_main_if_dirty(self, database: str, author: str, message: str) -> int:
        head = self.main_head(database)
        if self.main_dirty.get(database, True) or head is None:
            head = one_row(self.cursor().execute(
                "SELECT snapshot_id FROM differential_create_snapshot(?, author => ?, message => ?)",
                [database, author, message]))[0]
            self.main_dirty[database] = False
        return head

    def snapshot_attachment(self, database: str, branch: str | None, author: str, message: str) -> int:
        """Snapshots a branch (or main, while released) from a private instance: history is written by the server."""
        con = self._instance()
        try:
            repo = f"REPOSITORY {literal(self.repository)}"
            where = "" if branch is None else f", BRANCH {literal(branch)}"
            con.execute(f"ATTACH {literal('differential:' + database)} AS {ident(database)} ({repo}{where})")
            sql = "SELECT snapshot_id FROM differential_create_snapshot(?, author => ?, message => ?)"
            return one_row(con.execute(sql, [database, author, message]))[0]
        finally:
            con.close()

    @contextlib.contextmanager
    def snapshots(self, database: str, *snapshot_ids: int) -> Iterator[tuple[duckdb.DuckDBPyConnection, list[str]]]:
        """A cursor with each snapshot attached read-only, shared and counted: DuckDB opens a path only once."""
        unique = sorted(set(int(s) for s in snapshot_ids))
        aliases = {sid: f"__review@{database}@{sid}" for sid in unique}
        with self._snap_guard:
            for sid in unique:
                key = (database, sid)
                if self._snap_refs.get(key, 0) == 0:
                    self.cursor().execute(f"ATTACH IF NOT EXISTS {literal('differential:' + database)}"
                                          f" AS {ident(aliases[sid])} (SNAPSHOT {sid})")
                self._snap_refs[key] = self._snap_refs.get(key, 0) + 1
        try:
            yield self.cursor(), [aliases[int(s)] for s in snapshot_ids]
        finally:
            with self._snap_guard:
                for sid in unique:
                    key = (database, sid)
                    self._snap_refs[key] -= 1
                    if self._snap_refs[key] == 0:
                        del self._snap_refs[key]
                        self.cursor().execute(f"DETACH DATABASE IF EXISTS {ident(aliases[sid])}")

    @contextlib.contextmanager
    def main_released(self, database: str) -> Iterator[None]:
        """Main detached from the primary under the exclusive gate, and attached again afterwards."""
        with self.gate(database).exclusive():
            self.detach_main(database)
            try:
                yield
            finally:
                self.attach_main(database)
