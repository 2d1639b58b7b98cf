"""Randomized merge histories for position matching (docs/MERGES.md §10b), and the comparison of a merge
by the default method with the reference method (SET differential_merge_skip_unchanged = false).
Importable by a subprocess too (the mutation test runs them with DIFFERENTIAL_MUTATION set)."""
import random
import re

import duckdb

from expected_merge import table_digests

SMALL, LARGE = 3_000, 250_000  # one row group; three (122,880 + 122,880 + 4,240)
TABLES = {
    "t": ("id INTEGER PRIMARY KEY, a INTEGER, s VARCHAR, st STRUCT(x INTEGER, y VARCHAR), l INTEGER[]",
          "range, range % 1000, CASE WHEN range % 97 = 0 THEN NULL ELSE 's' || range END, "
          "{'x': range % 13, 'y': 'y' || (range % 5)}, [range % 3, range % 7]"),
    # A composite key, one part text.
    "c": ("k1 INTEGER, k2 VARCHAR, v DOUBLE, w VARCHAR, PRIMARY KEY (k1, k2)",
          "range // 3, 'k' || (range % 3), range * 0.5, NULL"),
}
# Strides and offsets come from small sets so that the two sides often touch the same rows (conflicts).
STRIDES = (997, 2003, 5003)


def _where(rng, table):
    column = "id" if table == "t" else "k1"
    return f"{column} % {rng.choice(STRIDES)} = {rng.randrange(3)}"


def _operations(rng, table, rows, seed):
    """One random change to `table` ({a} is the alias), as a list of statements."""
    w, d = _where(rng, table), rng.randrange(1, 5)
    fresh = 10_000_000 + rng.randrange(3) * 1000  # both sides may insert the same keys
    # Updates in place keep every row where it was (position matching applies); the other changes
    # move rows or rewrite row groups (the key join takes over there).
    in_place = rng.random() < 0.65
    if table == "c":
        if in_place:
            return rng.choice([[f"UPDATE {{a}}.c SET v = v + {d} WHERE {w}"],
                               [f"UPDATE {{a}}.c SET w = 'w{d}', v = NULL WHERE {w}"]])
        return rng.choice([
            [f"DELETE FROM {{a}}.c WHERE {w}"],
            [f"INSERT INTO {{a}}.c SELECT {fresh} + range, 'new', range, 'i{d}' FROM range(5) ON CONFLICT DO NOTHING"],
            [f"DELETE FROM {{a}}.c WHERE k1 = 7", f"INSERT INTO {{a}}.c VALUES (7, 'k0', {d}, 'moved')"],
        ])
    lo = rng.randrange(0, rows)
    span = rng.choice([50, 5_000, 130_000])
    if in_place:
        return rng.choice([
            [f"UPDATE {{a}}.t SET a = a + {d} WHERE {w}"],
            [f"UPDATE {{a}}.t SET s = s || '!{d}' WHERE {w}"],
            [f"UPDATE {{a}}.t SET s = NULL, a = NULL WHERE {w}"],
            [f"UPDATE {{a}}.t SET st = {{{{'x': -{d}, 'y': NULL}}}} WHERE {w}"],
            [f"UPDATE {{a}}.t SET a = a + {d}, st = NULL WHERE {w}"],
        ])
    return rng.choice([
        # DuckDB updates a LIST as a delete and an insert.
        [f"UPDATE {{a}}.t SET l = list_append(l, {d}) WHERE {w}"],
        [f"UPDATE {{a}}.t SET a = a + {d}, st = NULL, l = NULL WHERE {w}"],
        [f"DELETE FROM {{a}}.t WHERE {w}"],
        # Many deletes: the checkpoint of the snapshot vacuums or drops row groups.
        [f"DELETE FROM {{a}}.t WHERE id BETWEEN {lo} AND {lo + span}"],
        [f"INSERT INTO {{a}}.t SELECT {fresh} + range, range, 'new{d}', NULL, [] FROM range(20) ON CONFLICT DO NOTHING"],
        # A row moved: deleted and inserted again under its key, changed or not.
        [f"DELETE FROM {{a}}.t WHERE id = {lo}",
         f"INSERT INTO {{a}}.t SELECT {lo}, {lo % 1000 if d == 1 else -d}, 's' || {lo}, NULL, [] "
         "ON CONFLICT DO NOTHING"],
        # Keys change (a delete and an insert to DuckDB).
        [f"UPDATE {{a}}.t SET id = id + 20000000 WHERE {w}"],
        # Every row rewritten in another order: same row counts, keys at other positions.
        ["CREATE OR REPLACE TEMP TABLE reorder AS FROM {a}.t", "DELETE FROM {a}.t",
         f"INSERT INTO {{a}}.t SELECT * FROM reorder ORDER BY hash(id + {seed})", "DROP TABLE reorder"],
    ])


def history(rng, seed):
    """A random history: tables and row counts, base-side changes, and each side's snapshots."""
    rows = rng.choice([SMALL, SMALL, LARGE])
    tables = ["t"] + (["c"] if rng.random() < 0.4 else [])
    steps = {"base": [], "ours": [], "theirs": []}
    if rng.random() < 0.4:
        steps["base"].append(_operations(rng, "t", rows, seed))
    for side in ("ours", "theirs"):
        for _ in range(rng.randrange(1, 3)):
            step = []
            for _ in range(rng.randrange(1, 4)):
                step += _operations(rng, rng.choice(tables), rows, seed)
            steps[side].append(step)
    return {"rows": rows, "tables": tables, "steps": steps}


def build(con, spec):
    """Base at the returned snapshot, main (ours) and side (theirs) from it; everything detached."""
    con.execute("ATTACH 'differential:db' AS db")
    for table in spec["tables"]:
        columns, values = TABLES[table]
        con.execute(f"CREATE TABLE db.{table} ({columns})")
        con.execute(f"INSERT INTO db.{table} SELECT {values} FROM range({spec['rows']})")
    con.execute("CALL differential_create_snapshot('db')")
    for statement in sum(spec["steps"]["base"], []):
        con.execute(statement.format(a="db"))
    base = con.execute("SELECT snapshot_id FROM differential_create_snapshot('db')").fetchone()[0]
    con.execute(f"CALL differential_create_branch('db', 'side', snapshot => {base})")
    con.execute("ATTACH 'differential:db' AS side (BRANCH 'side')")
    for side, alias in (("theirs", "side"), ("ours", "db")):
        for step in spec["steps"][side]:
            for statement in step:
                con.execute(statement.format(a=alias))
            con.execute(f"CALL differential_create_snapshot('{alias}')")
    con.execute("DETACH db")
    con.execute("DETACH side")


def outcome(con, sql):
    """("ok", rows) or ("error", code); an error must carry one of our codes."""
    try:
        return ("ok", con.execute(sql).fetchall())
    except duckdb.Error as error:
        match = re.match(r"^(?:[A-Za-z ]*Error: )?\[differential:([a-z_]+)\] ", str(error))
        assert match, f"not a differential error: {error}"
        return ("error", match.group(1))


PREVIEW = ("SELECT * EXCLUDE (unchanged_sides) FROM differential_merge_branch_preview('db', 'main', 'side', "
           "conflict_limit => 100000{options}) ORDER BY object_type, object_name")


def _resolutions(con, rng):
    """Resolution tables deciding every conflict of the reference preview at random; the mapping."""
    mapping = []
    for table in ("t", "c"):
        details = con.execute("SELECT conflict_details FROM differential_merge_branch_preview('db', 'main', 'side', "
                              f"conflict_limit => 100000) WHERE table_name = '{table}'").fetchall()
        if not details or not details[0][0]:
            continue
        key = ["id"] if table == "t" else ["k1", "k2"]
        con.execute(f"CREATE OR REPLACE TABLE memory.main.res_{table} ({TABLES[table][0].split(', PRIMARY')[0]}, "
                    "_merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))".replace(" PRIMARY KEY", ""))
        for conflict in details[0][0]:
            values = {k: v["text_value"] for k, v in zip(key, conflict["key"])}
            if conflict["kind"] == "cell":
                choice = {c: rng.choice(["ours", "theirs"]) for c in conflict["columns"]}
                action = "'cells', map {" + ", ".join(f"'{c}': '{v}'" for c, v in choice.items()) + "}"
            else:
                action = f"'{rng.choice(['ours', 'theirs', 'delete'])}', NULL"
            columns = ", ".join(values)
            literals = ", ".join("'" + v.replace("'", "''") + "'" for v in values.values())
            con.execute(f"INSERT INTO memory.main.res_{table} ({columns}, _merge_action, _merge_columns) "
                        f"SELECT {literals}, {action}")
        mapping.append(f"'main.{table}': 'memory.main.res_{table}'")
    return ", resolution_tables => map {" + ", ".join(mapping) + "}"


def compare(con, seed):
    """Previews and merges (into new branches `cut`/`ref`) with both methods; returns the differences
    (empty when the default method equals the reference one) and whether conflicts were resolved."""
    rng = random.Random(seed * 7919)
    # The comparison by position runs in one part per thread (cut at row group boundaries): 1 to 3 here.
    con.execute(f"SET threads = {1 + seed % 3}")
    differences = []
    options = ""
    for attempt in range(2):
        got = {}
        for method, on in (("cut", "true"), ("ref", "false")):
            con.execute(f"SET differential_merge_skip_unchanged = {on}")
            preview = outcome(con, PREVIEW.format(options=options))
            merged = outcome(con, "SELECT merge_action FROM differential_merge_branch('db', 'main', 'side', "
                                  f"'{method}{attempt}'{options})")
            content = None
            if merged[0] == "ok":
                con.execute(f"ATTACH 'differential:db' AS result (BRANCH '{method}{attempt}', READ_ONLY)")
                content = table_digests(con, "result")
                con.execute("DETACH result")
            got[method] = (preview, merged, content)
        con.execute("SET differential_merge_skip_unchanged = true")
        for part, name in enumerate(("preview", "merge", "content")):
            if got["cut"][part] != got["ref"][part]:
                differences.append((attempt, name, got["cut"][part], got["ref"][part]))
        if attempt or got["ref"][1] != ("error", "merge_conflict"):
            return differences, bool(attempt)
        con.execute("SET differential_merge_skip_unchanged = false")
        options = _resolutions(con, rng)
    return differences, True
