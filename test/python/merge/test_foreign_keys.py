"""Merges of tables with foreign keys, proven against a reference model.

Three tables form a chain: parent(id, v), child(id, pid -> parent), leaf(id, cid -> child). Each side of a
random history edits them as DuckDB lets it (each side satisfies its foreign keys on its own): deletes parents
with their children, inserts children of any parent it has, re-parents rows, updates values. The model (plain
Python over dicts, below) merges each table row by row and cell by cell, settles the row conflicts with random
decisions, then checks the foreign keys of the combined result and applies random foreign key decisions the way
the extension does: in rounds, each round applying the decisions that name a violating child row or a missing
parent row of the result as it stands, until no decision applies. The preview must report exactly the model's
violations, and the merge must build exactly the model's tables (DuckDB's own foreign key checks pass on the
staged result) or refuse with nothing changed."""
import random

import pytest

from differential_testing import refused, repository_state, scalar, tree_fingerprint
from differential_testing import whole_value as whole

TABLES = {  # name: (value columns, foreign key column or None, parent table)
    "parent": (("v",), None, None),
    "child": (("pid", "w"), "pid", "parent"),
    "leaf": (("cid", "u"), "cid", "child"),
}
DDL = [
    "CREATE TABLE {db}.parent (id INTEGER PRIMARY KEY, v INTEGER)",
    "CREATE TABLE {db}.child (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES parent(id), w INTEGER)",
    "CREATE TABLE {db}.leaf (id INTEGER PRIMARY KEY, cid INTEGER REFERENCES child(id), u INTEGER)",
]
EDGES = [(t, fk, p) for t, (_, fk, p) in TABLES.items() if fk]


# The model ---------------------------------------------------------------------------------------------------

def decide(b, o, t):
    """One key of one table: ('row', values), ('absent',), ('conflict', kind, columns) or None."""
    if b is None:
        if o is None and t is None:
            return None
        if o is None or t is None:
            return ("row", t if o is None else o)
        return ("row", o) if o == t else ("conflict", "insert_insert")
    if o is None and t is None:
        return ("absent",)
    if o is None or t is None:
        side = t if o is None else o
        return ("absent",) if side == b else ("conflict", "delete_update")
    cells = [whole(*cell) for cell in zip(b, o, t)]
    if any(clash for _, clash in cells):
        return ("conflict", "cell")
    return ("row", tuple(value for value, _ in cells))


def fk_of(table, values):
    columns, fk, _ = TABLES[table]
    return values[columns.index(fk)] if fk else None


def violations(state):
    """(child table, child key, parent table, missing parent key) of every row whose parent is missing."""
    return sorted((t, k, p, fk_of(t, row)) for t, _, p in EDGES for k, row in state[t].items()
                  if fk_of(t, row) is not None and fk_of(t, row) not in state[p])


def targets(state):
    """The keys a foreign key decision may name now: violating child rows, and missing parent rows."""
    found = set()
    for child, key, parent, missing in violations(state):
        found |= {(child, key), (parent, missing)}
    return found


def apply_decision(state, sides, table, key, decision):
    action, custom = decision
    ours, theirs = sides[1][table], sides[2][table]
    row = {"ours": ours.get(key), "theirs": theirs.get(key), "delete": None, "custom": custom}[action]
    if row is None:
        state[table].pop(key, None)
    else:
        state[table][key] = row


def settle_foreign_keys(state, sides, decisions):
    """The extension's rounds: returns the decisions that never applied."""
    pending = dict(decisions)
    while True:
        now = targets(state)
        applying = [item for item in pending if item in now]
        if not applying:
            return pending
        for item in applying:
            apply_decision(state, sides, *item, pending.pop(item))


# Random histories --------------------------------------------------------------------------------------------

def remove(rng, state, table, key):
    """Deletes a row; a row referencing it is deleted too or loses the reference, as DuckDB demands first."""
    state[table].pop(key, None)
    for t, _, p in EDGES:
        if p == table:
            for k in [k for k, row in state[t].items() if fk_of(t, row) == key]:
                if rng.random() < 0.5:
                    remove(rng, state, t, k)
                else:
                    columns = TABLES[t][0]
                    state[t][k] = tuple(None if c == TABLES[t][1] else row_value
                                        for c, row_value in zip(columns, state[t][k]))


def edit(rng, state, next_id):
    for _ in range(rng.randint(6, 14)):
        table = rng.choice(["parent", "child", "child", "leaf", "leaf"])
        columns, fk, parent = TABLES[table]
        keys = sorted(state[table])
        roll = rng.random()
        if roll < (0.4 if table == "parent" else 0.2) and keys:
            remove(rng, state, table, rng.choice(keys))
        elif roll < 0.55:
            parents = sorted(state[parent]) if parent else []
            if parent and not parents:
                continue
            # Both sides draw new keys from the same small range, so they sometimes insert the same key.
            key = rng.choice([next_id + rng.randint(0, 3), next_id + 10 + rng.randint(0, 40)])
            if key in state[table]:
                continue
            state[table][key] = tuple(rng.choice(parents) if c == fk else rng.randint(0, 3) for c in columns)
        elif keys:
            key = rng.choice(keys)
            row = list(state[table][key])
            column = rng.randrange(len(columns))
            if columns[column] == fk:
                row[column] = rng.choice(sorted(state[parent]) + [None])
            else:
                row[column] = rng.randint(0, 3)
            state[table][key] = tuple(row)


def history(seed):
    rng = random.Random(seed)
    base = {t: {} for t in TABLES}
    for key in range(1, 7):
        base["parent"][key] = (rng.randint(0, 3),)
    for key in range(1, 9):
        base["child"][key] = (rng.randint(1, 6), rng.randint(0, 3))
    for key in range(1, 7):
        base["leaf"][key] = (rng.randint(1, 8), rng.randint(0, 3))
    ours = {t: dict(rows) for t, rows in base.items()}
    theirs = {t: dict(rows) for t, rows in base.items()}
    edit(rng, ours, 100)
    edit(rng, theirs, 100)
    return base, ours, theirs


def row_decisions(rng, sides):
    """The model's merge of every table, with a random decision for each row conflict."""
    state, decisions = {t: {} for t in TABLES}, {}
    for table, (columns, _, _) in TABLES.items():
        for key in sorted(set().union(*(side[table] for side in sides))):
            b, o, t = (side[table].get(key) for side in sides)
            decided = decide(b, o, t)
            if decided and decided[0] == "row":
                state[table][key] = decided[1]
            elif decided and decided[0] == "conflict":
                if decided[1] == "cell":
                    choices = {c: rng.choice(["ours", "theirs"]) for c, (_, clash) in
                               zip(columns, (whole(*cell) for cell in zip(b, o, t))) if clash}
                    merged = tuple((o if choices.get(c) == "ours" else t)[i] if c in choices else whole(b[i], o[i], t[i])[0]
                                   for i, c in enumerate(columns))
                    decisions[(table, key)] = ("cells", choices)
                    state[table][key] = merged
                else:
                    action = rng.choice(["ours", "theirs", "delete"])
                    decisions[(table, key)] = (action, None)
                    row = {"ours": o, "theirs": t, "delete": None}[action]
                    if row is not None:
                        state[table][key] = row
    return state, decisions


def foreign_key_decisions(rng, state, sides, taken):
    """Random decisions for the violations, round by round; a round only names keys no earlier round could name,
    so the extension applies each round's decisions in that round too."""
    decisions, seen = {}, set()
    state = {t: dict(rows) for t, rows in state.items()}
    for _ in range(3):
        found = violations(state)
        fresh = targets(state) - seen
        seen |= targets(state)
        chosen = {}
        for child, key, parent, missing in found:
            roll = rng.random()
            if roll < 0.3 and (child, key) in fresh and (child, key) not in taken:
                columns, fk, p = TABLES[child]
                if rng.random() < 0.5:
                    chosen[(child, key)] = ("delete", None)
                elif rng.random() < 0.5:
                    chosen[(child, key)] = (rng.choice(["ours", "theirs"]), None)
                else:
                    options = sorted(state[p]) + [None]
                    chosen[(child, key)] = ("custom", tuple(rng.choice(options) if c == fk else 9 for c in columns))
            elif roll < 0.75 and (parent, missing) in fresh and (parent, missing) not in taken:
                has = [s for s, side in zip(("ours", "theirs"), sides[1:]) if missing in side[parent]]
                columns, fk, grand = TABLES[parent]
                if has and rng.random() < 0.8:
                    chosen[(parent, missing)] = (rng.choice(has), None)
                else:
                    options = sorted(state[grand]) if grand else []
                    chosen[(parent, missing)] = ("custom", tuple(
                        (rng.choice(options) if options else None) if c == fk else 8 for c in columns))
        for item, decision in sorted(chosen.items()):
            if item not in decisions:
                decisions[item] = decision
                taken.add(item)
        for item in [i for i in chosen if i in targets(state)]:
            apply_decision(state, sides, *item, decisions[item])
    return decisions


# The extension -----------------------------------------------------------------------------------------------

def literal(value):
    return "NULL" if value is None else str(value)


def build(con, name, sides):
    """Database `name`: the base is snapshot 1, ours main (snapshot 2), theirs branch 'theirs' (snapshot 3)."""
    con.execute(f"ATTACH 'differential:{name}' AS {name}")
    for ddl in DDL:
        con.execute(ddl.format(db=name))

    def load(target, state):
        for table in reversed(list(TABLES)):
            con.execute(f"DELETE FROM {target}.{table}")
        for table in TABLES:
            if state[table]:
                con.execute(f"INSERT INTO {target}.{table} VALUES " + ", ".join(
                    "(" + ", ".join(literal(v) for v in (k,) + row) + ")" for k, row in sorted(state[table].items())))

    load(name, sides[0])
    con.execute(f"CALL differential_create_snapshot('{name}')")
    con.execute(f"CALL differential_create_branch('{name}', 'theirs', snapshot => 1)")
    con.execute(f"ATTACH 'differential:{name}' AS {name}_theirs (BRANCH 'theirs')")
    load(f"{name}_theirs", sides[2])
    con.execute(f"CALL differential_create_snapshot('{name}_theirs')")
    con.execute(f"DETACH {name}_theirs")
    load(name, sides[1])
    con.execute(f"CALL differential_create_snapshot('{name}')")
    con.execute(f"DETACH {name}")


def resolution_tables(con, decisions):
    """One resolution table per table (memory.main.res_<table>) holding `decisions`; the mapping argument."""
    for table, (columns, _, _) in TABLES.items():
        con.execute(f"CREATE OR REPLACE TABLE memory.main.res_{table} (id INTEGER, " +
                    ", ".join(f"{c} INTEGER" for c in columns) +
                    ", _merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    for (table, key), (action, extra) in sorted(decisions.items()):
        columns = TABLES[table][0]
        values = extra if action == "custom" else (None,) * len(columns)
        mapped = ("map {" + ", ".join(f"'{c}': '{s}'" for c, s in extra.items()) + "}") if action == "cells" else "NULL"
        con.execute(f"INSERT INTO memory.main.res_{table} VALUES ({key}, " +
                    ", ".join(literal(v) for v in values) + f", '{action}', {mapped})")
    return "map {" + ", ".join(f"'main.{t}': 'memory.main.res_{t}'" for t in TABLES) + "}"


def reported_violations(con, name, mapping):
    return sorted(con.execute(
        "SELECT table_name, c.key[1].integer_value, c.parent_table, c.parent_key[1].integer_value FROM ("
        "SELECT table_name, unnest(conflict_details) AS c FROM differential_merge_branch_preview("
        f"'{name}', 'main', 'theirs', resolution_tables => {mapping}, conflict_limit => 1000)) "
        "WHERE c.kind = 'foreign_key_violation'").fetchall())


def merged_tables(con, name, branch):
    con.execute(f"ATTACH 'differential:{name}' AS merged (BRANCH '{branch}', READ_ONLY)")
    state = {t: {row[0]: tuple(row[1:]) for row in con.execute(f"SELECT * FROM merged.{t}").fetchall()}
             for t in TABLES}
    con.execute("DETACH merged")
    return state


# The tests ---------------------------------------------------------------------------------------------------

SEEDS = range(1, 41)


def test_the_random_histories_reach_every_case():
    """The comparison below proves as much as the histories reach: violations of both foreign keys, each kind of
    decision, decisions applied in a later round, merges left with violations and merges that succeed."""
    reached = set()
    for seed in SEEDS:
        sides = history(seed)
        rng = random.Random(seed * 7)
        state, decisions = row_decisions(rng, sides)
        first = violations(state)
        reached |= {("violates", child) for child, _, _, _ in first}
        fk = foreign_key_decisions(rng, state, sides, set(decisions))
        reached |= {("decides", table, action) for (table, _), (action, _) in fk.items()}
        if any(item not in targets(state) for item in fk):
            reached.add("later round")
        settle_foreign_keys(state, sides, fk)
        reached.add("left" if violations(state) else "clean")
    for wanted in [("violates", "child"), ("violates", "leaf"), ("decides", "parent", "ours"),
                   ("decides", "parent", "theirs"), ("decides", "child", "delete"), ("decides", "child", "custom"),
                   ("decides", "parent", "custom"), "later round", "left", "clean"]:
        assert wanted in reached, (wanted, reached)


@pytest.mark.parametrize("seed", SEEDS)
def test_merges_exactly_as_the_reference_model(con, repository, seed):
    sides = history(seed)
    rng = random.Random(seed * 7)
    state, decisions = row_decisions(rng, sides)
    name = f"fk{seed}"
    build(con, name, sides)

    # With the row conflicts decided, the preview reports the model's violations of the combined result.
    mapping = resolution_tables(con, decisions)
    assert reported_violations(con, name, mapping) == violations(state)

    fk = foreign_key_decisions(rng, state, sides, set(decisions))
    left = settle_foreign_keys(state, sides, fk)
    assert left == {}
    mapping = resolution_tables(con, {**decisions, **fk})
    remaining = violations(state)
    assert reported_violations(con, name, mapping) == remaining
    merge = (f"SELECT merge_action FROM differential_merge_branch('{name}', 'main', 'theirs', 'merged', "
             f"resolution_tables => {mapping})")
    if remaining:
        before = repository_state(con), tree_fingerprint(repository)
        refused(con, merge, "merge_conflict")
        assert (repository_state(con), tree_fingerprint(repository)) == before
    else:
        assert scalar(con, merge) == "created_branch"
        assert merged_tables(con, name, "merged") == state


def spec_shop(con):
    """Orders reference customers; main deletes customer 2 (and its one order), the agent's branch adds an order
    for customer 2 and re-parents order 11 to customer 3, which main also deletes."""
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.customers (id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE shop.orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), "
                "amount INTEGER)")
    con.execute("INSERT INTO shop.customers VALUES (1, 'ada'), (2, 'bob'), (3, 'cy')")
    con.execute("INSERT INTO shop.orders VALUES (10, 1, 5), (11, 1, 7), (12, 2, 9)")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'agent')")
    con.execute("ATTACH 'differential:shop' AS agent (BRANCH 'agent')")
    con.execute("INSERT INTO agent.orders VALUES (13, 2, 4)")
    con.execute("UPDATE agent.orders SET customer_id = 3 WHERE id = 11")
    con.execute("CALL differential_create_snapshot('agent')")
    con.execute("DELETE FROM shop.orders WHERE id = 12")
    con.execute("DELETE FROM shop.customers WHERE id IN (2, 3)")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("DETACH agent")
    con.execute("DETACH shop")


SHOP_COLUMNS = {"customers": "id INTEGER, name VARCHAR", "orders": "id INTEGER, customer_id INTEGER, amount INTEGER"}


def decision_table(con, name, table, rows):
    con.execute(f"CREATE OR REPLACE TABLE memory.main.{name} ({SHOP_COLUMNS[table]}, _merge_action VARCHAR, "
                "_merge_columns MAP(VARCHAR, VARCHAR))")
    for row in rows:
        con.execute(f"INSERT INTO memory.main.{name} VALUES {row}")


def test_a_deleted_parent_the_other_side_references_is_a_typed_conflict(con, repository):
    spec_shop(con)
    rows = con.execute("SELECT table_name, conflicts, unnest(conflict_details) FROM "
                       "differential_merge_branch_preview('shop', 'main', 'agent') ORDER BY table_name").fetchall()
    assert [(name, conflicts) for name, conflicts, _ in rows] == [("orders", 2), ("orders", 2)]
    eleven, thirteen = (detail for _, _, detail in rows)
    assert (eleven["kind"], eleven["columns"], eleven["parent_table"]) == (
        "foreign_key_violation", ["customer_id"], "customers")
    assert eleven["key"][0]["integer_value"] == 11 and eleven["parent_key"][0]["integer_value"] == 3
    assert eleven["parent_key"][0]["column_name"] == "id"
    (cell,) = eleven["cells"]
    assert [cell[s]["integer_value"] for s in ("base", "ours", "theirs")] == [1, 1, 3]
    assert (thirteen["in_base"], thirteen["in_ours"], thirteen["in_theirs"]) == (False, False, True)
    assert thirteen["parent_key"][0]["integer_value"] == 2

    before = repository_state(con), tree_fingerprint(repository)
    message = refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'agent', 'main')", "merge_conflict")
    assert "2 conflicting rows" in message
    assert (repository_state(con), tree_fingerprint(repository)) == before

    # Restore customer 3 as the agent's branch has it; drop order 13.
    decision_table(con, "keep_customers", "customers", ["(3, NULL, 'theirs', NULL)"])
    decision_table(con, "drop_orders", "orders", ["(13, NULL, NULL, 'delete', NULL)"])
    mapping = "map {'main.customers': 'memory.main.keep_customers', 'main.orders': 'memory.main.drop_orders'}"
    preview = con.execute("SELECT table_name, conflicts, resolved_conflicts FROM differential_merge_branch_preview("
                          f"'shop', 'main', 'agent', resolution_tables => {mapping}) ORDER BY table_name").fetchall()
    assert preview == [("customers", 0, 1), ("orders", 0, 1)]
    merged = con.execute(f"SELECT merge_action FROM differential_merge_branch('shop', 'main', 'agent', 'main', "
                         f"resolution_tables => {mapping})").fetchone()
    assert merged[0] == "merged"
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("SELECT * FROM shop.customers ORDER BY id").fetchall() == [(1, "ada"), (3, "cy")]
    assert con.execute("SELECT * FROM shop.orders ORDER BY id").fetchall() == [(10, 1, 5), (11, 3, 7)]


@pytest.mark.parametrize("table, row, problem", [
    ("orders", "(10, NULL, NULL, 'delete', NULL)", "matches no conflict"),
    ("orders", "(13, NULL, NULL, 'cells', map {'customer_id': 'ours'})", "does not suit its conflict"),
    ("customers", "(2, NULL, 'ours', NULL)", "from a side that does not have it"),
    ("customers", "(3, NULL, 'delete', NULL)", "from a side that does not have it"),
])
def test_foreign_key_decisions_that_do_not_fit_change_nothing(con, repository, table, row, problem):
    spec_shop(con)
    decision_table(con, "d", table, [row])
    before = repository_state(con), tree_fingerprint(repository)
    message = refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'agent', 'main', "
                           f"resolution_tables => map {{'main.{table}': 'memory.main.d'}})", "merge_resolution_invalid")
    assert problem in message
    assert (repository_state(con), tree_fingerprint(repository)) == before


def test_dropping_a_child_uncovers_its_own_children_for_the_next_round(con):
    """Main deletes order 12 and its customer 2; the branch adds a line to order 12. The line is the violation;
    restoring order 12 (as the branch has it) uncovers that the order needs customer 2, which the next round's
    decision restores too."""
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.customers (id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE shop.orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id))")
    con.execute("CREATE TABLE shop.lines (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(id))")
    con.execute("INSERT INTO shop.customers VALUES (1, 'ada'), (2, 'bob')")
    con.execute("INSERT INTO shop.orders VALUES (11, 1), (12, 2)")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'agent')")
    con.execute("ATTACH 'differential:shop' AS agent (BRANCH 'agent')")
    con.execute("INSERT INTO agent.lines VALUES (100, 12)")
    con.execute("CALL differential_create_snapshot('agent')")
    con.execute("DELETE FROM shop.orders WHERE id = 12")
    con.execute("DELETE FROM shop.customers WHERE id = 2")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("DETACH agent")
    con.execute("DETACH shop")
    details = con.execute("SELECT c.key[1].integer_value, c.parent_table, c.parent_key[1].integer_value FROM "
                          "(SELECT unnest(conflict_details) AS c FROM differential_merge_branch_preview("
                          "'shop', 'main', 'agent'))").fetchall()
    assert details == [(100, "orders", 12)]
    con.execute("CREATE TABLE memory.main.orders_d (id INTEGER, customer_id INTEGER, _merge_action VARCHAR, "
                "_merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO memory.main.orders_d VALUES (12, NULL, 'theirs', NULL)")
    con.execute("CREATE TABLE memory.main.customers_d (id INTEGER, name VARCHAR, _merge_action VARCHAR, "
                "_merge_columns MAP(VARCHAR, VARCHAR))")
    mapping = "map {'main.orders': 'memory.main.orders_d', 'main.customers': 'memory.main.customers_d'}"
    # Restoring the order alone leaves it without its customer: a violation of the next round.
    details = con.execute("SELECT table_name, c.key[1].integer_value, c.parent_table, c.parent_key[1].integer_value FROM "
                          "(SELECT table_name, unnest(conflict_details) AS c FROM differential_merge_branch_preview("
                          f"'shop', 'main', 'agent', resolution_tables => {mapping}))").fetchall()
    assert details == [("orders", 12, "customers", 2)]
    con.execute("INSERT INTO memory.main.customers_d VALUES (2, NULL, 'theirs', NULL)")
    result = con.execute(f"SELECT merge_action FROM differential_merge_branch('shop', 'main', 'agent', 'main', "
                         f"resolution_tables => {mapping})").fetchone()
    assert result == ("merged",)
    con.execute("ATTACH 'differential:shop' AS shop")
    assert con.execute("SELECT * FROM shop.customers ORDER BY id").fetchall() == [(1, "ada"), (2, "bob")]
    assert con.execute("SELECT * FROM shop.orders ORDER BY id").fetchall() == [(11, 1), (12, 2)]
    assert con.execute("SELECT * FROM shop.lines").fetchall() == [(100, 12)]


@pytest.mark.parametrize("ddl, rows, why", [
    (["CREATE TABLE db.t (id INTEGER PRIMARY KEY, up INTEGER REFERENCES t(id))"], "INSERT INTO {db}.t VALUES ({n}, NULL)",
     "references the table itself"),
    (["CREATE TABLE db.p (id INTEGER PRIMARY KEY, code INTEGER UNIQUE)",
      "CREATE TABLE db.t (id INTEGER PRIMARY KEY, code INTEGER REFERENCES p(code))"],
     "INSERT INTO {db}.p VALUES ({n}, {n})", "does not reference its primary key"),
    (["CREATE TABLE db.p (id INTEGER PRIMARY KEY)", "CREATE TABLE db.t (pid INTEGER REFERENCES p(id))"],
     "INSERT INTO {db}.p VALUES ({n})", "no primary key"),
])
def test_foreign_keys_merges_cannot_order_are_refused(con, repository, ddl, rows, why):
    con.execute("ATTACH 'differential:db' AS db")
    for statement in ddl:
        con.execute(statement)
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CALL differential_create_branch('db', 'b')")
    con.execute("ATTACH 'differential:db' AS b (BRANCH 'b')")
    for db, n in (("b", 1), ("db", 2)):
        con.execute(rows.format(db=db, n=n))
        con.execute(f"CALL differential_create_snapshot('{db}')")
    before = repository_state(con), tree_fingerprint(repository)
    message = refused(con, "SELECT * FROM differential_merge_branch_preview('db', 'main', 'b')", "merge_unsupported")
    assert why in message
    assert (repository_state(con), tree_fingerprint(repository)) == before


def test_a_composite_foreign_key_partly_in_the_childs_key(con, repository):
    """Shipments are keyed by (order_no, region); lines by (order_no, line), and reference their shipment by
    (order_no, region), one column of their key and one other. Main deletes shipment (1, 'eu'); the branch adds a
    line for it. The violation names the parent key by the parent's columns; restoring the shipment merges."""
    con.execute("ATTACH 'differential:ship' AS ship")
    con.execute("CREATE TABLE ship.shipments (region VARCHAR, order_no INTEGER, carrier VARCHAR, "
                "PRIMARY KEY (order_no, region))")
    con.execute("CREATE TABLE ship.lines (region VARCHAR, line INTEGER, order_no INTEGER, qty INTEGER, "
                "PRIMARY KEY (order_no, line), FOREIGN KEY (order_no, region) REFERENCES shipments (order_no, region))")
    con.execute("INSERT INTO ship.shipments VALUES ('eu', 1, 'dhl'), ('us', 1, 'ups')")
    con.execute("INSERT INTO ship.lines VALUES ('us', 1, 1, 5)")
    con.execute("CALL differential_create_snapshot('ship')")
    con.execute("CALL differential_create_branch('ship', 'agent')")
    con.execute("ATTACH 'differential:ship' AS agent (BRANCH 'agent')")
    con.execute("INSERT INTO agent.lines VALUES ('eu', 2, 1, 3)")
    con.execute("CALL differential_create_snapshot('agent')")
    con.execute("DELETE FROM ship.shipments WHERE region = 'eu'")
    con.execute("CALL differential_create_snapshot('ship')")
    con.execute("DETACH agent")
    con.execute("DETACH ship")
    (detail,) = con.execute("SELECT unnest(conflict_details) FROM differential_merge_branch_preview("
                            "'ship', 'main', 'agent') WHERE table_name = 'lines'").fetchone()
    assert [(k["column_name"], k["text_value"]) for k in detail["key"]] == [("order_no", "1"), ("line", "2")]
    assert detail["columns"] == ["order_no", "region"]
    assert [(k["column_name"], k["text_value"]) for k in detail["parent_key"]] == [("order_no", "1"), ("region", "eu")]
    assert [(c["column_name"], c["theirs"]["text_value"], c["ours"]["is_null"]) for c in detail["cells"]] == [
        ("order_no", "1", True), ("region", "eu", True)]
    before = repository_state(con), tree_fingerprint(repository)
    refused(con, "SELECT * FROM differential_merge_branch('ship', 'main', 'agent', 'main')", "merge_conflict")
    assert (repository_state(con), tree_fingerprint(repository)) == before
    con.execute("CREATE TABLE memory.main.back (region VARCHAR, order_no INTEGER, carrier VARCHAR, "
                "_merge_action VARCHAR, _merge_columns MAP(VARCHAR, VARCHAR))")
    con.execute("INSERT INTO memory.main.back VALUES ('eu', 1, NULL, 'theirs', NULL)")
    assert con.execute("SELECT merge_action FROM differential_merge_branch('ship', 'main', 'agent', 'main', "
                       "resolution_tables => map {'main.shipments': 'memory.main.back'})").fetchone() == ("merged",)
    con.execute("ATTACH 'differential:ship' AS ship (READ_ONLY)")
    assert con.execute("SELECT l.line, s.carrier FROM ship.lines l JOIN ship.shipments s "
                       "USING (order_no, region) ORDER BY l.line").fetchall() == [(1, "ups"), (2, "dhl")]
