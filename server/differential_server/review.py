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


def _outcomes(conflict: dict, fork: dict | None, main: dict | None, branch: dict | None) -> dict[str, Any]:
    """The row main holds after the merge under each policy (None: the row is absent)."""
    if conflict["kind"] != "cell" or main is None or branch is None:
        return {"main": main, "branch": branch}
    merged = dict(main)
    for column, value in branch.items():
        # The branch's own changes outside the conflicting columns merge under either policy.
        if column not in conflict["columns"] and (fork is None or fork.get(column) != value):
            merged[column] = value
    return {"main": {**merged, **{c: main[c] for c in conflict["columns"]}},
            "branch": {**merged, **{c: branch[c] for c in conflict["columns"]}}}


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
    proposal = state.one("SELECT id, policy, keys FROM proposals WHERE branch_id = ? AND state IN ('open', 'merging')"
                         " ORDER BY id DESC LIMIT 1", (live["id"],))
    keys = json.loads(proposal["keys"]) if proposal else {}
    with engine.gate(database).shared():
        fork, head = engine.live_branch_head(database, name)
        main_head = engine.snapshot_main_if_dirty(database, author, f"main at the preview of {name}")
        analysis = assess(engine, database, name, fork, head, main_head, keys)
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
            "tables": analysis["tables"], "table_conflicts": analysis["table_conflicts"],
            "blocker": analysis["blocker"],
            "conflicts": conflicts, "key_matches": analysis["key_matches"],
            "refusals": _refusals(analysis, conflicts)}
