"""Field-level merges of STRUCT values (nested => 'fields'), proven against a reference model.

The model (below, plain Python over dicts) decides every key of randomly edited histories: a STRUCT
cell whose three values are non-NULL is decided field by field, recursively; anything else (a NULL
STRUCT on a side, a leaf field, another column) by the whole-value rule. Each history is merged
twice: all rows (the conflicts the preview reports must be exactly the model's, and the merge must
refuse and change nothing), then only the rows the model merges cleanly (the merged table must be
exactly the model's)."""
import random

import pytest

from differential_testing import refused, repository_state, three_way_database, tree_fingerprint
from differential_testing import whole_value as whole

ABSENT = object()
STRUCT = "STRUCT(a INTEGER, b VARCHAR, n STRUCT(x INTEGER, y INTEGER))"
# The STRUCT's shape as the model walks it: a field mapping to None is a leaf.
SHAPE = {"a": None, "b": None, "n": {"x": None, "y": None}}
COLUMNS = ("s", "v")


def fields(shape, b, o, t, path):
    """(merged, conflicting paths) field by field where all three are non-NULL STRUCTs, else as a whole value."""
    if shape is None or b is None or o is None or t is None:
        merged, conflict = whole(b, o, t)
        return merged, [path] if conflict else []
    merged, paths = {}, []
    for name, child in shape.items():
        merged[name], clashes = fields(child, b[name], o[name], t[name], f"{path}.{name}")
        paths += clashes
    return merged, paths


def decide(b, o, t, mode):
    """One key: ('row', row), ('absent',), ('conflict', kind, columns) or None (never existed). A row is (s, v);
    `columns` are what the conflict is about: columns, or STRUCT field paths when merging by field."""
    if b is ABSENT:
        if o is ABSENT and t is ABSENT:
            return None
        if o is ABSENT or t is ABSENT:
            return ("row", t if o is ABSENT else o)
        differ = [c for i, c in enumerate(COLUMNS) if o[i] != t[i]]
        return ("row", o) if o == t else ("conflict", "insert_insert", differ)
    if o is ABSENT and t is ABSENT:
        return ("absent",)
    if o is ABSENT or t is ABSENT:
        side = t if o is ABSENT else o
        changed = [c for i, c in enumerate(COLUMNS) if side[i] != b[i]]
        return ("absent",) if side == b else ("conflict", "delete_update", changed)
    s, s_clashes = fields(SHAPE if mode == "fields" else None, b[0], o[0], t[0], "s")
    v, v_clash = whole(b[1], o[1], t[1])
    clashes = s_clashes + (["v"] if v_clash else [])
    return ("conflict", "cell", clashes) if clashes else ("row", (s, v))


def resolved_cell(shape, path, b, o, t, custom, choices):
    """A 'cells' decision's value: the outermost named part takes the chosen side whole; a STRUCT part present
    in all three and not named is rebuilt field by field; anything else keeps its merged value."""
    if path in choices:
        return {"ours": o, "theirs": t, "custom": custom}[choices[path]]
    if shape is None or b is None or o is None or t is None:
        return whole(b, o, t)[0]
    return {name: resolved_cell(child, f"{path}.{name}", b[name], o[name], t[name],
                                None if custom is None else custom[name], choices) for name, child in shape.items()}


def random_struct(rng):
    if rng.random() < 0.1:
        return None
    pick = lambda values: rng.choice(values)
    n = None if rng.random() < 0.2 else {"x": pick([1, 2, None]), "y": pick([1, 2, None])}
    return {"a": pick([1, 2, 3, None]), "b": pick(["p", "q", None]), "n": n}


def edit(rng, row):
    """One side's random change of a row (s, v); may return the row unchanged."""
    s, v = row
    s = None if s is None else {"a": s["a"], "b": s["b"], "n": None if s["n"] is None else dict(s["n"])}
    roll = rng.random()
    if roll < 0.08:
        return ABSENT
    if roll < 0.14:
        return (random_struct(rng), v)
    if roll < 0.2:
        return (None, v)
    if roll < 0.3:
        return (s, rng.choice([10, 20]))
    if s is None:
        return (s, v)
    path = rng.choice(["a", "b", "n.x", "n.y", "n"])
    if path == "n":
        s["n"] = None if s["n"] is not None else {"x": 1, "y": None}
    elif path.startswith("n."):
        if s["n"] is not None:
            s["n"][path[2:]] = rng.choice([1, 2, 3, None])
    else:
        s[path] = rng.choice([1, 2, 3, 4, None]) if path == "a" else rng.choice(["p", "q", "r", None])
    return (s, v)


def history(seed, keys=90):
    """{key: (base, ours, theirs)}: a random base, each side editing it, and inserts on both sides."""
    rng = random.Random(seed)
    out = {}
    for k in range(keys):
        base = (random_struct(rng), rng.choice([1, 2]))
        ours = edit(rng, base) if rng.random() < 0.6 else base
        theirs = edit(rng, base) if rng.random() < 0.6 else base
        out[k] = (base, ours, theirs)
    for k in range(keys, keys + 12):
        row = (random_struct(rng), 1)
        roll = rng.random()
        ours = row if roll < 0.7 else ABSENT
        theirs = row if roll > 0.3 and roll < 0.5 else (random_struct(rng), 1) if roll >= 0.5 else ABSENT
        out[k] = (ABSENT, ours, theirs)
    # Both sides setting the same field differently, at every depth (random edits rarely meet on one field).
    for i, path in enumerate(["a", "b", "n.x", "n.y"] * 2):
        base = ({"a": 1, "b": "p", "n": {"x": 1, "y": 1}}, 1)
        sides = []
        for value in ((2, "q") if i < 4 else (3, "r")), ((3, "r") if i < 4 else (2, "q")):
            s = {"a": 1, "b": "p", "n": {"x": 1, "y": 1}}
            if "." in path:
                s["n"][path[2:]] = value[0]
            else:
                s[path] = value[0] if path == "a" else value[1]
            sides.append((s, base[1]))
        out[keys + 12 + i] = (base, sides[0], sides[1])
    return out


def sql_struct(s):
    if s is None:
        return "NULL"
    lit = lambda value: "NULL" if value is None else repr(value) if isinstance(value, int) else f"'{value}'"
    n = "NULL" if s["n"] is None else f"{{'x': {lit(s['n']['x'])}, 'y': {lit(s['n']['y'])}}}"
    return f"{{'a': {lit(s['a'])}, 'b': {lit(s['b'])}, 'n': {n}}}::{STRUCT}"


def build(con, name, rows):
    """Database `name`: base is snapshot 1, ours main (snapshot 2), theirs branch 'theirs' (snapshot 3)."""
    three_way_database(con, name, f"k INTEGER PRIMARY KEY, s {STRUCT}, v INTEGER",
                       lambda i: [f"({k}, {sql_struct(side[i][0])}, {side[i][1]})"
                                  for k, side in rows.items() if side[i] is not ABSENT])


def everything(con, repository):
    """What a refusal must leave as it was: the catalog's view and every byte of the repository."""
    return repository_state(con), tree_fingerprint(repository)


def conflicts_reported(con, name, mode):
    return sorted(con.execute(
        "SELECT c.key[1].integer_value, c.kind, c.columns FROM (SELECT unnest(conflict_details) AS c FROM "
        f"differential_merge_branch_preview('{name}', 'main', 'theirs', nested => '{mode}', "
        "conflict_limit => 1000))").fetchall())


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("mode", ["fields", "whole"])
def test_merges_exactly_as_the_reference_model(con, repository, seed, mode):
    rows = history(seed)
    decisions = {k: decide(*sides, mode) for k, sides in rows.items()}
    expected_conflicts = sorted((k, d[1], d[2]) for k, d in decisions.items() if d and d[0] == "conflict")
    # The random histories reach every kind of decision, or the comparison proves less than it claims.
    kinds = {d[1] if d[0] == "conflict" else d[0] for d in decisions.values() if d}
    assert kinds == {"row", "absent", "cell", "insert_insert", "delete_update"}, kinds
    # ... and, field by field, rows whose merged STRUCT is neither side's: the two modes must disagree there.
    combined = [k for k, d in decisions.items() if d and d[0] == "row" and rows[k][0] is not ABSENT
                and d[1][0] not in (rows[k][1][0], rows[k][2][0])]
    assert (len(combined) > 0) == (mode == "fields"), combined

    name = f"all_{mode}_{seed}"
    build(con, name, rows)
    assert conflicts_reported(con, name, mode) == expected_conflicts
    if mode == "fields":
        # Conflicts name fields at every depth, and whole STRUCTs where a side's value is NULL.
        paths = {p for _, kind, columns in expected_conflicts if kind == "cell" for p in columns}
        assert "s" in paths and paths & {"s.a", "s.b"} and paths & {"s.n.x", "s.n.y"}, paths
    before = everything(con, repository)
    refused(con, f"SELECT * FROM differential_merge_branch('{name}', 'main', 'theirs', 'main', "
                 f"nested => '{mode}')", "merge_conflict")
    assert everything(con, repository) == before
    resolve_every_conflict(con, name, mode, rows, decisions, random.Random(seed * 31))

    clean = {k: rows[k] for k, d in decisions.items() if d and d[0] != "conflict"}
    name = f"clean_{mode}_{seed}"
    build(con, name, clean)
    assert con.execute(f"SELECT merge_action FROM differential_merge_branch('{name}', 'main', 'theirs', 'merged', "
                       f"nested => '{mode}')").fetchone()[0] == "created_branch"
    expected = {k: d[1] for k, d in decisions.items() if d and d[0] == "row"}
    assert merged_rows_differ(con, name, expected) == [], [(k, rows[k], decisions[k]) for k in expected]


def merged_rows_differ(con, name, expected):
    """The keys where branch 'merged' of `name` differs from `expected` ({key: (s, v)})."""
    con.execute(f"ATTACH 'differential:{name}' AS merged (BRANCH 'merged')")
    con.execute(f"CREATE OR REPLACE TEMP TABLE expected (k INTEGER, s {STRUCT}, v INTEGER)")
    if expected:
        con.execute("INSERT INTO expected VALUES " + ", ".join(
            f"({k}, {sql_struct(s)}, {'NULL' if v is None else v})" for k, (s, v) in expected.items()))
    wrong = con.execute(
        "SELECT coalesce(e.k, m.k) FROM expected e FULL OUTER JOIN merged.m m ON e.k = m.k "
        "WHERE e.k IS NULL OR m.k IS NULL OR e.s IS DISTINCT FROM m.s OR e.v IS DISTINCT FROM m.v ORDER BY 1"
    ).fetchall()
    con.execute("DETACH merged")
    return [k for (k,) in wrong]


def choose_parts(rng, columns):
    """A random _merge_columns covering every conflicting part: each named itself, by the STRUCT holding it,
    or by the whole column, with ours, theirs or custom."""
    choices = {}
    for path in columns:
        names = path.split(".")
        roll = rng.random()
        key = names[0] if roll < 0.2 else ".".join(names[:-1]) if roll < 0.35 and len(names) > 2 else path
        choices[key] = rng.choice(["ours", "theirs", "custom"])
    return choices


def resolve_every_conflict(con, name, mode, rows, decisions, rng):
    """Decides every conflict at random in a resolution table, merges into branch 'merged', and compares the
    result with the model's resolution of the same decisions."""
    con.execute(f"CREATE OR REPLACE TABLE memory.main.res (k INTEGER, s {STRUCT}, v INTEGER, "
                "_merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    expected = {k: d[1] for k, d in decisions.items() if d and d[0] == "row"}
    shape = SHAPE if mode == "fields" else None
    for k, d in decisions.items():
        if not d or d[0] != "conflict":
            continue
        b, o, t = rows[k]
        if d[1] == "cell":
            choices = choose_parts(rng, d[2])
            custom = (random_struct(rng), rng.choice([7, 8]))
            expected[k] = (resolved_cell(shape, "s", b[0], o[0], t[0], custom[0], choices),
                           resolved_cell(None, "v", b[1], o[1], t[1], custom[1], choices))
            columns = "map {" + ", ".join(f"'{p}': '{c}'" for p, c in choices.items()) + "}"
            con.execute(f"INSERT INTO memory.main.res VALUES ({k}, {sql_struct(custom[0])}, {custom[1]}, "
                        f"'cells', {columns})")
            continue
        action = rng.choice(["ours", "theirs", "delete"])
        side = {"ours": o, "theirs": t, "delete": ABSENT}[action]
        if side is ABSENT:
            expected.pop(k, None)
        else:
            expected[k] = side
        con.execute(f"INSERT INTO memory.main.res (k, _merge_action) VALUES ({k}, '{action}')")
    result = con.execute(f"SELECT merge_action FROM differential_merge_branch('{name}', 'main', 'theirs', 'merged', "
                         f"nested => '{mode}', resolution_tables => map {{'main.m': 'memory.main.res'}})").fetchone()
    assert result[0] == "created_branch"
    assert merged_rows_differ(con, name, expected) == []


def test_two_sides_changing_different_fields_both_land(con):
    """The specification's example: one side changes settings.theme, the other settings.language."""
    rows = {1: ({"a": 1, "b": "p", "n": {"x": 1, "y": 1}}, 1)}
    ours = ({"a": 2, "b": "p", "n": {"x": 1, "y": 1}}, 1)
    theirs = ({"a": 1, "b": "q", "n": {"x": 1, "y": 2}}, 1)
    build(con, "settings", {1: (rows[1], ours, theirs)})
    assert conflicts_reported(con, "settings", "whole") == [(1, "cell", ["s"])]
    assert con.execute("SELECT conflicts FROM differential_merge_branch_preview('settings', 'main', 'theirs', "
                       "nested => 'fields')").fetchall() == [(0,)]
    # The snapshot form takes the option too.
    for mode, conflicts in (("whole", 1), ("fields", 0)):
        assert con.execute("SELECT conflicts FROM differential_merge_snapshots_preview('settings', 1, 2, 3, "
                           f"nested => '{mode}')").fetchall() == [(conflicts,)]
    result = con.execute("SELECT snapshot_id, merge_action FROM differential_merge_branch('settings', 'main', "
                         "'theirs', 'main', nested => 'fields')").fetchall()
    assert result == [(4, "merged")]
    con.execute("ATTACH 'differential:settings' AS settings (READ_ONLY)")
    assert con.execute("SELECT s.a, s.b, s.n.x, s.n.y FROM settings.m").fetchall() == [(2, "q", 1, 2)]
    info = con.execute("SELECT commit_extra_info FROM differential_snapshots('settings') WHERE snapshot_id = 4").fetchone()
    assert '"nested": "fields"' in info[0]


def test_a_request_id_belongs_to_its_nested_option(con, repository):
    rows = {1: ({"a": 1, "b": "p", "n": None}, 1)}
    build(con, "req", {1: (rows[1], ({"a": 2, "b": "p", "n": None}, 1), ({"a": 1, "b": "q", "n": None}, 1))})
    refused(con, "SELECT * FROM differential_merge_branch('req', 'main', 'theirs', 'main', request_id => 'r1')",
            "merge_conflict")
    before = everything(con, repository)
    refused(con, "SELECT * FROM differential_merge_branch('req', 'main', 'theirs', 'main', request_id => 'r1', "
                 "nested => 'fields')", "merge_request_mismatch")
    assert everything(con, repository) == before


def test_an_unknown_nested_option_is_refused_before_anything_is_read(con, repository):
    build(con, "bad", {1: (({"a": 1, "b": "p", "n": None}, 1),) * 3})
    before = everything(con, repository)
    message = refused(con, "SELECT * FROM differential_merge_branch_preview('bad', 'main', 'theirs', "
                           "nested => 'deep')", "invalid_argument")
    assert "'whole' or 'fields'" in message
    assert everything(con, repository) == before


def test_conflicts_name_field_paths_and_resolve_field_by_field(con, repository):
    """The documented example: conflicts name fields by path (a dotted name quoted), each cell entry holds the
    field's values, and a resolution naming one field keeps the merged value of the others."""
    settings = 'STRUCT(theme VARCHAR, "lang.code" VARCHAR, size INTEGER)'
    con.execute("ATTACH 'differential:app' AS app")
    con.execute(f"CREATE TABLE app.users (id INTEGER PRIMARY KEY, settings {settings})")
    con.execute("INSERT INTO app.users VALUES (1, {'theme': 'plain', 'lang.code': 'en', 'size': 1})")
    con.execute("CALL differential_create_snapshot('app')")
    con.execute("CALL differential_create_branch('app', 'agent')")
    con.execute("ATTACH 'differential:app' AS agent (BRANCH 'agent')")
    con.execute("UPDATE agent.users SET settings = {'theme': 'light', 'lang.code': 'fr', 'size': 2}")
    con.execute("CALL differential_create_snapshot('agent')")
    con.execute("DETACH agent")
    con.execute("UPDATE app.users SET settings = {'theme': 'dark', 'lang.code': 'de', 'size': 1}")
    con.execute("CALL differential_create_snapshot('app')")
    con.execute("DETACH app")
    details = con.execute(
        "SELECT c.columns, [(x.column_name, x.base.text_value, x.ours.text_value, x.theirs.text_value) "
        "FOR x IN c.cells] FROM (SELECT unnest(conflict_details) AS c FROM "
        "differential_merge_branch_preview('app', 'main', 'agent', nested => 'fields'))").fetchall()
    assert details == [(["settings.theme", 'settings."lang.code"'],
                        [("settings.theme", "plain", "dark", "light"),
                         ('settings."lang.code"', "en", "de", "fr")])]
    con.execute(f"CREATE TABLE memory.main.decide (id INTEGER, settings {settings}, _merge_action VARCHAR, "
                "_merge_columns MAP(VARCHAR, VARCHAR))")
    merge = ("SELECT merge_action FROM differential_merge_branch('app', 'main', 'agent', 'main', nested => 'fields', "
             "resolution_tables => MAP {'main.users': 'memory.main.decide'})")
    # A key naming a field without a conflict is refused, and nothing changes.
    con.execute("INSERT INTO memory.main.decide VALUES (1, NULL, 'cells', MAP {'settings.theme': 'theirs', "
                "'settings.size': 'ours'})")
    before = everything(con, repository)
    refused(con, merge, "merge_resolution_invalid")
    # Only one of two conflicting fields decided: the conflict stays.
    con.execute("UPDATE memory.main.decide SET _merge_columns = MAP {'settings.theme': 'theirs'}")
    refused(con, merge, "merge_conflict")
    assert everything(con, repository) == before
    con.execute("UPDATE memory.main.decide SET _merge_columns = MAP {'settings.theme': 'theirs', 'settings.\"lang.code\"': "
                "'custom'}, settings = {'theme': NULL, 'lang.code': 'it', 'size': NULL}")
    assert con.execute(merge).fetchone()[0] == "merged"
    con.execute("ATTACH 'differential:app' AS app (READ_ONLY)")
    # theme from theirs, lang.code from the decision row, size merged (only theirs changed it).
    assert con.execute("SELECT settings FROM app.users").fetchall() == [
        ({"theme": "light", "lang.code": "it", "size": 2},)]
