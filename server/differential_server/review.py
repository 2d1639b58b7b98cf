"""The reviewer's reads: the inbox across databases, main's history, a branch's timeline, and the merge preview
with what each --on-conflict choice would keep."""
from __future__ import annotations

import json
from typing import Any

from . import branches
from .changes import table_defs
from .engine import Engine, ident, jsonable
from .proposals import assess
from .state import State


def _counts(changes: dict) -> dict[str, int]:
    tables = changes.get("tables", [])
    return {"tables": len(tables), "inserted": sum(t["inserted"] for t in tables),
            "updated": sum(t["updated"] for t in tables), "deleted": sum(t["deleted"] for t in tables)}


def inbox(state: State, databases: list[str], now: float, expiring_hours: float) -> dict[str, Any]:
    """Open proposals of the given databases, oldest first, and their live branches expiring within the window.

    The counts and conflicts are the ones the proposal recorded: what the reviewer is asked to approve.
    """
    if not databases:
        return {"proposals": [], "expiring": [], "expiring_hours": expiring_hours}
    marks = ", ".join("?" * len(databases))
    rows = state.read(
        "SELECT q.id, q.state, q.created_at, q.policy, q.changes, q.branch_head, q.main_head, b.database,"
        " b.name AS branch, b.expires_at, p.name AS proposer FROM proposals q JOIN branches b ON b.id = q.branch_id"
        " JOIN principals p ON p.id = q.proposer_id WHERE q.state IN ('open', 'merging') AND b.state = 'live'"
        f" AND b.database IN ({marks}) ORDER BY q.created_at, q.id", databases)
    proposals = []
    for r in rows:
        changes = json.loads(r["changes"])
        proposals.append({"id": r["id"], "database": r["database"], "branch": r["branch"], "state": r["state"],
                          "proposer": r["proposer"], "created_at": r["created_at"],
                          "age_seconds": max(0.0, now - r["created_at"]), "policy": r["policy"],
                          "branch_head": r["branch_head"], "main_head": r["main_head"], **_counts(changes),
                          "conflicts": len(changes.get("conflicts", [])) + len(changes.get("key_matches", [])),
                          "table_conflicts": len(changes.get("table_conflicts", [])),
                          "expires_at": r["expires_at"]})
    expiring = state.read(
        branches.BRANCH_SELECT + f" WHERE b.state = 'live' AND b.database IN ({marks}) AND b.expires_at IS NOT NULL"
        " AND b.expires_at <= ? ORDER BY b.expires_at, b.id", [*databases, now + expiring_hours * 3600])
    return {"proposals": proposals, "expiring_hours": expiring_hours,
            "expiring": [{"database": b["database"], "branch": b["name"], "owner": b["owner"],
                          "expires_at": b["expires_at"], "expires_in_seconds": b["expires_at"] - now}
                         for b in expiring]}


def history(engine: Engine, database: str, limit: int) -> list[dict[str, Any]]:
    """Main's newest snapshots, newest first: who wrote them, why, and the merge tags."""
    rows = engine.cursor().execute(
        "SELECT snapshot_id, snapshot_name, author, commit_message, created_at, commit_extra_info IS NOT NULL"
        " FROM differential_snapshots(?) WHERE branch_name = 'main' ORDER BY snapshot_id DESC LIMIT ?",
        [database, limit]).fetchall()
    return [{"snapshot_id": r[0], "tag": r[1], "author": r[2], "message": r[3], "created_at": jsonable(r[4]),
             "merge": bool(r[5])} for r in rows]


def timeline(state: State, database: str, name: str) -> dict[str, Any]:
    """The audit records of the branch `show` picks, from the creation that made it on.

    A name is free again once its branch ends, so the records start at the latest successful create of the name.
    """
    branch = branches.show(state, database, name)
    start = state.one("SELECT max(id) AS id FROM audit WHERE database = ? AND branch = ? AND action = 'branch.create'"
                      " AND outcome = 'ok'", (database, name))
    rows = state.read("SELECT id, at, principal, action, outcome, code, detail FROM audit WHERE database = ?"
                      " AND branch = ? AND id >= ? ORDER BY id", (database, name, (start and start["id"]) or 0))
    events = [{"id": r["id"], "at": r["at"], "principal": r["principal"], "action": r["action"],
               "outcome": r["outcome"], "code": r["code"],
               "message": (json.loads(r["detail"]) or {}).get("message") if r["detail"] else None} for r in rows]
    return {"database": database, "branch": name, "state": branch["state"], "events": events}


def _row(cur: Any, alias: str, d: dict, key_values: list[dict]) -> dict | None:
    cond = " AND ".join(f"{ident(k)} IS NOT DISTINCT FROM CAST(? AS {dict(d['columns'])[k]})" for k in d["pk"])
    found = cur.execute(f"SELECT * FROM {ident(alias)}.main.{ident(d['name'])} WHERE {cond}",
                        [None if v["is_null"] else v["text"] for v in key_values])
    names = [c[0] for c in found.description]
    row = found.fetchone()
    return None if row is None else {n: jsonable(v) for n, v in zip(names, row, strict=True)}


def _names(path: str) -> list[str]:
    """Field names of a path's tail (`theme`, `address.city`, `"lang.code"`: a quoted name may hold dots)."""
    names: list[str] = []
    name, quoted, i = "", False, 0
    while i < len(path):
        ch = path[i]
        if quoted and ch == '"' and path[i + 1:i + 2] == '"':
            name, i = name + '"', i + 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch == "." and not quoted:
            names, name = names + [name], ""
        else:
            name += ch
        i += 1
    return names + [name]


def _split(row: dict, path: str) -> tuple[str, list[str]]:
    """A conflict's column, or STRUCT field path (merging by field: `settings.theme`), as column and field names."""
    for column in sorted(row, key=len, reverse=True):
        if path == column:
            return column, []
        if path.startswith(column + "."):
            return column, _names(path[len(column) + 1:])
    return path, []


def _at(value: Any, names: list[str]) -> Any:
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _replaced(value: Any, names: list[str], part: Any) -> Any:
    if not names:
        return part
    out = dict(value) if isinstance(value, dict) else {}
    out[names[0]] = _replaced(out.get(names[0]), names[1:], part)
    return out


def _fields_merged(fork: Any, main: Any, branch: Any) -> Any:
    """The extension's field-level rule for STRUCT values present on all three sides (a clash keeps main's)."""
    if isinstance(fork, dict) and isinstance(main, dict) and isinstance(branch, dict):
        return {k: _fields_merged(fork.get(k), main.get(k), branch.get(k)) for k in main}
    return branch if main == fork else main


def _outcomes(conflict: dict, fork: dict | None, main: dict | None, branch: dict | None) -> dict[str, Any]:
    """The row main holds after the merge under each policy (None: the row is absent)."""
    if conflict["kind"] != "cell" or main is None or branch is None:
        return {"main": main, "branch": branch}
    parts = [_split(main, p) for p in conflict["columns"]]
    merged = dict(main)
    for column, value in branch.items():
        old = None if fork is None else fork.get(column)
        # The branch's own changes outside the conflicting parts merge under either policy: whole columns, or
        # (merging by field) the other fields of a STRUCT with a conflicting field.
        if any(c == column and names for c, names in parts):
            merged[column] = _fields_merged(old, main.get(column), value)
        elif column not in conflict["columns"] and (fork is None or old != value):
            merged[column] = value

    def keeping(side: dict) -> dict:
        out = dict(merged)
        for column, names in parts:
            out[column] = _replaced(out[column], names, _at(side[column], names))
        return out
    return {"main": keeping(main), "branch": keeping(branch)}


def _refusals(analysis: dict, conflicts: list) -> dict[str, str | None]:
    """The code a merge would answer under each choice (None: it merges), as `proposals.decide` decides."""
    blocked: str | None
    if analysis["blocker"]:
        blocked = "merge_unsupported" if "merge_unsupported" in analysis["blocker"] else "merge_conflict"
    elif analysis["views"] or any(t["change"] == "altered" for t in analysis["tables"]):
        blocked = "merge_unsupported"
    elif analysis["table_conflicts"]:
        blocked = "merge_conflict"
    elif not analysis["tables"]:
        blocked = "nothing_to_merge"
    else:
        blocked = None
    refuse = blocked or ("merge_conflict" if conflicts or analysis["key_matches"] else None)
    return {"refuse": refuse, "main": blocked, "branch": blocked}


def preview(engine: Engine, state: State, database: str, name: str, author: str) -> dict[str, Any]:
    """The merge decision as it stands at main's head: each conflict's rows and what each policy keeps."""
    live = branches.live_branch(state, database, name)
    proposal = state.one("SELECT id, policy, keys, nested, base FROM proposals WHERE branch_id = ?"
                         " AND state IN ('open', 'merging') ORDER BY id DESC LIMIT 1", (live["id"],))
    keys = json.loads(proposal["keys"]) if proposal else {}
    nested = proposal["nested"] if proposal else None
    base = proposal["base"] if proposal else None
    with engine.gate(database).shared():
        fork, head = engine.live_branch_head(database, name)
        main_head = engine.snapshot_main_if_dirty(database, author, f"main at the preview of {name}")
        analysis = assess(engine, database, name, fork, head, main_head, keys, nested, base)
        conflicts = []
        with engine.snapshots(database, fork, head, main_head) as (cur, aliases):
            defs = table_defs(cur, aliases[1])
            for c in analysis["conflicts"]:
                d = defs.get(c["table"].lower()) or table_defs(cur, aliases[2])[c["table"].lower()]
                rows = [_row(cur, alias, d, c["key_values"]) for alias in aliases]
                conflicts.append({"table": c["table"], "kind": c["kind"], "key": c["key"], "columns": c["columns"],
                                  "fork": rows[0], "branch": rows[1], "main": rows[2],
                                  "keeps": _outcomes(c, rows[0], rows[2], rows[1])})
    return {"database": database, "branch": name, "fork_snapshot": fork, "branch_head": head, "main_head": main_head,
            "open_proposal": proposal["id"] if proposal else None, "policy": proposal["policy"] if proposal else None,
            "nested": nested or "whole", "base": base or "selected",
            "tables": analysis["tables"], "table_conflicts": analysis["table_conflicts"],
            "blocker": analysis["blocker"],
            "conflicts": conflicts, "key_matches": analysis["key_matches"],
            "refusals": _refusals(analysis, conflicts)}
