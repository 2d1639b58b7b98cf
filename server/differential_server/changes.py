"""What a branch changed since its fork: tables classified with row counts, conflicts against main's head."""
from __future__ import annotations

from typing import Any

import duckdb

from .engine import Engine, ident, one_row

PREVIEW_SQL = (
    "SELECT object_type, object_name, table_name, theirs_inserts, theirs_updates, theirs_deletes, ours_inserts,"
    " ours_updates, ours_deletes, conflicts, conflict_details, view_change, schema_conflicts, schema_conflict_details"
    " FROM differential_merge_branch_preview(?, 'main', ?, schema_mode => 'catalog', nested => ?, base => ?,"
    " conflict_limit => ?)")
CONFLICT_LIMIT = 10000


def table_defs(cur: duckdb.DuckDBPyConnection, alias: str) -> dict[str, dict[str, Any]]:
    """Tables of schema main in an attachment, keyed by lower-case name (DuckDB matches names ignoring case)."""
    defs: dict[str, dict[str, Any]] = {}
    for name, sql in cur.execute("SELECT table_name, sql FROM duckdb_tables() WHERE database_name = ?"
                                 " AND schema_name = 'main'", [alias]).fetchall():
        defs[name.lower()] = {"name": name, "sql": sql, "columns": [], "pk": []}
    for table, column, dtype in cur.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = ?"
            " AND schema_name = 'main' ORDER BY table_name, column_index", [alias]).fetchall():
        if table.lower() in defs:
            defs[table.lower()]["columns"].append((column, dtype))
    for table, cols in cur.execute(
            "SELECT table_name, constraint_column_names FROM duckdb_constraints() WHERE database_name = ?"
            " AND schema_name = 'main' AND constraint_type = 'PRIMARY KEY'", [alias]).fetchall():
        if table.lower() in defs:
            defs[table.lower()]["pk"] = list(cols)
    return defs


def _classify(before: dict | None, after: dict | None) -> str | None:
    if before is None and after is None:
        return None
    if before is None:
        return "created"
    if after is None:
        return "dropped"
    if before["columns"] != after["columns"]:
        return "altered"
    if before["sql"] != after["sql"]:
        return "recreated"
    return "modified"


def _key(details: dict, pk: list[str]) -> dict[str, Any]:
    values = details["key"] or []
    return {(pk[i] if i < len(pk) else f"key{i}"): (None if v["is_null"] else v["text_value"])
            for i, v in enumerate(values)}


def _typed(values: list | None) -> list[dict[str, Any]]:
    return [{"sql_type": v["sql_type"], "is_null": v["is_null"], "text": v["text_value"]} for v in (values or [])]


def _row_conflicts(table: str, details: list, pk: list[str]) -> list[dict[str, Any]]:
    out = []
    for d in details:
        conflict = {"table": table, "kind": d["kind"], "key": _key(d, pk), "key_values": _typed(d["key"]),
                    "columns": list(d["columns"] or []), "in_main": d["in_ours"], "in_branch": d["in_theirs"]}
        if d["kind"] == "foreign_key_violation":
            # Which side's child row references the missing parent: that side has the parent row too.
            missing = [v["text_value"] for v in d["parent_key"]]
            refs = {side: bool(d[f"in_{alias}"]) and [c[alias]["text_value"] for c in d["cells"]] == missing
                    for side, alias in (("main", "ours"), ("branch", "theirs"))}
            conflict.update({"parent_table": d["parent_table"], "parent_key_values": _typed(d["parent_key"]),
                             "references": refs})
        out.append(conflict)
    return out


def _table_conflict(kind: str, base: dict | None, main: dict | None, main_rows: int) -> str | None:
    """The spec's table conflicts: what main did to a table the branch touched."""
    if base is None and main is not None:
        return "main created a table of this name"
    if base is not None and main is None:
        return "main dropped the table"
    if base is not None and main is not None and base["columns"] != main["columns"]:
        return "main changed the table's columns"
    if base is not None and main is not None and base["sql"] != main["sql"]:
        return "main recreated the table"
    if kind in ("dropped", "recreated", "altered") and main_rows:
        return f"the branch {kind} the table and main changed its rows"
    return None


def _row_counts(cur: duckdb.DuckDBPyConnection, a_fork: str, a_head: str, before: dict, after: dict) -> tuple:
    """Inserted, updated and deleted rows of a table between fork and head, for a table the merge preview leaves
    out (main dropped or replaced it): the branch's change must still show, and conflict."""
    f = f"{ident(a_fork)}.main.{ident(before['name'])}"
    h = f"{ident(a_head)}.main.{ident(after['name'])}"
    pk = after["pk"]
    if not pk or before["pk"] != pk:
        count = "SELECT count(*) FROM (SELECT * FROM {} EXCEPT ALL SELECT * FROM {})"
        return (one_row(cur.execute(count.format(h, f)))[0], 0, one_row(cur.execute(count.format(f, h)))[0])
    on = " AND ".join(f"__f.{ident(k)} = __h.{ident(k)}" for k in pk)
    only = "SELECT count(*) FROM {} __a WHERE NOT EXISTS (SELECT 1 FROM {} __b WHERE {})"
    inserted = one_row(cur.execute(only.format(h, f, on.replace("__f.", "__b.").replace("__h.", "__a."))))[0]
    deleted = one_row(cur.execute(only.format(f, h, on.replace("__f.", "__a.").replace("__h.", "__b."))))[0]
    updated = one_row(cur.execute(
        f"SELECT count(*) FROM {f} __f JOIN {h} __h ON {on} WHERE __f IS DISTINCT FROM __h"))[0]
    return inserted, updated, deleted


def analyze(engine: Engine, database: str, branch: str, fork: int, head: int, main_head: int,
            nested: str | None = None, base_mode: str | None = None) -> dict[str, Any]:
    """Runs under main's shared gate; every input is a published snapshot, so the answer is reproducible.

    `nested` is the extension's option: 'fields' merges STRUCT values field by field (conflicts name field paths);
    so is `base_mode` (its `base`): 'virtual' merges a criss-cross history's best common ancestors into a virtual base.
    """
    with engine.snapshots(database, fork, head, main_head) as (cur, (a_fork, a_head, a_main)):
        base, side, main = table_defs(cur, a_fork), table_defs(cur, a_head), table_defs(cur, a_main)
        counts_of = {}
        for name in set(base) | set(side):
            if (base.get(name) is None) != (side.get(name) is None):
                alias, defs = (a_head, side) if name in side else (a_fork, base)
                counts_of[name] = one_row(cur.execute(
                    f"SELECT count(*) FROM {ident(alias)}.main.{ident(defs[name]['name'])}"))[0]
    preview, blocker = {}, None
    try:
        rows = engine.cursor().execute(PREVIEW_SQL, [database, branch, nested or "whole", base_mode or "selected",
                                                     CONFLICT_LIMIT]).fetchall()
        for r in rows:
            preview[(r[0], (r[2] or r[1]).lower())] = r
    except duckdb.Error as error:
        blocker = str(error)
    # For a table main dropped or replaced, the preview may leave the branch's rows out or count none of them:
    # those are counted here from the snapshots, so the branch's change shows and conflicts.
    unseen = [n for n in set(base) & set(side) if _classify(base[n], side[n]) == "modified" and blocker is None
              and not any(preview.get(("table", n), (0,) * 6)[3:6])
              and _table_conflict("modified", base[n], main.get(n), 0)]
    if unseen:
        with engine.snapshots(database, fork, head) as (cur, (a_fork, a_head)):
            counts_of.update({n: _row_counts(cur, a_fork, a_head, base[n], side[n]) for n in unseen})
    tables, conflicts, table_conflicts, views = [], [], [], []
    for name in sorted(set(base) | set(side)):
        kind = _classify(base.get(name), side.get(name))
        assert kind is not None  # the name is in base or side
        p = preview.get(("table", name))
        ins, upd, dele = (p[3], p[4], p[5]) if p else (0, 0, 0)
        if name in unseen:
            ins, upd, dele = counts_of[name]
        if kind == "created":
            ins, upd, dele = counts_of[name], 0, 0
        elif kind == "dropped":
            ins, upd, dele = 0, 0, counts_of[name]
        elif kind == "modified" and not (ins or upd or dele):
            continue
        display = (side.get(name) or base[name])["name"]
        main_rows = sum(p[6:9]) if p else 0
        unavailable = p is None and kind not in ("created", "dropped")
        tables.append({"table": display, "change": kind, "inserted": ins, "updated": upd, "deleted": dele,
                       "counts_unavailable": unavailable, "conflicts": p[9] if p else 0})
        reason = _table_conflict(kind, base.get(name), main.get(name), main_rows)
        if p is not None and p[12]:
            reason = reason or "; ".join(d["message"] for d in p[13])
        if reason:
            table_conflicts.append({"table": display, "reason": reason})
        if p is not None and p[10]:
            conflicts.extend(_row_conflicts(display, p[10], (side.get(name) or base[name])["pk"]))
    for (otype, name), p in sorted(preview.items()):
        if otype == "view" and p[11] is not None and p[11]["source"] in ("theirs", "both", None):
            views.append({"view": name, "change": p[11]["action"]})
    return {"database": database, "branch": branch, "fork_snapshot": fork, "branch_head": head,
            "main_head": main_head, "tables": tables, "views": views, "conflicts": conflicts,
            "table_conflicts": table_conflicts, "blocker": blocker}


def conflict_identity(conflict: dict[str, Any]) -> tuple:
    return (conflict["table"].lower(), conflict["kind"], tuple(v["text"] for v in conflict["key_values"]))
