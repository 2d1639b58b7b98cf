"""TPC-H SF1 Q1-Q22: native DuckDB file vs a differential database, side by side in one run.

Native DuckDB reads a plain file holding the very bytes differential stores (stored_file.py), so both
sides read the same blocks in the same layout. Each query runs on both (alternating, after a warm-up),
results are hashed and must be equal, and the report gives per-query medians and the ratio of the sums
of medians. Cold runs also time dbgen's own file, whose layout differs from that of the copy."""
import argparse
import hashlib
import json
import os
import pathlib
import platform
import shutil
import statistics
import sys
import time

import duckdb

from stored_file import write_stored_file

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"
CACHE = pathlib.Path(os.environ.get("DIFFERENTIAL_CACHE", pathlib.Path.home() / ".cache" / "differential"))


def connect(tpch_extension, threads, extension=EXTENSION):
    con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": threads})
    con.execute(f"LOAD '{extension}'")
    con.execute(f"LOAD '{tpch_extension}'")
    return con


def result_hash(rows):
    digest = hashlib.sha256()
    for row in rows:
        digest.update(repr(row).encode())
    return digest.hexdigest()


def timed(con, sql):
    start = time.perf_counter()
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - start, rows


def io_counters(con):
    """The extension's process-wide counts of its file system calls (differential_io_counters)."""
    return dict(con.execute("SELECT counter, value FROM differential_io_counters()").fetchall())


FS_CALLS = ("fs_open", "fs_read", "fs_size", "fs_seek", "fs_exists", "fs_write", "fs_sync")


def fs_calls(before, after):
    """File system calls of the extension between two counter readings, by kind (only kinds that happened)."""
    return {k: after[k] - before[k] for k in FS_CALLS + ("fs_read_bytes",) if after[k] != before[k]}


def drop_page_cache():
    try:
        os.sync()
        pathlib.Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def cold_runs(args, native_paths, repository, queries):
    """Each run: drop the OS page cache, open a fresh DuckDB instance, attach, run one query."""
    if not drop_page_cache():
        return None
    medians = {"native": [], "diff": [], "dbgen": []}
    for number, query in queries:
        timings = {"native": [], "diff": [], "dbgen": []}
        for _ in range(args.cold_runs):
            for target in ("native", "diff", "dbgen"):
                drop_page_cache()
                con = connect(args.tpch_extension, args.threads)
                con.execute(f"SET differential_repository = '{repository}'")
                if target in native_paths:
                    con.execute(f"ATTACH '{native_paths[target]}' AS db (READ_ONLY)")
                else:
                    con.execute("ATTACH 'differential:tpch' AS db (READ_ONLY)")
                con.execute("USE db")
                seconds, _ = timed(con, query)
                timings[target].append(seconds)
                con.close()
        for target in medians:
            medians[target].append(statistics.median(timings[target]))
    native_sum, diff_sum = sum(medians["native"]), sum(medians["diff"])
    return {"runs": args.cold_runs, "native_sum_of_medians": native_sum, "diff_sum_of_medians": diff_sum,
            "ratio": diff_sum / native_sum, "dbgen_sum_of_medians": sum(medians["dbgen"]), "per_query": medians}


def packed_layout(repository):
    """Whether a cached repository holds segments of format 1 (chunk payloads not page-aligned, docs/FORMAT.md §3):
    measuring it would measure that older layout, so it is built again."""
    for segment in (repository / "segments").glob("*.seg"):
        with open(segment, "rb") as f:
            if int.from_bytes(f.read(12)[8:12], "little") < 2:
                return True
    return False


def prepare(con, sf, work):
    """Generates TPC-H (cached in `work`), loads it into a repository and writes the plain file holding the very
    bytes differential stores; attaches both read-only as `native` and `diff`. Returns the paths and the load time."""
    work.mkdir(parents=True, exist_ok=True)
    native_path = work / f"tpch-sf{sf:g}.duckdb"
    same_bytes_path = work / f"tpch-sf{sf:g}-differential-bytes.duckdb"
    repository = work / f"repository-sf{sf:g}"
    if packed_layout(repository):
        print(f"rebuilding {repository}: written before chunk payloads were page-aligned", file=sys.stderr)
        shutil.rmtree(repository)
        same_bytes_path.unlink(missing_ok=True)
    con.execute(f"SET differential_repository = '{repository}'")
    if not native_path.exists():
        print(f"generating TPC-H SF{sf:g} into {native_path}", file=sys.stderr)
        tmp = native_path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        con.execute(f"ATTACH '{tmp}' AS gen")
        con.execute("USE gen")
        con.execute(f"CALL dbgen(sf => {sf})")
        con.execute("USE memory")
        con.execute("DETACH gen")
        tmp.rename(native_path)
    con.execute(f"ATTACH '{native_path}' AS generated (READ_ONLY)")
    databases = [r[0] for r in con.execute("SELECT database_name FROM differential_databases()").fetchall()]
    load_seconds = None
    if "tpch" not in databases:
        start = time.perf_counter()
        con.execute("ATTACH 'differential:tpch' AS diff")
        con.execute("COPY FROM DATABASE generated TO diff")
        con.execute("CHECKPOINT diff")
        load_seconds = time.perf_counter() - start
        con.execute("DETACH diff")
    if load_seconds is not None or not same_bytes_path.exists():
        write_stored_file(repository, "tpch", "main", same_bytes_path)
    con.execute(f"ATTACH '{same_bytes_path}' AS native (READ_ONLY)")
    # Read-only, as the native file is: both sides run the same read-only transactions.
    con.execute("ATTACH 'differential:tpch' AS diff (READ_ONLY)")
    return native_path, same_bytes_path, repository, load_seconds


def tpch_queries(con):
    """The 22 TPC-H queries as (number, SQL), from the tpch extension."""
    return con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY 1").fetchall()


def warm_results(con, queries, runs):
    """Every query on both sides, alternating after a warm-up each; results hashed and required equal."""
    results = []
    for number, query in queries:
        timings = {"native": [], "diff": []}
        hashes = {}
        for target in ("native", "diff"):
            con.execute(f"USE {target}")
            _, rows = timed(con, query)  # warm-up
            hashes[target] = result_hash(rows)
        calls = {}
        for _ in range(runs):
            for target in ("native", "diff"):
                con.execute(f"USE {target}")
                before = io_counters(con)
                seconds, _ = timed(con, query)
                timings[target].append(seconds)
                for kind, n in fs_calls(before, io_counters(con)).items():
                    calls[f"{target}:{kind}"] = calls.get(f"{target}:{kind}", 0) + n
        if hashes["native"] != hashes["diff"]:
            raise SystemExit(f"Q{number}: results differ between native and differential")
        results.append(
            {
                "query": number,
                "native": {"min": min(timings["native"]), "median": statistics.median(timings["native"]),
                           "max": max(timings["native"])},
                "diff": {"min": min(timings["diff"]), "median": statistics.median(timings["diff"]),
                         "max": max(timings["diff"])},
                "hash": hashes["native"][:16],
                # Extension file system calls during the warm runs (native's calls never reach it: a check).
                "fs_calls": calls,
                "times": timings,
            }
        )
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--tpch-extension", required=True)
    parser.add_argument("--work", default=str(REPO_ROOT / "bench" / "work"))
    parser.add_argument("--json", default=None)
    parser.add_argument("--cold-runs", type=int, default=3,
                        help="runs per query with the OS page cache dropped and a fresh DuckDB (needs root)")
    args = parser.parse_args()

    con = connect(args.tpch_extension, args.threads)
    native_path, same_bytes_path, repository, load_seconds = prepare(
        con, args.sf, pathlib.Path(args.work).resolve())
    queries = tpch_queries(con)
    results = warm_results(con, queries, args.runs)
    con.execute("USE memory")
    cold_paths = {"native": same_bytes_path, "dbgen": native_path}
    cold = cold_runs(args, cold_paths, repository, queries) if args.cold_runs > 0 else None
    native_sum = sum(r["native"]["median"] for r in results)
    diff_sum = sum(r["diff"]["median"] for r in results)
    report = {
        "duckdb": duckdb.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "sf": args.sf,
        "threads": args.threads,
        "runs": args.runs,
        "load_seconds": load_seconds,
        "queries": results,
        "native_sum_of_medians": native_sum,
        "diff_sum_of_medians": diff_sum,
        "ratio": diff_sum / native_sum,
        "cold": cold,
    }
    print(f"{'query':>5} {'native ms':>10} {'diff ms':>10} {'ratio':>6}")
    for r in results:
        print(f"{r['query']:>5} {r['native']['median'] * 1000:>10.1f} {r['diff']['median'] * 1000:>10.1f} "
              f"{r['diff']['median'] / r['native']['median']:>6.2f}")
    print(f"sum of medians: native {native_sum * 1000:.0f} ms, differential {diff_sum * 1000:.0f} ms, "
          f"ratio {report['ratio']:.3f} (all 22 results hashed equal)")
    if cold:
        print(f"cold (page cache dropped, fresh instance, median of {args.cold_runs}): native "
              f"{cold['native_sum_of_medians'] * 1000:.0f} ms, differential {cold['diff_sum_of_medians'] * 1000:.0f} ms, "
              f"ratio {cold['ratio']:.3f}; dbgen's own file {cold['dbgen_sum_of_medians'] * 1000:.0f} ms")
    elif args.cold_runs > 0:
        print("cold runs skipped: dropping the OS page cache needs root")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
