"""Merging an approved proposal into main: re-decide at main's head, then one durable extension merge."""
from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

import duckdb

from . import branches
from .changes import table_defs
from .engine import Engine, ident, literal, one_row
from .errors import ServiceError
from .proposals import assess, decide, key_deletes, load
from .state import State
from .tokens import Caller

MOVED = (
    "merge_inputs_changed", "merge_target_dirty", "active_attachment_or_transaction", "branch_locked", "merge_busy"
)


class _Moved(Exception):
    """Main moved between the decision and the merge: decide again."""


def _code(error: duckdb.Error) -> str:
    match = re.search(r"\[differential:([a-z_]+)\]", str(error))
    return match.group(1) if match else "internal"


def merge(engine: Engine, state: State, settings: Any, caller: Caller, database: str, name: str, proposal_id: int,
          expect_main: int | None) -> dict[str, Any]:
    if caller.branch_only:
        raise ServiceError("branch_only_token", "a branch-only token cannot merge: a merge writes main")
    if not caller.is_admin:
        raise ServiceError("admin_required", "merging needs an admin")
    if load(state, database, name, proposal_id)["proposer_id"] == caller.principal_id:
        raise ServiceError("self_merge_forbidden", "the proposer cannot approve their own proposal")
    with engine.branch_lock(database, name):
        proposal = load(state, database, name, proposal_id)
        _refuse_settled(state, proposal)
        if proposal["state"] == "merging":
            plan = json.loads(proposal["decisions"])
            _rebuild_resolutions(engine, database, plan)  # they lived in memory: a crash took them
            result = _attempt(engine, state, database, name, proposal_id, plan)
            if result is not None:
                return _finish(engine, state, caller, proposal, plan, result)
        for _ in range(settings.merge_max_attempts):
            plan = _prepare(engine, state, caller, database, name, load(state, database, name, proposal_id),
                            expect_main, settings)
            result = _attempt(engine, state, database, name, proposal_id, plan)
            if result is not None:
                return _finish(engine, state, caller, proposal, plan, result)
        raise ServiceError("concurrent_write", f"main kept moving through {settings.merge_max_attempts} attempts:"
                                               " merge again")


def _attempt(engine: Engine, state: State, database: str, name: str, proposal_id: int, plan: dict) -> tuple | None:
    """The merge's result, or None when main moved; a refusal published nothing, so the proposal reopens.

    Any other failure leaves the proposal merging: the merge may be on main, and merging again settles it.
    """
    try:
        return _execute(engine, database, name, plan)
    except _Moved:
        _reopen(state, proposal_id)
        return None
    except ServiceError:
        _reopen(state, proposal_id)
        raise


def _refuse_settled(state: State, proposal: Any) -> None:
    if proposal["state"] == "merged":
        raise ServiceError("already_merged", f"proposal {proposal['id']} has merged",
                           snapshot_id=proposal["tag_snapshot"], tag=proposal["tag"],
                           merge_snapshot=proposal["merge_snapshot"])
    if proposal["state"] == "replaced":
        newer = state.one("SELECT id FROM proposals WHERE branch_id = ? AND state IN ('open', 'merging')"
                          " ORDER BY id DESC LIMIT 1", (proposal["branch_id"],))
        raise ServiceError("proposal_replaced", f"proposal {proposal['id']} was replaced: read the open one, then merge"
                                                " it by its id", open_proposal=newer["id"] if newer else None)
    if proposal["state"] == "closed" or proposal["branch_state"] != "live":
        raise ServiceError("branch_not_found", f"branch {proposal['branch']!r} has ended")


def _reopen(state: State, proposal_id: int) -> None:
    with state.write() as con:
        con.execute("UPDATE proposals SET state = 'open', decisions = NULL, request_id = NULL WHERE id = ?",
                    (proposal_id,))


def _prepare(engine: Engine, state: State, caller: Caller, database: str, name: str, proposal: Any,
             expect_main: int | None, settings: Any) -> dict[str, Any]:
    """Decides every conflict again at main's current head and records the plan before anything is written."""
    with engine.gate(database).shared():
        fork, head = engine.live_branch_head(database, name)
        if head != proposal["branch_head"]:
            raise ServiceError("proposal_stale", f"the branch moved to snapshot {head} since it was proposed at"
                                                 f" {proposal['branch_head']}: propose again")
        main_head = engine.snapshot_main_if_dirty(database, caller.name, f"main before merging {name}")
        if expect_main is not None and expect_main != main_head:
            raise ServiceError("concurrent_write", f"main is at snapshot {main_head}, not {expect_main}: read what"
                                                   " main changed since, then merge again", main_head=main_head)
        analysis = assess(engine, database, name, fork, head, main_head, json.loads(proposal["keys"]),
                          proposal["nested"], proposal["base"])
        decisions = decide(analysis, proposal)
        deletes = key_deletes(analysis, proposal)
        request_id = f"review-p{proposal['id']}-{uuid.uuid4().hex[:8]}"
        tables = sorted({d["table"] for d in decisions})
        plan = {"request_id": request_id, "main_head": main_head, "branch_head": head, "decisions": decisions,
                "nested": proposal["nested"] or "whole", "base": proposal["base"] or "selected",
                "resolution": {t: f"memory.main.{ident(request_id + '-' + str(i))}" for i, t in enumerate(tables)},
                "timeout_ms": settings.merge_timeout_sec * 1000, "key_deletes": deletes}
        with engine.snapshots(database, main_head) as (cur, (alias,)):
            defs = table_defs(cur, alias)
            _build_resolutions(cur, alias, defs, plan)
    with state.write() as con:
        con.execute("UPDATE proposals SET state = 'merging', decisions = ?, request_id = ? WHERE id = ?",
                    (json.dumps(plan), request_id, proposal["id"]))
    return plan


def _rebuild_resolutions(engine: Engine, database: str, plan: dict) -> None:
    if plan["resolution"]:
        with engine.gate(database).shared(), engine.snapshots(database, plan["main_head"]) as (cur, (alias,)):
            _build_resolutions(cur, alias, table_defs(cur, alias), plan)


def _build_resolutions(cur: duckdb.DuckDBPyConnection, alias: str, defs: dict, plan: dict) -> None:
    """The policy as explicit decision rows, so the extension records each one with the request."""
    for table, target in plan["resolution"].items():
        d = defs[table.lower()]
        cur.execute(f"CREATE OR REPLACE TABLE {target} AS SELECT * FROM {ident(alias)}.main.{ident(d['name'])} LIMIT 0")
        cur.execute(f"ALTER TABLE {target} ADD COLUMN _merge_action VARCHAR")
        cur.execute(f"ALTER TABLE {target} ADD COLUMN _merge_columns MAP(VARCHAR, VARCHAR)")
        pk, types = d["pk"], dict(d["columns"])
        for dec in (x for x in plan["decisions"] if x["table"] == table):
            cols = ", ".join(ident(k) for k in pk) + ", _merge_action, _merge_columns"
            values = ", ".join(f"CAST(? AS {types[k]})" for k in pk)
            named = dec["columns"]
            columns = None if named is None else {"key": list(named), "value": list(named.values())}
            cur.execute(f"INSERT INTO {target} ({cols}) VALUES ({values}, ?, "
                        + ("NULL" if columns is None else "MAP(?::VARCHAR[], ?::VARCHAR[])") + ")",
                        [v["text"] for v in dec["key_values"]] + [dec["action"]]
                        + ([] if columns is None else [columns["key"], columns["value"]]))


def _execute(engine: Engine, database: str, name: str, plan: dict) -> tuple:
    """Main detached, one differential_merge_branch with the plan's request id and guards, main attached again."""
    mapping = ", ".join(f"{literal('main.' + ident(t))}: {literal(target)}" for t, target in plan["resolution"].items())
    extra = f", resolution_tables => MAP {{{mapping}}}" if mapping else ""
    sql = ("SELECT snapshot_id, merge_action FROM differential_merge_branch(?, 'main', ?, 'main', request_id => ?,"
           " expected_ours_snapshot_id => ?, expected_theirs_snapshot_id => ?, schema_mode => 'catalog',"
           f" nested => ?, base => ?, timeout_ms => ?{extra})")
    with engine.main_released(database):
        try:
            return one_row(engine.cursor().execute(sql, [database, name, plan["request_id"], plan["main_head"],
                                                         plan["branch_head"], plan.get("nested", "whole"),
                                                         plan.get("base", "selected"), plan["timeout_ms"]]))
        except duckdb.Error as error:
            code = _code(error)
            if code == "merge_target_dirty":
                # Only the server writes main, and every write of its own is snapshotted; yet main's file can
                # still differ from its head snapshot (a checkpoint rewrote it with identical rows). The next
                # attempt snapshots main first instead of finding it dirty again until a restart.
                engine.main_dirty[database] = True
            if code in MOVED:
                raise _Moved() from None
            raise _refusal(code, error) from None


def _refusal(code: str, error: duckdb.Error) -> ServiceError:
    if code == "snapshot_expired":
        return ServiceError("history_gap", "a snapshot from the fork on is gone: discard the branch", detail=str(error))
    if code == "merge_unsupported":
        return ServiceError("merge_unsupported", "the extension refuses to merge this branch", detail=str(error))
    if code in ("merge_conflict", "merge_schema_conflict", "table_delete_modify", "column_delete_modify",
                "view_definition", "view_binding", "view_output", "merge_validation_failed"):
        return ServiceError("merge_conflict", "the merge found conflicts", detail=str(error))
    return ServiceError("internal", "the merge failed; nothing was published", detail=str(error))


def _finish(engine: Engine, state: State, caller: Caller, proposal: Any, plan: dict, result: tuple) -> dict:
    """Tags main's new head with the approver as author and ends the branch; safe to repeat after a crash."""
    database, name, pid = proposal["database"], proposal["branch"], proposal["id"]
    tag = f"merge-{name}-{pid}"
    deletes = plan.get("key_deletes") or []
    with engine.gate(database).exclusive() if deletes else engine.gate(database).shared():
        cur = engine.cursor()
        # Only main's own snapshot can be the tag: one of that name elsewhere is not the server's.
        row = cur.execute("SELECT snapshot_id FROM differential_snapshots(?) WHERE snapshot_name = ?"
                          " AND branch_name = 'main'", [database, tag]).fetchone()
        if row is None:
            # The tag holds the merge and the policy's --key decisions; the unnamed merge snapshot only the merge.
            _apply_key_deletes(cur, database, deletes)
            message = (
                f"merge of branch {name} (merge {pid}) proposed by {proposal['proposer']}, approved by {caller.name}"
            )
            row = one_row(cur.execute("SELECT snapshot_id FROM differential_create_snapshot(?, name => ?, author => ?,"
                                      " message => ?)", [database, tag, caller.name, message]))
        engine.main_dirty[database] = False
        for target in plan["resolution"].values():
            cur.execute(f"DROP TABLE IF EXISTS {target}")
    with state.write() as con:
        con.execute("UPDATE proposals SET state = 'merged', approver_id = ?, merged_at = ?, merge_snapshot = ?, "
                    "tag_snapshot = ?, tag = ? WHERE id = ?",
                    (caller.principal_id, time.time(), result[0], row[0], tag, pid))
    branch = state.one("SELECT * FROM branches WHERE id = ?", (proposal["branch_id"],))
    branches.end(engine, state, branch, "merged", caller.name, time.time())
    return {"merge": {"id": pid, "state": "merged", "snapshot_id": row[0], "tag": tag, "merge_snapshot": result[0],
                      "merge_action": result[1], "request_id": plan["request_id"], "proposer": proposal["proposer"],
                      "approver": caller.name, "decisions": len(plan["decisions"])}}


def _apply_key_deletes(cur: duckdb.DuckDBPyConnection, database: str, deletes: list[dict]) -> None:
    """Deletes the rows --on-conflict decided against on a --key match, from main, before the tag is taken."""
    if not deletes:
        return
    defs = table_defs(cur, database)
    for delete in deletes:
        d = defs[delete["table"].lower()]
        types = {c.lower(): t for c, t in d["columns"]}
        where = [(c, v) for c, v in delete["key"].items()] + [(c, v) for c, v in delete["values"].items()]
        cond = " AND ".join(f"{ident(c)} = CAST(? AS {types[c.lower()]})" for c, _ in where)
        cur.execute(f"DELETE FROM {ident(database)}.main.{ident(d['name'])} WHERE {cond}", [v for _, v in where])
