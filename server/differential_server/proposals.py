"""Proposals: a branch's change set, its conflicts against main's head, the policy and keys, made durable."""
from __future__ import annotations

import json
from typing import Any

from . import branches
from .changes import analyze, conflict_identity, table_defs
from .engine import Engine, ident
from .errors import ServiceError
from .state import State
from .tokens import Caller

POLICIES = (None, "main", "branch")
# How STRUCT values merge (the extension's `nested` option); None is the extension's default, whole values.
NESTED = (None, "whole", "fields")
# How the merge finds its base (the extension's `base` option); None is the extension's default, the unique one.
BASES = (None, "selected", "virtual")


def parse_keys(keys: list[str] | dict[str, list[str]] | None) -> dict[str, list[str]]:
    """`schema.table=col[,col]` strings (the CLI's form) or a mapping; the schema may only be main."""
    if not keys:
        return {}
    items: list[tuple[str, list[str]]]
    if isinstance(keys, dict):
        items = list(keys.items())
    else:
        items = []
        for text in keys:
            if "=" not in text:
                raise ServiceError("invalid_key", f"{text!r}: write a key as schema.table=col[,col...]")
            table, columns = text.split("=", 1)
            items.append((table, [c.strip() for c in columns.split(",") if c.strip()]))
    parsed: dict[str, list[str]] = {}
    for table, cols in items:
        schema, _, name = table.rpartition(".")
        if schema not in ("", "main") or not name or not cols:
            raise ServiceError("invalid_key", f"{table!r}: a key names main.<table> and at least one column")
        parsed[name] = list(cols)
    return parsed


def check_keys(keys: dict[str, list[str]], analysis: dict, head_defs: dict) -> None:
    changed = {t["table"].lower() for t in analysis["tables"]}
    for table, cols in keys.items():
        if table.lower() not in changed or table.lower() not in head_defs:
            raise ServiceError("invalid_key", f"--key names {table!r}, which is not a table of the change set")
        known = {c.lower() for c, _ in head_defs[table.lower()]["columns"]}
        unknown = [c for c in cols if c.lower() not in known]
        if unknown:
            raise ServiceError("invalid_key", f"--key {table}: no column {unknown[0]!r}")


def key_matches(cur: Any, aliases: tuple[str, str, str], defs: dict, keys: dict[str, list[str]]) -> list[dict]:
    """Rows the branch inserted whose --key equals a row main inserted since the fork (NULL never matches).

    Rows with the same primary key are the extension's insert_insert conflicts already; these are the others.
    """
    a_fork, a_head, a_main = aliases
    found = []
    for table, cols in keys.items():
        d = defs[table.lower()]
        name, pk = ident(d["name"]), d["pk"]
        new = "(SELECT * FROM {0}.main.{1} x WHERE NOT EXISTS (SELECT 1 FROM {2}.main.{1} f WHERE {3}))"
        pk_eq = " AND ".join(f"f.{ident(k)} = x.{ident(k)}" for k in pk)
        branch_new = new.format(ident(a_head), name, ident(a_fork), pk_eq)
        main_new = new.format(ident(a_main), name, ident(a_fork), pk_eq)
        on = " AND ".join(f"b.{ident(c)} = m.{ident(c)}" for c in cols)
        same_pk = " AND ".join(f"b.{ident(k)} = m.{ident(k)}" for k in pk)
        picked = [f"b.{ident(k)}::VARCHAR" for k in pk] + [f"m.{ident(k)}::VARCHAR" for k in pk]
        picked += [f"b.{ident(c)}::VARCHAR" for c in cols]
        rows = cur.execute(f"SELECT {', '.join(picked)} FROM {branch_new} b JOIN {main_new} m"
                           f" ON {on} WHERE NOT ({same_pk}) ORDER BY ALL").fetchall()
        n = len(pk)
        found += [{"table": d["name"], "kind": "key_match", "key": dict(zip(pk, r[:n], strict=True)), "columns": cols,
                   "main_key": dict(zip(pk, r[n:2 * n], strict=True)),
                   "values": dict(zip(cols, r[2 * n:], strict=True))} for r in rows]
    return found


def _match_identity(match: dict) -> tuple:
    return match["table"].lower(), tuple(sorted(match["key"].items())), tuple(sorted(match["main_key"].items()))


def key_deletes(analysis: dict, proposal: Any) -> list[dict]:
    """What the policy makes of rows matching on a --key, as rows to delete from main after the merge.

    A resolution table can only decide the extension's own (primary key) conflicts, and these rows have
    different primary keys: under `main` the branch's row is removed again, under `branch` main's row is.
    Each delete also names the --key values, so it removes only the row that matched (and is a no-op when
    repeated after a crash).
    """
    matches = analysis["key_matches"]
    if not matches:
        return []
    if proposal["policy"] is None:
        raise ServiceError("merge_conflict", "rows match on a --key and no --on-conflict: merging would duplicate"
                                             " them", key_matches=matches[:20])
    shown = {_match_identity(m) for m in json.loads(proposal["changes"]).get("key_matches", [])}
    new = [m for m in matches if _match_identity(m) not in shown]
    if new:
        raise ServiceError("conflicts_changed", "main made --key matches the proposal did not show: propose again",
                           new_conflicts=len(new))
    side = "key" if proposal["policy"] == "main" else "main_key"
    return [{"table": m["table"], "key": m[side], "values": m["values"]} for m in matches]


def assess(engine: Engine, database: str, branch: str, fork: int, head: int, main_head: int,
           keys: dict[str, list[str]], nested: str | None = None, base: str | None = None) -> dict[str, Any]:
    """The analysis a proposal records and a merge repeats: changes, conflicts and key matches."""
    kept = {r[0] for r in engine.cursor().execute("SELECT snapshot_id FROM differential_snapshots(?)",
                                                   [database]).fetchall()}
    if fork not in kept or head not in kept:
        raise ServiceError("history_gap", f"snapshot {fork if fork not in kept else head} of this branch's history is"
                                          " gone: discard the branch and create it again")
    analysis = analyze(engine, database, branch, fork, head, main_head, nested, base)
    with engine.snapshots(database, fork, head, main_head) as (cur, aliases):
        head_defs = table_defs(cur, aliases[1])
        check_keys(keys, analysis, head_defs)
        analysis["key_matches"] = key_matches(cur, (aliases[0], aliases[1], aliases[2]), head_defs, keys)
    return analysis


def propose(engine: Engine, state: State, caller: Caller, database: str, name: str, on_conflict: str | None,
            keys: Any, now: float, nested: str | None = None, base: str | None = None) -> dict[str, Any]:
    if on_conflict not in POLICIES:
        raise ServiceError("invalid_request", "on_conflict is main, branch or absent")
    if nested not in NESTED:
        raise ServiceError("invalid_request", "nested is whole, fields or absent")
    nested = None if nested == "whole" else nested
    if base not in BASES:
        raise ServiceError("invalid_request", "base is selected, virtual or absent")
    base = None if base == "selected" else base
    branch = branches.live_branch(state, database, name)
    if branch["owner_id"] != caller.principal_id and not caller.is_admin:
        raise ServiceError("not_owner", "only the branch owner or an admin may propose it")
    parsed = parse_keys(keys)
    with engine.branch_lock(database, name):
        if state.one("SELECT id FROM proposals WHERE branch_id = ? AND state = 'merging'", (branch["id"],)):
            raise ServiceError("proposal_unsettled", "a merge of this branch may already be on main: merge it again")
        with engine.gate(database).shared():
            fork, head = engine.live_branch_head(database, name)
            main_head = engine.snapshot_main_if_dirty(database, caller.name, f"main at the proposal of {name}")
            analysis = assess(engine, database, name, fork, head, main_head, parsed, nested, base)
        with state.write() as con:
            con.execute("UPDATE proposals SET state = 'replaced' WHERE branch_id = ? AND state = 'open'",
                        (branch["id"],))
            pid = con.execute(
                "INSERT INTO proposals (branch_id, proposer_id, created_at, state, branch_head, main_head, policy,"
                " keys, changes, conflicts, nested, base) VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ?)",
                (branch["id"], caller.principal_id, now, head, main_head, on_conflict, json.dumps(parsed),
                 json.dumps(analysis, default=str), json.dumps(analysis["conflicts"], default=str),
                 nested, base)).lastrowid
    return {"merge": {"id": pid, "state": "open", "branch_head": head, "main_head": main_head,
                      "policy": on_conflict, "keys": parsed, "nested": nested or "whole", "base": base or "selected",
                      "proposer": caller.name},
            "changes": analysis}


def load(state: State, database: str, name: str, proposal_id: int) -> Any:
    row = state.one(
        "SELECT q.*, b.database, b.name AS branch, b.state AS branch_state, b.owner_id, b.fork_snapshot,"
        " p.name AS proposer FROM proposals q JOIN branches b ON b.id = q.branch_id"
        " JOIN principals p ON p.id = q.proposer_id WHERE q.id = ?", (proposal_id,))
    if row is None or row["database"] != database or row["branch"] != name:
        raise ServiceError("proposal_not_found", f"no proposal {proposal_id} of branch {name!r}")
    return row


def decide(analysis: dict, proposal: Any) -> list[dict]:
    """Re-decides against main's head; returns the explicit decisions the policy makes, or refuses."""
    if analysis["blocker"]:
        code = "merge_unsupported" if "merge_unsupported" in analysis["blocker"] else "merge_conflict"
        raise ServiceError(code, "the extension refuses to merge this branch", detail=analysis["blocker"])
    altered = [t["table"] for t in analysis["tables"] if t["change"] == "altered"]
    if altered or analysis["views"]:
        raise ServiceError("merge_unsupported", "column changes and views do not merge: apply that DDL on main and"
                                                " use a fresh branch for the data", tables=altered,
                           views=[v["view"] for v in analysis["views"]])
    if analysis["table_conflicts"]:
        raise ServiceError("merge_conflict", "table conflicts: --on-conflict never overrides them",
                           table_conflicts=analysis["table_conflicts"])
    shown = {conflict_identity(c) for c in json.loads(proposal["conflicts"])}
    new = [c for c in analysis["conflicts"] if conflict_identity(c) not in shown]
    if new:
        raise ServiceError("conflicts_changed", "main made conflicts the proposal did not show: propose again",
                           new_conflicts=len(new))
    if analysis["conflicts"] and proposal["policy"] is None:
        raise ServiceError("merge_conflict", f"{len(analysis['conflicts'])} conflicting row(s) and no --on-conflict:"
                                             " propose again with on_conflict main or branch",
                           conflicts=len(analysis["conflicts"]))
    if not analysis["tables"]:
        raise ServiceError("nothing_to_merge", "the branch changes nothing on main: discard it")
    side = "ours" if proposal["policy"] == "main" else "theirs"
    decisions: list[dict] = []
    for c in analysis["conflicts"]:
        if c["kind"] == "foreign_key_violation":
            # The winning side's data stands: where it references the missing parent it has that parent, which is
            # restored as it has it; otherwise the child row becomes what the winning side has (no reference).
            if c["references"][proposal["policy"]]:
                restore = {"table": c["parent_table"], "key_values": c["parent_key_values"], "action": side,
                           "columns": None}
                if restore not in decisions:  # two children may miss one parent: one decision restores it
                    decisions.append(restore)
            else:
                decisions.append({"table": c["table"], "key_values": c["key_values"], "action": side, "columns": None})
        elif c["kind"] == "cell":
            decisions.append({"table": c["table"], "key_values": c["key_values"], "action": "cells",
                              "columns": {col: side for col in c["columns"]}})
        else:
            decisions.append({"table": c["table"], "key_values": c["key_values"], "action": side, "columns": None})
    return decisions
