"""Row-level and column-level diff of one table between a branch's fork and its head: rows from the extension's
differential_diff, as JSON pages or as one Arrow stream."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import duckdb

from .changes import table_defs
from .engine import Engine, jsonable
from .errors import ServiceError

END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"
DIFF = "SELECT kind AS op, key, before, after FROM differential_diff(?, ?, ?, ?)"


def _code(error: duckdb.Error) -> str:
    match = re.search(r"\[differential:([a-z_]+)\]", str(error))
    return match.group(1) if match else ""


def _refusal(error: duckdb.Error, table: str) -> Exception:
    """The extension's refusals of differential_diff as the server's codes; anything else stays a failure."""
    code = _code(error)
    if code == "table_not_found":
        return ServiceError("table_not_found", f"no table {table} on the branch or at its fork")
    if code == "diff_unsupported":
        return ServiceError("diff_unsupported", "the table's rows have no identity to diff by", detail=str(error))
    if code in ("snapshot_expired", "snapshot_not_found"):
        return ServiceError("history_gap", "a snapshot from the fork on is gone: discard the branch",
                            detail=str(error))
    return error


def _relation(engine: Engine, database: str, fork: int, head: int, table: str) -> duckdb.DuckDBPyRelation:
    """The extension's differential_diff between the fork and the head; it pins both snapshots itself."""
    try:
        return engine.cursor().sql(DIFF, params=[database, fork, head, table])
    except duckdb.Error as error:
        raise _refusal(error, table) from None


def _fields(struct_type: Any) -> list[str]:
    return [name for name, _ in struct_type.children]


def row_diff(engine: Engine, database: str, fork: int, head: int, table: str, offset: int, limit: int) -> dict:
    relation = _relation(engine, database, fork, head, table)
    key_type, before_type, after_type = relation.types[1:]
    try:
        total = relation.aggregate("count(*)").fetchall()[0][0]
        rows = relation.limit(int(limit), int(offset)).fetchall()
    except duckdb.Error as error:
        raise _refusal(error, table) from None
    before_cols, after_cols = _fields(before_type), _fields(after_type)
    common = [c for c in after_cols if c in before_cols]
    out = []
    for op, key, b, h in rows:
        changed = [] if op != "update" else [c for c in common if b[c] != h[c]] + sorted(set(b) ^ set(h))
        out.append({"op": op, "key": jsonable(key), "before": jsonable(b), "after": jsonable(h), "changed": changed})
    nxt = offset + len(out)
    return {"table": table, "primary_key": _fields(key_type), "columns": after_cols or before_cols, "offset": offset,
            "limit": limit, "total": total, "next_offset": nxt if nxt < total else None, "rows": out}


def row_diff_arrow(engine: Engine, database: str, fork: int, head: int, table: str) -> Iterator[bytes]:
    """The whole diff, unpaginated, as an Arrow IPC stream (op, key, before, after), one record batch at a time.

    Refusals surface before the first byte (binding the query checks the versions and the table); the batches
    then come straight from the extension's stream, so the diff is never held in memory whole.
    """

    reader = _relation(engine, database, fork, head, table).to_arrow_reader(10000)

    def batches() -> Iterator[bytes]:
        # The IPC stream format is the schema message, one message per batch, then the end-of-stream marker.
        yield reader.schema.serialize().to_pybytes()
        for batch in reader:
            yield batch.serialize().to_pybytes()
        yield END_OF_STREAM
    return batches()


def schema_diff(engine: Engine, database: str, fork: int, head: int, table: str) -> dict[str, Any]:
    with engine.gate(database).shared(), engine.snapshots(database, fork, head) as (cur, (a_fork, a_head)):
        before = table_defs(cur, a_fork).get(table.lower())
        after = table_defs(cur, a_head).get(table.lower())
    if before is None and after is None:
        raise ServiceError("table_not_found", f"no table main.{table} on the branch or at its fork")
    shown = after if after is not None else before
    assert shown is not None  # refused above when both are missing
    b_cols, h_cols = dict((before or {"columns": []})["columns"]), dict((after or {"columns": []})["columns"])
    columns = [{"column": c, "change": "added", "type": t} for c, t in h_cols.items() if c not in b_cols]
    columns += [{"column": c, "change": "dropped", "type": t} for c, t in b_cols.items() if c not in h_cols]
    columns += [{"column": c, "change": "type_changed", "type": h_cols[c], "before_type": t}
                for c, t in b_cols.items() if c in h_cols and h_cols[c] != t]
    return {"table": shown["name"], "before_sql": before and before["sql"],
            "after_sql": after and after["sql"], "columns": columns}
