"""Helpers of the remote read tests: a source database made by the wheel alone, the queries compared against it, and
the store an export lives in (a file:// directory, or a versitygw bucket written through its posix directory)."""
import pathlib
import random
import sys

import duckdb

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from export_writer import write_export  # noqa: E402


def make_source(path, rows=300_000):
    """A native database of several MB (so its data spans many chunks and packs) with a few types. Its values are
    salted: chunks are content-addressed and the process keeps verified chunks in memory, so two tests must not
    share chunks (a damaged copy would be answered from the intact one's cache)."""
    salt = random.randrange(1, 1 << 30)
    con = duckdb.connect(str(path))
    con.execute(
        f"""CREATE TABLE items AS SELECT range AS id, 'item-' || (range % 1000) AS name,
            (range * 7919 + {salt}) % 100003 AS price, DATE '2026-01-01' + (range % 365)::INTEGER AS day
            FROM range({rows})"""
    )
    con.execute("CREATE TABLE small AS SELECT range AS k, range * 2 AS v FROM range(10)")
    con.execute("CREATE VIEW expensive AS SELECT * FROM items WHERE price > 100000")
    con.execute("CHECKPOINT")
    con.close()
    return path


QUERIES = [
    "SELECT count(*), sum(id), sum(price), min(day), max(day) FROM items",
    "SELECT name, count(*), sum(price) FROM items GROUP BY name ORDER BY name LIMIT 20",
    "SELECT * FROM small ORDER BY k",
    "SELECT count(*) FROM expensive",
]


def answers(con, schema):
    return [con.execute(q.replace("FROM items", f"FROM {schema}.items").replace("FROM small", f"FROM {schema}.small")
                        .replace("FROM expensive", f"FROM {schema}.expensive")).fetchall() for q in QUERIES]


class Store:
    """Where an export lives: `url` is its data path as users write it, `root` the directory holding its keys."""

    def __init__(self, kind, url, root, setup_sql=""):
        self.kind = kind
        self.url = url
        self.root = pathlib.Path(root)
        self.setup_sql = setup_sql

    def export(self, database_file, **kwargs):
        return write_export(self.root, database_file, **kwargs)

    def prepare(self, con):
        if self.setup_sql:
            con.execute(self.setup_sql)
        return con
