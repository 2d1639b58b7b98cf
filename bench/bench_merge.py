"""Merge scaling: an orders-like table of 1M, 3M and 10M rows, 100 (and, at 1M and 3M, 300) sparse
non-conflicting updates per side spread over the table, and 100 confined to its newest rows. Beside every merge
shape the native floor (plain DuckDB writing the same result) takes its turn in the same rounds, so each round
gives the merge's excess over the floor: the phases, the floor, the excess and how the excess grows with size."""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import sys
import time

import duckdb

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"


# The 1-minute load average before every measured merge: the machine is shared.
LOAD = []


def connect(repository):
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET differential_repository = '{repository}'")
    return con


MAX_ROWS_READ = 1_000_000_000
ORDERS_COLUMNS = "(order_id BIGINT PRIMARY KEY, customer VARCHAR, amount DECIMAL(10, 2), status VARCHAR)"


def create_orders(con, table, rows):
    con.execute(f"CREATE TABLE {table} {ORDERS_COLUMNS}")
    con.execute(f"INSERT INTO {table} SELECT range, 'customer ' || (range % 50000), (range % 10000) / 100, "
                f"CASE WHEN range % 3 = 0 THEN 'open' ELSE 'paid' END FROM range({rows})")


def changed_ids(rows, changes, clustered, column="range"):
    """The ids each side updates, as predicates on `column`: ours sets status, theirs amount. Spread: sparse and
    disjoint, ours ids = 0 mod stride, theirs ids = stride/2 mod stride. Confined: among the newest 4 x changes
    orders, ours the even ids and theirs the odd ones of the first half."""
    if clustered:
        first = rows - 4 * changes
        return (f"{column} >= {first} AND {column} < {first + 2 * changes} AND {column} % 2 = 0",
                f"{column} >= {first} AND {column} < {first + 2 * changes} AND {column} % 2 = 1")
    stride = rows // changes
    return f"{column} % {stride} = 0", f"{column} % {stride} = {stride // 2}"


def prepare(repository, rows, changes, clustered=False):
    con = connect(repository)
    con.execute("ATTACH 'differential:shop' AS shop")
    create_orders(con, "shop.orders", rows)
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:shop' AS side (BRANCH 'side')")
    ours, theirs = changed_ids(rows, changes, clustered, "order_id")
    con.execute(f"UPDATE shop.orders SET status = 'refunded' WHERE {ours}")
    con.execute(f"UPDATE side.orders SET amount = amount + 1 WHERE {theirs}")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_snapshot('side')")
    con.close()


SEGMENTS_CHANGED = """SELECT count(*) FILTER (b.block_id IS DISTINCT FROM s.block_id OR b.block_offset IS DISTINCT FROM
    s.block_offset OR b.count IS DISTINCT FROM s.count OR b.stats::VARCHAR IS DISTINCT FROM s.stats::VARCHAR), count(*),
    count(DISTINCT b.row_group_id) FILTER (b.block_id IS DISTINCT FROM s.block_id OR b.block_offset IS DISTINCT FROM
    s.block_offset OR b.count IS DISTINCT FROM s.count OR b.stats::VARCHAR IS DISTINCT FROM s.stats::VARCHAR),
    count(DISTINCT b.row_group_id)
FROM pragma_storage_info('base.main.orders') b FULL JOIN pragma_storage_info('side.main.orders') s
USING (row_group_id, column_id, column_path, start)"""


def storage_changes(con):
    """How much of the table's storage each side rewrote: column segments and row groups whose blocks
    differ from the base's (what a storage-level shortcut could skip is everything else)."""
    out = {}
    for name, snapshot in (("ours", 2), ("theirs", 3)):
        con.execute(f"ATTACH 'differential:shop' AS side (SNAPSHOT {snapshot})")
        segments, all_segments, groups, all_groups = con.execute(SEGMENTS_CHANGED).fetchone()
        con.execute("DETACH side")
        out[name] = {"segments": f"{segments}/{all_segments}", "row_groups": f"{groups}/{all_groups}"}
    return out


class MergeSetting:
    """One table shape with its prepared repository and an open connection, so that settings can take turns."""

    def __init__(self, work, rows, changes, clustered=False):
        self.rows, self.changes, self.clustered = rows, changes, clustered
        self.repository = work / f"merge-{rows}-{changes}{'-clustered' if clustered else ''}"
        shutil.rmtree(self.repository, ignore_errors=True)
        prepare(self.repository, rows, changes, clustered)
        self.con = connect(self.repository)
        self.samples = []

    def merge_once(self):
        LOAD.append(os.getloadavg()[0])
        # The default limit (10M rows read) refuses the 10M-row table's merge, which reads its changed
        # columns on all three inputs: every size gets the same, higher limit.
        r = self.con.execute(
            "SELECT merge_action, comparison_ms, application_ms, publication_ms, selection_ms, planning_ms "
            f"FROM differential_merge_branch('shop', 'main', 'side', 'result_{len(self.samples)}', "
            f"max_rows_read => {MAX_ROWS_READ})"
        ).fetchone()
        assert r[0] == "created_branch"
        self.samples.append({"comparison_ms": r[1], "application_ms": r[2], "publication_ms": r[3],
                             "selection_ms": r[4], "planning_ms": r[5], "total_ms": r[1] + r[2] + r[3] + r[4] + r[5]})

    def finish(self):
        """Checks the first result holds both sides' changes and nothing else, compared with the base snapshot."""
        con = self.con
        con.execute("ATTACH 'differential:shop' AS result (BRANCH 'result_0', READ_ONLY)")
        con.execute("ATTACH 'differential:shop' AS base (SNAPSHOT 1)")
        changed_storage = storage_changes(con)
        ours, theirs = changed_ids(self.rows, self.changes, self.clustered)
        expected = con.execute(f"SELECT count(*) FILTER ({ours}), count(*) FILTER ({theirs}) FROM range({self.rows})"
                               ).fetchone()
        changed = con.execute("SELECT count(*) FILTER (r.status IS DISTINCT FROM b.status), "
                              "count(*) FILTER (r.amount IS DISTINCT FROM b.amount), count(*) FILTER (r.customer IS "
                              "DISTINCT FROM b.customer) FROM result.orders r JOIN base.orders b USING (order_id)"
                              ).fetchone()
        assert changed == expected + (0,), (changed, expected)
        con.close()
        shutil.rmtree(self.repository, ignore_errors=True)
        samples = self.samples
        result = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
        result["total_min_ms"] = min(s["total_ms"] for s in samples)
        result["total_max_ms"] = max(s["total_ms"] for s in samples)
        result["totals_ms"] = [s["total_ms"] for s in samples]
        result["storage_changed"] = changed_storage
        return result


def measure_in_turns(settings, runs):
    """Each round merges once on every setting, starting one further along each round: the machine's drift
    (this 2-core machine is shared) then lands on every setting alike, and each round's ratios compare
    merges made within seconds of one another."""
    for run in range(runs):
        for i in range(len(settings)):
            settings[(run + i) % len(settings)].merge_once()
    return [setting.finish() for setting in settings]


def paired_ratio(numerator, denominator):
    """The median over rounds of one round's ratio."""
    return statistics.median(a / max(1, b) for a, b in zip(numerator["totals_ms"], denominator["totals_ms"]))


class NativeFloorSetting:
    """What plain DuckDB (this wheel, no extension) takes to write the same merge result: both sides' changes,
    already known by key, applied to a copy of the base table in one transaction and checkpointed: what DuckDB's
    storage costs to write that result, the floor no merge that writes a checkpointed file can beat. The base file
    is built once; each turn times the write on a fresh copy of it, so it can take turns with the merges."""

    def __init__(self, work, rows, changes, clustered=False):
        self.rows, self.changes, self.clustered = rows, changes, clustered
        name = f"native-{rows}-{changes}{'-clustered' if clustered else ''}"
        self.base, self.path = work / f"{name}-base.duckdb", work / f"{name}.duckdb"
        ours, theirs = changed_ids(rows, changes, clustered)
        self.base.unlink(missing_ok=True)
        con = duckdb.connect(str(self.base))
        create_orders(con, "orders", rows)
        con.execute(f"CREATE TABLE changes AS SELECT range AS order_id, {ours} AS refund FROM range({rows}) "
                    f"WHERE ({ours}) OR ({theirs})")
        con.close()
        self.samples = []

    def merge_once(self):
        shutil.copyfile(self.base, self.path)
        con = duckdb.connect(str(self.path))
        con.execute("SET enable_progress_bar = false")
        start = time.perf_counter()
        con.execute("BEGIN")
        con.execute("UPDATE orders SET status = 'refunded' FROM changes c WHERE orders.order_id = c.order_id "
                    "AND c.refund")
        con.execute("UPDATE orders SET amount = amount + 1 FROM changes c WHERE orders.order_id = c.order_id "
                    "AND NOT c.refund")
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
        self.samples.append((time.perf_counter() - start) * 1000)
        con.close()
        self.path.unlink()

    def finish(self):
        self.base.unlink(missing_ok=True)
        samples = self.samples
        return {"min": min(samples) / 1000, "median": statistics.median(samples) / 1000,
                "max": max(samples) / 1000, "totals_ms": samples}


def measure_untouched_tables(work, tables, rows, runs):
    """A database of `tables` tables where each side updates a different one: with the storage
    shortcut only the two changed tables are read; without it (the reference method) all are."""
    repository = work / "merge-tables"
    shutil.rmtree(repository, ignore_errors=True)
    con = connect(repository)
    con.execute("ATTACH 'differential:wide' AS wide")
    for t in range(tables):
        con.execute(f"CREATE TABLE wide.t{t} (id BIGINT PRIMARY KEY, v BIGINT, s VARCHAR)")
        con.execute(f"INSERT INTO wide.t{t} SELECT range, range, 'row ' || range FROM range({rows})")
    con.execute("CALL differential_create_snapshot('wide')")
    con.execute("CALL differential_create_branch('wide', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:wide' AS side (BRANCH 'side')")
    con.execute(f"UPDATE wide.t0 SET v = -v WHERE id % {rows // 100} = 0")
    con.execute(f"UPDATE side.t1 SET v = -v WHERE id % {rows // 100} = 1")
    con.execute("CALL differential_create_snapshot('wide')")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("DETACH wide")
    con.execute("DETACH side")
    out = {}
    for label, skip in (("reference", "false"), ("shortcut", "true")):
        con.execute(f"SET differential_merge_skip_unchanged = {skip}")
        samples = []
        for run in range(runs):
            r = con.execute("SELECT planning_ms + comparison_ms + application_ms + publication_ms "
                            f"FROM differential_merge_branch('wide', 'main', 'side', '{label}_{run}', max_rows_read => 0)").fetchone()
            samples.append(r[0])
        out[label] = statistics.median(samples)
    # Both methods give the same result.
    con.execute("ATTACH 'differential:wide' AS a (BRANCH 'reference_0', READ_ONLY)")
    con.execute("ATTACH 'differential:wide' AS b (BRANCH 'shortcut_0', READ_ONLY)")
    for t in range(tables):
        same = con.execute(f"SELECT count(*) FROM (FROM a.t{t} EXCEPT ALL FROM b.t{t}) UNION ALL "
                           f"SELECT count(*) FROM (FROM b.t{t} EXCEPT ALL FROM a.t{t})").fetchall()
        assert same == [(0,), (0,)], (t, same)
    con.close()
    shutil.rmtree(repository, ignore_errors=True)
    return {"tables": tables, "rows_per_table": rows, "reference_ms": out["reference"],
            "shortcut_ms": out["shortcut"], "speedup": out["reference"] / max(1, out["shortcut"])}


SIZES = (1_000_000, 3_000_000, 10_000_000)


def excess(merge, floor):
    """The merge's cost above the native floor, per round (both measured in the same round) and as medians."""
    per_round = [m - f for m, f in zip(merge["totals_ms"], floor["totals_ms"])]
    return {"per_round_ms": per_round, "median_ms": statistics.median(per_round),
            "min_ms": min(per_round), "max_ms": max(per_round)}


def excess_ratio(a, b):
    """a's excess over b's: the ratio of the medians, and the median of each round's ratio."""
    return {"of_medians": a["median_ms"] / max(1, b["median_ms"]),
            "median_of_rounds": statistics.median(x / max(1, y) for x, y in zip(a["per_round_ms"], b["per_round_ms"]))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default=str(REPO_ROOT / "bench" / "work"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES),
                        help="table sizes in rows, comma separated: the first and the second give the 300-update "
                        "shapes and the ratios' denominators")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    work = pathlib.Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    small, middle = sizes[0], sizes[1]
    shapes = [(rows, 100, False) for rows in sizes] + [(rows, 300, False) for rows in (small, middle)]
    shapes += [(rows, 100, True) for rows in sizes]
    floors = [(rows, 100, clustered) for rows in sizes for clustered in (False, True)]
    settings = [MergeSetting(work, *shape) for shape in shapes] + [NativeFloorSetting(work, *f) for f in floors]
    measured = measure_in_turns(settings, args.runs)
    results, clustered, native = {}, {}, {}
    for (rows, changes, confined), result in zip(shapes, measured):
        (clustered if confined else results)[f"{rows}/{changes}"] = result
        print(f"{rows:>9} rows, {changes:>3} {'confined' if confined else 'spread'} updates per side: {result}",
              file=sys.stderr)
    for (rows, _, confined), floor in zip(floors, measured[len(shapes):]):
        native[f"{rows}/100" + ("/confined" if confined else "")] = floor
    excesses = {f"{rows}/100": excess(results[f"{rows}/100"], native[f"{rows}/100"]) for rows in sizes}
    excesses.update({f"{rows}/100/confined": excess(clustered[f"{rows}/100"], native[f"{rows}/100/confined"])
                     for rows in sizes})
    print(f"excess over the floor: {excesses}", file=sys.stderr)
    untouched = measure_untouched_tables(work, 8, 500_000, min(args.runs, 3))
    print(f"8 tables, one changed per side: {untouched}", file=sys.stderr)
    large = sizes[-1]
    report = {
        "runs": args.runs,
        "sizes": sizes,
        "results": results,
        "untouched_tables": untouched,
        "clustered": clustered,
        "ratio_3M_to_1M_clustered": clustered[f"{middle}/100"]["total_ms"] / max(1, clustered[f"{small}/100"]["total_ms"]),
        "ratio_3M_to_1M_100": results[f"{middle}/100"]["total_ms"] / max(1, results[f"{small}/100"]["total_ms"]),
        "ratio_3M_to_1M_300": results[f"{middle}/300"]["total_ms"] / max(1, results[f"{small}/300"]["total_ms"]),
        "ratio_spread_to_confined_3M": results[f"{middle}/100"]["total_ms"] / max(1, clustered[f"{middle}/100"]["total_ms"]),
        "paired_ratio_3M_to_1M_100": paired_ratio(results[f"{middle}/100"], results[f"{small}/100"]),
        "paired_ratio_spread_to_confined_3M": paired_ratio(results[f"{middle}/100"], clustered[f"{middle}/100"]),
        "native_floor": native,
        "native_ratio_3M_to_1M_100": native[f"{middle}/100"]["median"] / native[f"{small}/100"]["median"],
        "native_ratio_spread_to_confined_3M": native[f"{middle}/100"]["median"] /
        native[f"{middle}/100/confined"]["median"],
        "excess": excesses,
        "excess_ratio_3M_to_1M": excess_ratio(excesses[f"{middle}/100"], excesses[f"{small}/100"]),
        "excess_ratio_spread_to_confined_3M": excess_ratio(excesses[f"{middle}/100"],
                                                           excesses[f"{middle}/100/confined"]),
        "excess_ratio_10M_to_1M": excess_ratio(excesses[f"{large}/100"], excesses[f"{small}/100"]),
        "load_average": LOAD,
    }
    print(json.dumps(report, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
