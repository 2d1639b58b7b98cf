"""A small TPC-H-like database for `make serve`: regions, nations, customers and orders with primary keys."""
from __future__ import annotations

import pathlib

import duckdb

from .engine import literal

TABLES = [
    "CREATE TABLE tpch.region (r_regionkey INTEGER PRIMARY KEY, r_name VARCHAR, r_comment VARCHAR)",
    "INSERT INTO tpch.region SELECT i, ['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'][i + 1],"
    " 'region ' || i FROM range(5) t(i)",
    "CREATE TABLE tpch.nation (n_nationkey INTEGER PRIMARY KEY, n_name VARCHAR, n_regionkey INTEGER,"
    " n_comment VARCHAR)",
    "INSERT INTO tpch.nation SELECT i, 'NATION ' || i, i % 5, 'nation comment ' || i FROM range(25) t(i)",
    "CREATE TABLE tpch.customer (c_custkey INTEGER PRIMARY KEY, c_name VARCHAR, c_nationkey INTEGER,"
    " c_acctbal DECIMAL(12, 2), c_mktsegment VARCHAR)",
    "INSERT INTO tpch.customer SELECT i, 'Customer#' || lpad(i::VARCHAR, 9, '0'), i % 25,"
    " ((i * 7919) % 1000000) / 100.0 - 999.99, ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'HOUSEHOLD',"
    " 'MACHINERY'][i % 5 + 1] FROM range(1, 1501) t(i)",
    "CREATE TABLE tpch.orders (o_orderkey BIGINT PRIMARY KEY, o_custkey INTEGER, o_orderstatus VARCHAR,"
    " o_totalprice DECIMAL(12, 2), o_orderdate DATE)",
    "INSERT INTO tpch.orders SELECT i, i % 1500 + 1, ['F', 'O', 'P'][i % 3 + 1], ((i * 104729) % 50000000) / 100.0,"
    " DATE '1992-01-01' + INTERVAL (i % 2400) DAY FROM range(1, 15001) t(i)",
]


def seed_tpch_like(repository: pathlib.Path, extension: pathlib.Path) -> None:
    """Creates database `tpch` with a first snapshot; refuses a repository that already has one."""
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    try:
        con.execute(f"LOAD {literal(str(extension))}")
        con.execute(f"SET differential_repository = {literal(str(repository))}")
        existing = [r[0] for r in con.execute("SELECT database_name FROM differential_databases()").fetchall()]
        if "tpch" in existing:
            return
        con.execute("ATTACH 'differential:tpch' AS tpch")
        for statement in TABLES:
            con.execute(statement)
        con.execute("CALL differential_create_snapshot('tpch', name => 'generated', author => 'make serve')")
        con.execute("DETACH tpch")
    finally:
        con.close()
