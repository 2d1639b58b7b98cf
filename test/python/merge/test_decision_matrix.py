"""The full cell and row decision matrix of the 1.1 specification, table-driven, for several types.

Every combination of absent / present-with-value on base, ours and theirs is a row. The
non-conflicting ones are merged in one run and compared with the expected result inside DuckDB
(IS DISTINCT FROM, so NULL, NaN and -0.0 compare as DuckDB compares them); the conflicting ones
are merged in a second run, which must refuse with exactly their number and write nothing."""
import itertools

import pytest

from differential_testing import refused, repository_state, three_way_database

ABSENT = object()
NULL = "NULL"

TYPES = {
    "INTEGER": ["1", "2", "3"],
    "DOUBLE": ["'NaN'::DOUBLE", "-0.0::DOUBLE", "2.5::DOUBLE"],
    "VARCHAR": ["'a'", "''", "'b'"],
    "DECIMAL(10, 2)": ["1.10", "1.20", "0.00"],
    "DATE": ["DATE '2026-01-01'", "DATE '2026-01-02'", "DATE '1970-01-01'"],
    "INTEGER[]": ["[1]", "[]", "[1, NULL]"],
    "STRUCT(a INTEGER, b VARCHAR)": ["{'a': 1, 'b': 'x'}", "{'a': 1, 'b': NULL}", "{'a': NULL, 'b': 'x'}"],
    # The rest of the supported scope table: every other type a merge compares.
    "BOOLEAN": ["true", "false"],
    "TINYINT": ["-1", "0", "127"],
    "SMALLINT": ["-1", "0", "32767"],
    "BIGINT": ["-1", "0", "9223372036854775807"],
    "HUGEINT": ["-1", "0", "170141183460469231731687303715884105727"],
    "UTINYINT": ["0", "1", "255"],
    "USMALLINT": ["0", "1", "65535"],
    "UINTEGER": ["0", "1", "4294967295"],
    "UBIGINT": ["0", "1", "18446744073709551615"],
    "UHUGEINT": ["0", "1", "340282366920938463463374607431768211455"],
    "FLOAT": ["'NaN'::FLOAT", "-0.0::FLOAT", "2.5::FLOAT"],
    "DECIMAL(38, 10)": ["1.5", "-1.5", "0"],
    "BLOB": ["'\\x00'::BLOB", "''::BLOB", "'a'::BLOB"],
    "UUID": ["'00000000-0000-0000-0000-000000000001'::UUID", "'00000000-0000-0000-0000-000000000002'::UUID",
             "'ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID"],
    "TIME": ["TIME '00:00:00'", "TIME '12:30:00'", "TIME '23:59:59.999999'"],
    "TIMETZ": ["'12:00:00+00'::TIMETZ", "'12:00:00+01'::TIMETZ", "'00:00:00+00'::TIMETZ"],
    "TIMESTAMP": ["TIMESTAMP '2026-01-01 00:00:00'", "TIMESTAMP '2026-01-01 00:00:01'", "TIMESTAMP '1970-01-01'"],
    "TIMESTAMP_S": ["'2026-01-01 00:00:00'::TIMESTAMP_S", "'2026-01-01 00:00:01'::TIMESTAMP_S", "'1970-01-01'::TIMESTAMP_S"],
    "TIMESTAMP_MS": ["'2026-01-01 00:00:00'::TIMESTAMP_MS", "'2026-01-01 00:00:00.001'::TIMESTAMP_MS",
                     "'1970-01-01'::TIMESTAMP_MS"],
    "TIMESTAMP_NS": ["'2026-01-01 00:00:00'::TIMESTAMP_NS", "'2026-01-01 00:00:00.000000001'::TIMESTAMP_NS",
                     "'1970-01-01'::TIMESTAMP_NS"],
    "TIMESTAMPTZ": ["'2026-01-01 00:00:00+00'::TIMESTAMPTZ", "'2026-01-01 00:00:00+01'::TIMESTAMPTZ",
                    "'1970-01-01 00:00:00+00'::TIMESTAMPTZ"],
    "INTERVAL": ["INTERVAL 1 DAY", "INTERVAL 2 MONTHS", "INTERVAL 0 SECONDS"],
    "MAP(VARCHAR, INTEGER)": ["MAP {'a': 1}", "MAP {}", "MAP {'a': NULL}"],
    "INTEGER[2]": ["[1, 2]::INTEGER[2]", "[1, NULL]::INTEGER[2]", "[2, 1]::INTEGER[2]"],
    "UNION(i INTEGER, s VARCHAR)": ["union_value(i := 1)::UNION(i INTEGER, s VARCHAR)",
                                    "union_value(s := '1')::UNION(i INTEGER, s VARCHAR)",
                                    "union_value(i := 2)::UNION(i INTEGER, s VARCHAR)"],
    "VARCHAR[][]": ["[['a']]", "[[]]", "[NULL]"],
}


def same(x, y):
    return x == y  # literals are distinct unless identical; equal-but-different spellings are added below


def decide(b, o, t):
    """Expected result for one key: ('row', value), ('absent',), or ('conflict', kind)."""
    if b is ABSENT:
        if o is ABSENT and t is ABSENT:
            return None
        if o is ABSENT:
            return ("row", t)
        if t is ABSENT:
            return ("row", o)
        return ("row", o) if same(o, t) else ("conflict", "insert_insert")
    if o is ABSENT and t is ABSENT:
        return ("absent",)
    if o is ABSENT:
        return ("absent",) if same(t, b) else ("conflict", "delete_update")
    if t is ABSENT:
        return ("absent",) if same(o, b) else ("conflict", "delete_update")
    if same(o, t):
        return ("row", o)
    if same(o, b):
        return ("row", t)
    if same(t, b):
        return ("row", o)
    return ("conflict", "cell")


def scenarios(values):
    domain = [ABSENT, NULL] + values
    out = []
    for b, o, t in itertools.product(domain, repeat=3):
        decision = decide(b, o, t)
        if decision is not None:
            out.append((b, o, t, decision))
    return out


def build(con, name, column_type, rows):
    """Database `name`: base on snapshot 1, ours on main (snapshot 2), theirs on branch 'theirs' (3)."""
    three_way_database(con, name, f"k INTEGER PRIMARY KEY, v {column_type}",
                       lambda i: [f"({k}, {side[i]})" for k, side in rows if side[i] is not ABSENT])


@pytest.mark.parametrize("column_type", list(TYPES))
def test_decision_matrix(con, column_type):
    values = TYPES[column_type]
    cases = scenarios(values)
    if column_type == "DOUBLE":
        # Equal by IS DISTINCT FROM though spelled differently: 0.0 and -0.0, so ours is "unchanged".
        cases.append(("-0.0::DOUBLE", "0.0::DOUBLE", "2.5::DOUBLE", ("row", "2.5::DOUBLE")))
    clean = [(b, o, t, d) for b, o, t, d in cases if d[0] != "conflict"]
    conflicting = [(b, o, t, d) for b, o, t, d in cases if d[0] == "conflict"]
    assert {d[1] for *_, d in conflicting} == {"cell", "insert_insert", "delete_update"}

    build(con, "clean", column_type, [(k, (b, o, t)) for k, (b, o, t, _) in enumerate(clean)])
    assert con.execute("SELECT merge_action FROM differential_merge_branch('clean', 'main', 'theirs', 'merged')").fetchone()[0] == "created_branch"
    con.execute("ATTACH 'differential:clean' AS merged (BRANCH 'merged')")
    expected = [f"({k}, {d[1]})" for k, (_, _, _, d) in enumerate(clean) if d[0] == "row"]
    con.execute(f"CREATE TEMP TABLE expected (k INTEGER, v {column_type})")
    con.execute("INSERT INTO expected VALUES " + ", ".join(expected))
    wrong = con.execute(
        "SELECT coalesce(e.k, m.k) FROM expected e FULL OUTER JOIN merged.m m ON e.k = m.k "
        "WHERE e.k IS NULL OR m.k IS NULL OR e.v IS DISTINCT FROM m.v ORDER BY 1"
    ).fetchall()
    assert wrong == [], [clean[k] for (k,) in wrong]

    build(con, "conflicted", column_type, [(k, (b, o, t)) for k, (b, o, t, _) in enumerate(conflicting)])
    before = repository_state(con)
    message = refused(con, "SELECT * FROM differential_merge_branch('conflicted', 'main', 'theirs', 'main')", "merge_conflict")
    assert message.split("] ")[1].startswith(f"{len(conflicting)} conflicting rows"), message
    assert repository_state(con) == before
