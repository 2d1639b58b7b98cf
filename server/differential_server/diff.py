"""Row-level and column-level diff of one table between a branch's fork and its head, paginated."""
from __future__ import annotations

from typing import Any

from .changes import table_defs
from .engine import Engine, ident, jsonable
from .errors import ServiceError

PRESENT = "__review_present"


def _side(alias: str | None, table: dict | None) -> str:
    if table is None or alias is None:
        return f"(SELECT NULL::BOOLEAN AS {PRESENT} WHERE false)"
    return f"(SELECT true AS {PRESENT}, * FROM {ident(alias)}.main.{ident(table['name'])})"


def _struct(side: str, table: dict | None) -> str:
    if table is None:
        return "NULL"
    fields = ", ".join(f"{ident(c)} := {side}.{ident(c)}" for c, _ in table["columns"])
    return f"CASE WHEN {side}.{PRESENT} THEN struct_pack({fields}) END"


def _plan(cur, a_fork: str, a_head: str, table: str) -> dict[str, Any]:
    """The diff's FROM/WHERE and ORDER BY over both snapshots, matched by primary key."""
    before = table_defs(cur, a_fork).get(table.lower())
    after = table_defs(cur, a_head).get(table.lower())
    if before is None and after is None:
        raise ServiceError("table_not_found", f"no table main.{table} on the branch or at its fork")
    pk = (after or before)["pk"]
    if not pk or (before and after and before["pk"] != pk):
        raise ServiceError("merge_unsupported", f"main.{table} has no primary key (or changed it): rows have no"
                                                " identity to diff by")
    common = [c for c, _ in (after or before)["columns"]
              if before and after and c in dict(before["columns"]) and c in dict(after["columns"])]
    join = " AND ".join(f"b.{ident(k)} = h.{ident(k)}" for k in pk)
    differs = " OR ".join(f"b.{ident(c)} IS DISTINCT FROM h.{ident(c)}" for c in common) or "false"
    if before is None or after is None or [c for c, _ in before["columns"]] != [c for c, _ in after["columns"]]:
        differs = "true"
    source = (f"FROM {_side(a_fork, before)} b FULL OUTER JOIN {_side(a_head, after)} h ON {join}"
              f" WHERE b.{PRESENT} IS NULL OR h.{PRESENT} IS NULL OR {differs}")
    order = ", ".join(f"coalesce(h.{ident(k)}, b.{ident(k)})" for k in pk) if before and after else \
        ", ".join(f"{'h' if after else 'b'}.{ident(k)}" for k in pk)
    rows = f"{_struct('b', before)} AS before, {_struct('h', after)} AS after {source} ORDER BY {order}"
    return {"before": before, "after": after, "pk": pk, "common": common, "source": source, "rows": rows,
            "name": (after or before)["name"], "columns": [c for c, _ in (after or before)["columns"]]}


def row_diff(engine: Engine, database: str, fork: int, head: int, table: str, offset: int, limit: int) -> dict:
    with engine.gate(database).shared(), engine.snapshots(database, fork, head) as (cur, (a_fork, a_head)):
        plan = _plan(cur, a_fork, a_head, table)
        total = cur.execute(f"SELECT count(*) {plan['source']}").fetchone()[0]
        rows = cur.execute(f"SELECT {plan['rows']} LIMIT {int(limit)} OFFSET {int(offset)}").fetchall()
    pk, common, out = plan["pk"], plan["common"], []
    for b, h in rows:
        op = "insert" if b is None else "delete" if h is None else "update"
        key_row = h if h is not None else b
        changed = [] if op != "update" else [c for c in common if b[c] != h[c]]
        if op == "update" and set(b) != set(h):
            changed += sorted(set(b) ^ set(h))
        out.append({"op": op, "key": {k: jsonable(key_row[k]) for k in pk}, "before": jsonable(b),
                    "after": jsonable(h), "changed": changed})
    nxt = offset + len(out)
    return {"table": plan["name"], "primary_key": pk, "columns": plan["columns"], "offset": offset, "limit": limit,
            "total": total, "next_offset": nxt if nxt < total else None, "rows": out}


def row_diff_arrow(engine: Engine, database: str, fork: int, head: int, table: str) -> bytes:
    """The whole diff, unpaginated, as an Arrow IPC stream: op, then each side's row as a struct (NULL if absent)."""
    import pyarrow as pa

    with engine.gate(database).shared(), engine.snapshots(database, fork, head) as (cur, (a_fork, a_head)):
        plan = _plan(cur, a_fork, a_head, table)
        op = (f"CASE WHEN b.{PRESENT} IS NULL THEN 'insert' WHEN h.{PRESENT} IS NULL THEN 'delete'"
              " ELSE 'update' END AS op")
        # A relation, not a DB-API result: DuckDB then hands its batches over without an extra copy.
        reader = cur.sql(f"SELECT {op}, {plan['rows']}").to_arrow_reader(10000)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def schema_diff(engine: Engine, database: str, fork: int, head: int, table: str) -> dict[str, Any]:
    with engine.gate(database).shared(), engine.snapshots(database, fork, head) as (cur, (a_fork, a_head)):
        before = table_defs(cur, a_fork).get(table.lower())
        after = table_defs(cur, a_head).get(table.lower())
    if before is None and after is None:
        raise ServiceError("table_not_found", f"no table main.{table} on the branch or at its fork")
    b_cols, h_cols = dict((before or {"columns": []})["columns"]), dict((after or {"columns": []})["columns"])
    columns = [{"column": c, "change": "added", "type": t} for c, t in h_cols.items() if c not in b_cols]
    columns += [{"column": c, "change": "dropped", "type": t} for c, t in b_cols.items() if c not in h_cols]
    columns += [{"column": c, "change": "type_changed", "type": h_cols[c], "before_type": t}
                for c, t in b_cols.items() if c in h_cols and h_cols[c] != t]
    return {"table": (after or before)["name"], "before_sql": before and before["sql"],
            "after_sql": after and after["sql"], "columns": columns}
