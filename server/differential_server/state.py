"""The server's own state in SQLite next to the repository's metadata, migrated by numbered steps."""
from __future__ import annotations

import contextlib
import json
import pathlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

# Each entry moves the schema from version i to i+1; released steps are never edited, only appended.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE principals (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL CHECK (role IN ('member', 'admin')), created_at REAL NOT NULL);
    CREATE TABLE tokens (
        id TEXT PRIMARY KEY, principal_id INTEGER NOT NULL REFERENCES principals(id), name TEXT NOT NULL,
        salt BLOB NOT NULL, hash BLOB NOT NULL, branch_only INTEGER NOT NULL, drop_admin INTEGER NOT NULL,
        databases TEXT, expires_at REAL, revoked_at REAL, parent_id TEXT, created_at REAL NOT NULL);
    CREATE TABLE branches (
        id INTEGER PRIMARY KEY, database TEXT NOT NULL, name TEXT NOT NULL,
        owner_id INTEGER NOT NULL REFERENCES principals(id), created_at REAL NOT NULL, expires_at REAL,
        fork_snapshot INTEGER NOT NULL, state TEXT NOT NULL, ended_at REAL, ended_by TEXT);
    CREATE UNIQUE INDEX branches_live_name ON branches(database, name) WHERE state = 'live';
    CREATE TABLE proposals (
        id INTEGER PRIMARY KEY, branch_id INTEGER NOT NULL REFERENCES branches(id),
        proposer_id INTEGER NOT NULL REFERENCES principals(id), created_at REAL NOT NULL,
        state TEXT NOT NULL, branch_head INTEGER NOT NULL, main_head INTEGER NOT NULL, policy TEXT,
        keys TEXT NOT NULL, changes TEXT NOT NULL, conflicts TEXT NOT NULL);
    CREATE TABLE audit (
        id INTEGER PRIMARY KEY, at REAL NOT NULL, principal TEXT, action TEXT NOT NULL, database TEXT,
        branch TEXT, outcome TEXT NOT NULL, code TEXT, detail TEXT);
    """,
    # Merge bookkeeping: what a crashed merge needs to be repeated with the same request and decisions.
    """
    ALTER TABLE proposals ADD COLUMN request_id TEXT;
    ALTER TABLE proposals ADD COLUMN decisions TEXT;
    ALTER TABLE proposals ADD COLUMN approver_id INTEGER REFERENCES principals(id);
    ALTER TABLE proposals ADD COLUMN merged_at REAL;
    ALTER TABLE proposals ADD COLUMN merge_snapshot INTEGER;
    ALTER TABLE proposals ADD COLUMN tag_snapshot INTEGER;
    ALTER TABLE proposals ADD COLUMN tag TEXT;
    CREATE INDEX proposals_branch ON proposals(branch_id, id);
    CREATE INDEX audit_at ON audit(at);
    """,
    # How the proposal merges STRUCT values: 'whole' (NULL) or 'fields', the extension's `nested` option.
    """
    ALTER TABLE proposals ADD COLUMN nested TEXT;
    """,
    # How the proposal's merge finds its base: the unique one (NULL) or 'virtual', the extension's `base` option.
    """
    ALTER TABLE proposals ADD COLUMN base TEXT;
    """,
]


class State:
    """Short-lived connections per operation; one writer at a time inside this process."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self._write_lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.migrate()

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        con.row_factory = sqlite3.Row
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = FULL")
        con.execute("PRAGMA foreign_keys = ON")
        return con

    def migrate(self) -> int:
        with self._write_lock, contextlib.closing(self._connect()) as con:
            con.execute("BEGIN IMMEDIATE")
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version > len(MIGRATIONS):
                con.execute("ROLLBACK")
                raise RuntimeError(f"{self.path} has schema {version}, newer than this server ({len(MIGRATIONS)})")
            for step in range(version, len(MIGRATIONS)):
                for statement in MIGRATIONS[step].split(";"):
                    if statement.strip():
                        con.execute(statement)
                con.execute(f"PRAGMA user_version = {step + 1}")
            con.execute("COMMIT")
            return len(MIGRATIONS)

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock, contextlib.closing(self._connect()) as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def read(self, sql: str, params: tuple | list = ()) -> list[sqlite3.Row]:
        with contextlib.closing(self._connect()) as con:
            return con.execute(sql, params).fetchall()

    def one(self, sql: str, params: tuple | list = ()) -> sqlite3.Row | None:
        rows = self.read(sql, params)
        return rows[0] if rows else None

    def audit(self, action: str, outcome: str, principal: str | None = None, database: str | None = None,
              branch: str | None = None, code: str | None = None, detail: Any = None) -> None:
        with self.write() as con:
            con.execute(
                "INSERT INTO audit (at, principal, action, database, branch, outcome, code, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (time.time(), principal, action, database, branch, outcome, code,
                 None if detail is None else json.dumps(detail, default=str)),
            )
