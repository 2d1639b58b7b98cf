"""One step of the fault-injection tests, run in its own process: `python fault_steps.py <repository> <step>`.
Prints {"error": <DuckDB error message or null>, "result": ...} as JSON. A DIFFERENTIAL_FAULT_POINT in the
environment applies to this process only, so every step after the faulted one starts clean."""
import json
import sys

import duckdb

from differential_testing import connect, repository_state

STEPS = {}


def step(fn):
    STEPS[fn.__name__] = fn
    return fn


def table_rows(con, alias, at=None):
    version = f" AT (VERSION => {at})" if at is not None else ""
    return con.execute(f"SELECT id, name FROM {alias}.items{version} ORDER BY id").fetchall()


@step
def make_shop(con):
    """The data every test must find unchanged: a branch, two snapshots, committed rows on main and dev."""
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("CREATE TABLE s.items (id INTEGER, name VARCHAR)")
    con.execute("INSERT INTO s.items SELECT range, 'item ' || range FROM range(2000)")
    con.execute("CALL differential_create_snapshot('s')")
    con.execute("UPDATE s.items SET name = name || ' v2' WHERE id % 3 = 0")
    con.execute("CALL differential_create_snapshot('s')")
    con.execute("DETACH s")
    con.execute("CALL differential_create_branch('shop', 'dev', snapshot => 1)")
    con.execute("ATTACH 'differential:shop' AS d (BRANCH 'dev')")
    con.execute("INSERT INTO d.items VALUES (-1, 'only on dev')")
    con.execute("DETACH d")


@step
def make_compactable(con):
    """One process writes a small database and a big one: after the big one is dropped, its segment is
    mostly dead but still holds live chunks, so cleanup compacts it."""
    con.execute("ATTACH 'differential:keep' AS k")
    con.execute("CREATE TABLE k.t AS SELECT range AS x FROM range(1000)")
    con.execute("ATTACH 'differential:big' AS b")
    con.execute("CREATE TABLE b.t AS SELECT range AS x, repeat('z', 60) || range AS s FROM range(150000)")
    con.execute("DETACH k")
    con.execute("DETACH b")


@step
def make_deletable(con):
    """One process writes only a database that is dropped next: its segments hold nothing live."""
    con.execute("ATTACH 'differential:scratch' AS x")
    con.execute("CREATE TABLE x.t AS SELECT range AS x FROM range(50000)")
    con.execute("DETACH x")


@step
def drop_garbage(con):
    con.execute("CALL differential_drop_database('big')")
    con.execute("CALL differential_drop_database('scratch')")


@step
def observe(con):
    """Everything acknowledged: databases, branches, snapshots, the rows of every branch and snapshot."""
    state = {"repository": [list(row) for row in repository_state(con)]}
    con.execute("ATTACH 'differential:shop' AS s (READ_ONLY)")
    con.execute("ATTACH 'differential:shop' AS d (BRANCH 'dev', READ_ONLY)")
    state["main"] = table_rows(con, "s")
    state["dev"] = table_rows(con, "d")
    state["snapshots"] = [table_rows(con, "s", at) for at in (1, 2)]
    databases = [row[0] for row in con.execute("SELECT database_name FROM differential_databases()").fetchall()]
    if "keep" in databases:
        con.execute("ATTACH 'differential:keep' AS k (READ_ONLY)")
        state["keep"] = con.execute("SELECT count(*), sum(x) FROM k.t").fetchall()
    state["verify"] = con.execute(
        "SELECT check_name, problems, detail FROM differential_verify() ORDER BY check_name"
    ).fetchall()
    return state


@step
def insert(con):
    """A small commit: the WAL append, held in memory, and its FileSync (a publication carrying the bytes inline)."""
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("INSERT INTO s.items VALUES (9001, 'inserted')")


@step
def large_insert(con):
    """A commit whose WAL bytes exceed the inline limit (64 KiB): they go to segment records, which its FileSync
    flushes before the publication. The padding table is read by no check."""
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("BEGIN")
    con.execute("INSERT INTO s.items VALUES (9001, 'inserted')")
    con.execute("CREATE TABLE IF NOT EXISTS s.padding (v VARCHAR)")
    con.execute("INSERT INTO s.padding SELECT repeat('p', 1000) FROM range(100)")
    con.execute("COMMIT")


@step
def insert_then_checkpoint(con):
    """An acknowledged commit, then a checkpoint, the first thing to write database chunks."""
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("INSERT INTO s.items VALUES (9002, 'acknowledged before the checkpoint')")
    print(json.dumps({"acknowledged": 9002}), flush=True)
    con.execute("CHECKPOINT s")


@step
def read(con):
    """A read-only attachment and a scan: segment opens and record reads."""
    con.execute("ATTACH 'differential:shop' AS s (READ_ONLY)")
    return con.execute("SELECT count(*), sum(id) FROM s.items").fetchall()


@step
def attach_for_writing(con):
    """A writable attachment takes the branch lock."""
    con.execute("ATTACH 'differential:shop' AS s")
    return con.execute("SELECT count(*) FROM s.items").fetchall()


@step
def cleanup(con):
    return con.execute(
        "SELECT segments_deleted, segments_compacted FROM differential_cleanup_old_files(cleanup_all => true)"
    ).fetchall()


@step
def logged_attach(con):
    """A writable attachment with DuckDB's logging on: what the differential log type shows."""
    con.execute("SET enable_logging = true")
    con.execute("ATTACH 'differential:shop' AS s")
    return logs(con)


@step
def logged_commit_and_cleanup(con):
    con.execute("SET enable_logging = true")
    con.execute("ATTACH 'differential:shop' AS s")
    con.execute("INSERT INTO s.items VALUES (9003, 'logged')")
    con.execute("DETACH s")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    return logs(con)


def logs(con):
    rows = con.execute(
        "SELECT log_level, message FROM duckdb_logs WHERE type = 'differential' ORDER BY timestamp"
    ).fetchall()
    parsed = con.execute(
        "SELECT event, duration_ms, detail FROM duckdb_logs_parsed('differential') ORDER BY timestamp"
    ).fetchall()
    return {"raw": rows, "parsed": parsed}


def main():
    repository, name = sys.argv[1], sys.argv[2]
    con = connect(repository)
    outcome = {"error": None, "result": None}
    try:
        outcome["result"] = STEPS[name](con)
    except duckdb.Error as error:
        outcome["error"] = str(error)
    try:
        con.close()
    except duckdb.Error as error:
        outcome["close_error"] = str(error)
    print(json.dumps(outcome, default=str))


if __name__ == "__main__":
    main()
