"""Branch lifecycle: create at main's head, list, show with merge history, discard, and the expiry sweep."""
from __future__ import annotations

import re
import time
from typing import Any

import duckdb

from .engine import Engine
from .errors import ServiceError
from .state import State
from .tokens import Caller

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,47}$")
# Main is every database's own branch in the extension, never a review branch: a crash cleanup would drop it.
RESERVED = {"main"}


def _row(r: Any) -> dict[str, Any]:
    return {"id": r["id"], "database": r["database"], "name": r["name"], "owner": r["owner"], "state": r["state"],
            "created_at": r["created_at"], "expires_at": r["expires_at"], "fork_snapshot": r["fork_snapshot"],
            "ended_at": r["ended_at"], "ended_by": r["ended_by"]}


BRANCH_SELECT = ("SELECT b.*, p.name AS owner FROM branches b JOIN principals p ON p.id = b.owner_id")


def live_branch(state: State, database: str, name: str) -> Any:
    row = state.one(BRANCH_SELECT + " WHERE b.database = ? AND b.name = ? AND b.state = 'live'", (database, name))
    if row is None:
        raise ServiceError("branch_not_found", f"no live branch {name!r} in {database!r}")
    return row


def create(engine: Engine, state: State, caller: Caller, database: str, name: str, ttl_hours: float | None,
           from_snapshot: int | None, parent: str | None, settings: Any, now: float) -> dict[str, Any]:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ServiceError("invalid_branch_name", "a branch name is lowercase: a letter, then letters, digits, _ or -,"
                                                  " at most 48 characters")
    if name in RESERVED:
        raise ServiceError("invalid_branch_name", f"{name!r} is the database's own branch; choose another name")
    if parent not in (None, "main"):
        raise ServiceError("branch_of_branch", "a branch forks from main only; a branch cannot itself be branched")
    default = settings.default_ttl_hours
    ttl = default if ttl_hours is None else ttl_hours
    if ttl < 0 or (not caller.is_admin and default > 0 and (ttl == 0 or ttl > default)):
        raise ServiceError("invalid_ttl", f"ttl_hours must be between 1 and {default} for a non-admin")
    with engine.branch_lock(database, "\x00create"):
        live = state.read("SELECT name FROM branches WHERE database = ? AND state = 'live'", (database,))
        if any(r["name"] == name for r in live):
            raise ServiceError("branch_exists", f"a live branch {name!r} exists")
        if len(live) >= settings.max_per_database:
            raise ServiceError("branch_limit", f"{database!r} has {len(live)} live branches (maxPerDatabase)")
        with engine.gate(database).shared():
            # Checked before main is snapshotted, so the refusal leaves no snapshot behind.
            if from_snapshot is not None and (engine.main_dirty.get(database, True)
                                              or from_snapshot != engine.main_head(database)):
                raise ServiceError("from_snapshot_refused", f"a branch forks at main's current state, not at snapshot"
                                                            f" {from_snapshot}")
            head = engine.snapshot_main_if_dirty(database, "differential-server", f"fork point of branch {name}")
            cur = engine.cursor()
            if engine.branch_head(database, name) is not None:
                # Left by a crash between the fork and the state row: nobody owns it, so it goes.
                cur.execute("SELECT * FROM differential_drop_branch(?, ?)", [database, name])
            cur.execute("SELECT * FROM differential_create_branch(?, ?, snapshot => ?)", [database, name, head])
        with state.write() as con:
            branch_id = con.execute(
                "INSERT INTO branches (database, name, owner_id, created_at, expires_at, fork_snapshot, state)"
                " VALUES (?, ?, ?, ?, ?, ?, 'live')",
                (database, name, caller.principal_id, now, None if ttl == 0 else now + ttl * 3600, head)).lastrowid
    return show(state, database, name, branch_id)


def list_branches(state: State, database: str, include_ended: bool) -> list[dict[str, Any]]:
    where = "" if include_ended else " AND b.state = 'live'"
    rows = state.read(BRANCH_SELECT + " WHERE b.database = ?" + where + " ORDER BY b.id", (database,))
    result = []
    for r in rows:
        item = _row(r)
        item["open_proposal"] = _open_proposal_id(state, r["id"])
        result.append(item)
    return result


def _open_proposal_id(state: State, branch_id: int) -> int | None:
    row = state.one("SELECT id FROM proposals WHERE branch_id = ? AND state IN ('open', 'merging')"
                    " ORDER BY id DESC LIMIT 1", (branch_id,))
    return row["id"] if row else None


def show(state: State, database: str, name: str, branch_id: int | None = None) -> dict[str, Any]:
    if branch_id is None:
        row = state.one(BRANCH_SELECT + " WHERE b.database = ? AND b.name = ? ORDER BY b.state = 'live' DESC, b.id DESC"
                        " LIMIT 1", (database, name))
    else:
        row = state.one(BRANCH_SELECT + " WHERE b.id = ?", (branch_id,))
    if row is None:
        raise ServiceError("branch_not_found", f"no branch {name!r} in {database!r}")
    item = _row(row)
    item["open_proposal"] = _open_proposal_id(state, row["id"])
    history = state.read(
        "SELECT q.id, q.state, q.created_at, q.policy, q.branch_head, q.main_head, q.merged_at, q.merge_snapshot,"
        " q.tag_snapshot, q.tag, p.name AS proposer, a.name AS approver FROM proposals q"
        " JOIN principals p ON p.id = q.proposer_id LEFT JOIN principals a ON a.id = q.approver_id"
        " WHERE q.branch_id = ? ORDER BY q.id", (row["id"],))
    item["proposals"] = [dict(h) for h in history]
    return item


def end(engine: Engine, state: State, branch: Any, new_state: str, by: str, now: float) -> None:
    """Drops the differential branch and closes the row; the row stays as history."""
    with engine.branch_lock(branch["database"], branch["name"]):
        try:
            engine.cursor().execute(
                "SELECT * FROM differential_drop_branch(?, ?)", [branch["database"], branch["name"]]
            )
        except duckdb.CatalogException as error:
            if "branch_not_found" not in str(error):
                raise
    with state.write() as con:
        con.execute("UPDATE branches SET state = ?, ended_at = ?, ended_by = ? WHERE id = ?",
                    (new_state, now, by, branch["id"]))
        con.execute("UPDATE proposals SET state = 'closed' WHERE branch_id = ? AND state = 'open'", (branch["id"],))


def discard(engine: Engine, state: State, caller: Caller, database: str, name: str, now: float) -> dict[str, Any]:
    branch = live_branch(state, database, name)
    if branch["owner_id"] != caller.principal_id and not caller.is_admin:
        raise ServiceError("not_owner", "only the branch owner or an admin may discard it")
    if state.one("SELECT id FROM proposals WHERE branch_id = ? AND state = 'merging'", (branch["id"],)):
        raise ServiceError("proposal_unsettled", "a merge of this branch may already be on main: merge it again first")
    end(engine, state, branch, "discarded", caller.name, now)
    return show(state, database, name, branch["id"])


def sweep(engine: Engine, state: State, now: float | None = None) -> list[dict[str, Any]]:
    """Discards live branches past their TTL; a branch whose merge is unsettled waits for the merge."""
    now = time.time() if now is None else now
    expired = state.read(BRANCH_SELECT + " WHERE b.state = 'live' AND b.expires_at IS NOT NULL AND b.expires_at <= ?"
                         " AND NOT EXISTS (SELECT 1 FROM proposals q WHERE q.branch_id = b.id AND q.state = 'merging')",
                         (now,))
    done = []
    for branch in expired:
        end(engine, state, branch, "expired", "manager", now)
        state.audit("branch.expire", "ok", "manager", branch["database"], branch["name"])
        done.append({"database": branch["database"], "name": branch["name"]})
    return done
