"""What a conflict-free merge must hold, computed in plain SQL from its three inputs (never through the
extension's merge), and digests of table contents to compare it with a merge result."""

# A table's content as (row count, md5 of its rows as text in text order): rows are whole-row STRUCTs,
# so every column counts and the digest does not depend on a key's name.
DIGEST = "SELECT count(*), md5(coalesce(string_agg(r::VARCHAR, ',' ORDER BY r::VARCHAR), '')) FROM {rows}"


def table_digests(con, alias):
    """{table: (count, md5)} for every table of the attached database alias."""
    tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY 1", [alias]).fetchall()
    return {table: con.execute(DIGEST.format(rows=f'"{alias}"."{table}" AS r')).fetchone() for (table,) in tables}


def expected_digests(con, database, base, ours, theirs, key="id"):
    """{table: (count, md5)} of the merge of snapshots ours and theirs of `database` over base, for every
    table main has now (the histories using this add or drop none). Per key and whole row: a side
    equal to the base takes the other side's row (or its absence), and equal sides keep it. Meant for
    histories where no row changes differently on both sides; a row that does raises an error
    instead of guessing a cell-level decision."""
    con.execute(f"ATTACH 'differential:{database}' AS expected_inputs (READ_ONLY)")
    try:
        out = {}
        tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'expected_inputs' "
                             "ORDER BY 1").fetchall()
        for (table,) in tables:
            side = f'(SELECT r."{key}" AS k, r FROM expected_inputs."{table}" AS r AT (VERSION => {{v}}))'
            merged = (f"(WITH b AS {side.format(v=base)}, o AS {side.format(v=ours)}, t AS {side.format(v=theirs)} "
                      "SELECT CASE WHEN o.r IS NOT DISTINCT FROM b.r THEN t.r "
                      "            WHEN t.r IS NOT DISTINCT FROM b.r OR o.r IS NOT DISTINCT FROM t.r THEN o.r "
                      "            ELSE error('key ' || k::VARCHAR || ' changed differently on both sides') END AS r "
                      "FROM b FULL JOIN o USING (k) FULL JOIN t USING (k)) AS m WHERE r IS NOT NULL")
            out[table] = con.execute(DIGEST.format(rows=merged)).fetchone()
        return out
    finally:
        con.execute("DETACH expected_inputs")
