"""TPC-H (SF1 unless --sf says otherwise) read from S3, side by side in one run: a differential export attached from its branch head
(cold, and with a warm repository disk cache) against the same native file read through httpfs, plus the
native local file; then what an export costs (time, bytes uploaded, objects written per snapshot).

The S3 server is versitygw on loopback behind Toxiproxy, which adds a first-byte latency (20 ms by default)
to every answer, so request counts weigh as they would against a real bucket. Every cold run is a fresh
process (no cache of ours or DuckDB's survives it). Results are hashed and must equal the native file's.

httpfs is not published for DuckDB 2.0.x on PyPI (duckdb-extension-httpfs stops at 1.5.5), so the httpfs
baseline runs on DuckDB 1.5.5 in a venv of its own, reading a native file that 1.5.5 wrote from the same
data: the report labels that version difference."""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "test" / "python"))
from s3_server import CACHE, VersityGW  # noqa: E402
from toxiproxy import Toxiproxy  # noqa: E402

EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"
PYTHON = REPO_ROOT / ".venv" / "bin" / "python"
HTTPFS_VERSION = "1.5.5"
HTTPFS_VENV = CACHE / f"venv-httpfs-{HTTPFS_VERSION}"

# Runs in a fresh process: reads {"config", "setup", "query"} from stdin, prints seconds (setup + query) and
# the result's hash. Credentials travel on stdin, never on a command line.
WORKER = r"""
import duckdb, hashlib, json, sys, time
spec = json.loads(sys.stdin.read())
start = time.perf_counter()
con = duckdb.connect(config=spec["config"])
# No progress bar: it writes to stdout, where this prints its result (SF10 queries run long enough to show it).
con.execute("SET enable_progress_bar = false")
requests = "SELECT count(*) FROM duckdb_logs_parsed('differential') WHERE event IN ('remote_get', 'remote_list')"
get_ms = "SELECT coalesce(sum(duration_ms), 0) FROM duckdb_logs_parsed('differential') WHERE event = 'remote_get'"
# The bytes each GET returned, as its event reports them ("..., <n> bytes, ..."): what the fetches took along shows here.
fetched = ("SELECT coalesce(sum(regexp_extract(detail, ', (\\d+) bytes, ', 1)::BIGINT), 0) "
           "FROM duckdb_logs_parsed('differential') WHERE event = 'remote_get'")
phases = [("connect", time.perf_counter() - start)]
for sql in spec["setup"]:
    before = time.perf_counter()
    con.execute(sql)
    phases.append((sql.split(" ")[0].upper(), time.perf_counter() - before))
attached = time.perf_counter()
attach_requests = con.execute(requests).fetchone()[0] if spec.get("count_requests") else None
attach_get_ms = con.execute(get_ms).fetchone()[0] if spec.get("count_requests") else None
attach_bytes = con.execute(fetched).fetchone()[0] if spec.get("count_requests") else None
rows = con.execute(spec["query"]).fetchall()
done = time.perf_counter()
phases.append(("query", done - attached))
query_requests = con.execute(requests).fetchone()[0] - attach_requests if spec.get("count_requests") else None
query_bytes = con.execute(fetched).fetchone()[0] - attach_bytes if spec.get("count_requests") else None
digest = hashlib.sha256()
for row in rows:
    digest.update(repr(row).encode())
print(json.dumps({"seconds": done - start, "attach": attached - start, "hash": digest.hexdigest(),
                  "requests": [attach_requests, query_requests], "fetched_bytes": [attach_bytes, query_bytes],
                  "attach_get_ms": attach_get_ms,
                  "phases": phases}))
"""

# Where a fresh process's time goes: each setup statement is named by its first word.
PHASES = (("connect", "`duckdb.connect`"), ("LOAD", "`LOAD differential`"), ("SET", "`SET` (cache repository, size)"),
          ("CREATE", "`CREATE SECRET`"), ("ATTACH", "`ATTACH`"), ("USE", "`USE`"), ("query", "the query"))


def phase_seconds(outcome):
    """The worker's phases summed by name (a process may run several SETs)."""
    totals = {}
    for name, seconds in outcome["phases"]:
        totals[name] = totals.get(name, 0) + seconds
    return totals


def ensure_httpfs_venv():
    python = HTTPFS_VENV / "bin" / "python"
    stamp = HTTPFS_VENV / ".complete"
    if not stamp.exists():
        shutil.rmtree(HTTPFS_VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(HTTPFS_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"duckdb=={HTTPFS_VERSION}",
                        f"duckdb-extension-httpfs=={HTTPFS_VERSION}"], check=True)
        stamp.write_text("")
    extension = next((HTTPFS_VENV / "lib").rglob("httpfs.duckdb_extension"))
    return python, extension


def run_worker(python, spec):
    result = subprocess.run([str(python), "-c", WORKER], input=json.dumps(spec), capture_output=True, text=True,
                            timeout=1800)
    if result.returncode != 0:
        raise RuntimeError(f"worker failed: {result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def secret_sql(server, endpoint, bucket):
    return (f"CREATE SECRET bench (TYPE s3, KEY_ID '{server.key_id}', SECRET '{server.secret}', "
            f"ENDPOINT '{endpoint}', URL_STYLE 'path', USE_SSL false, REGION 'us-east-1', SCOPE 's3://{bucket}/')")


def put_file(server, bucket, key, path):
    """Uploads a file with curl's own SigV4 signing straight to the server (setup, not measured)."""
    subprocess.run(["curl", "-sf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{server.key_id}:{server.secret}",
                    "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-T", str(path),
                    f"http://{server.endpoint}/{bucket}/{key}"], check=True)


def prepare_native_files(args, work, httpfs_python):
    """The 2.0.1 native file (generated with the tpch extension) and a 1.5.5 copy of the same data."""
    import duckdb

    native = work / f"tpch-sf{args.sf:g}.duckdb"
    legacy = work / f"tpch-sf{args.sf:g}-v{HTTPFS_VERSION}.duckdb"
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{args.tpch_extension}'")
    if not native.exists():
        tmp = native.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        con.execute(f"ATTACH '{tmp}' AS gen")
        con.execute("USE gen")
        con.execute(f"CALL dbgen(sf => {args.sf})")
        con.execute("USE memory")
        con.execute("DETACH gen")
        tmp.rename(native)
    queries = con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY 1").fetchall()
    if not legacy.exists():
        parquet = work / "tpch-parquet"
        shutil.rmtree(parquet, ignore_errors=True)
        con.execute(f"ATTACH '{native}' AS src (READ_ONLY)")
        con.execute(f"EXPORT DATABASE src TO '{parquet}' (FORMAT parquet)")
        tmp = legacy.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        script = (f"import duckdb; c = duckdb.connect('{tmp}'); c.execute(\"IMPORT DATABASE '{parquet}'\"); "
                  "c.execute('CHECKPOINT'); c.close()")
        subprocess.run([str(httpfs_python), "-c", script], check=True)
        tmp.rename(legacy)
        shutil.rmtree(parquet, ignore_errors=True)
    con.close()
    return native, legacy, queries


def lake_usage(server, bucket):
    files = [p for p in (server.bucket_path(bucket) / "lake").rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def export_database(server, endpoint, bucket, native, work):
    """Exports the native file's data as a differential S3 database; measures three snapshots."""
    import duckdb

    repository = work / "s3-repository"
    shutil.rmtree(repository, ignore_errors=True)
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    con.execute(f"SET differential_repository = '{repository}'")
    con.execute(secret_sql(server, endpoint, bucket))
    con.execute(f"ATTACH '{native}' AS native (READ_ONLY)")
    con.execute(f"ATTACH 'differential:tpch' AS tpch (DATA_PATH 's3://{bucket}/lake/')")
    con.execute("COPY FROM DATABASE native TO tpch")
    steps = {}
    for step, change in (("first", None), ("unchanged", None),
                         ("one_row", "UPDATE tpch.lineitem SET l_comment = 'changed' WHERE l_orderkey = 1")):
        if change:
            con.execute(change)
        before = lake_usage(server, bucket)
        start = time.perf_counter()
        con.execute("SELECT * FROM differential_create_snapshot('tpch')").fetchall()
        seconds = time.perf_counter() - start
        after = lake_usage(server, bucket)
        steps[step] = {"seconds": seconds, "objects_written": after[0] - before[0], "bytes_uploaded": after[1] - before[1]}
    con.close()
    return {"file_bytes": native.stat().st_size, "snapshots": steps}


def measure(args, targets, queries):
    """Median of `runs` fresh processes per query and target, targets interleaved."""
    results = []
    for number, query in queries:
        entry = {"query": number}
        for _ in range(args.runs):
            for name, (python, spec) in targets.items():
                outcome = run_worker(python, dict(spec, query=query, count_requests=False))
                entry.setdefault(name, {"times": [], "hash": outcome["hash"], "phase_runs": []})["times"].append(
                    outcome["seconds"])
                entry[name]["phase_runs"].append(phase_seconds(outcome))
        # The requests are counted in one more process per target, not timed: logging every request to
        # duckdb_logs and querying it are not what a user's process does.
        for name, (python, spec) in targets.items():
            if spec.get("count_requests"):
                counted = dict(spec, query=query, setup=spec["setup"][:1] + [LOGGING] + spec["setup"][1:])
                outcome = run_worker(python, counted)
                entry[name]["requests"] = outcome["requests"]
                entry[name]["attach_get_ms"] = outcome["attach_get_ms"]
                entry[name]["fetched_bytes"] = outcome["fetched_bytes"]
        for name in targets:
            times = entry[name].pop("times")
            phase_runs = entry[name].pop("phase_runs")
            entry[name].update(min=min(times), median=statistics.median(times), max=max(times),
                               phases={p: statistics.median(r.get(p, 0) for r in phase_runs) for p, _ in PHASES})
        reference = entry["native_local"]["hash"]
        for name in targets:
            entry[name]["hash_equal"] = entry[name]["hash"] == reference
            if name.startswith("differential") and not entry[name]["hash_equal"]:
                raise SystemExit(f"Q{number}: {name} returned other results than the native file")
        results.append(entry)
        print(f"Q{number:>2} " + " ".join(f"{n} {entry[n]['median'] * 1000:8.0f} ms" for n in targets), flush=True)
    return results


# Each S3 request is a log event (remote_get, remote_list): the differential targets count theirs in a run of
# their own, with this after the LOAD.
LOGGING = "SET enable_logging = true"


def targets_for(args, server, endpoint, bucket, native, httpfs_python, httpfs_extension, cache_repository):
    # autoinstall_known_extensions off: CREATE SECRET (TYPE s3) makes DuckDB try to download httpfs first, which
    # here (no network) only costs a failed attempt per process; a user with httpfs installed never pays it.
    config = {"allow_unsigned_extensions": "true", "autoinstall_known_extensions": "false", "threads": args.threads}
    secret = secret_sql(server, endpoint, bucket)
    remote = f"ATTACH 'differential:s3://{bucket}/lake/heads/tpch/main' AS db"
    cache = [f"SET differential_repository = '{cache_repository}'",
             f"SET differential_remote_cache_size = '{args.cache_size}'"]
    return {
        "native_local": (PYTHON, {"config": config, "setup": [f"ATTACH '{native}' AS db (READ_ONLY)", "USE db"]}),
        "httpfs": (httpfs_python, {"config": config, "setup": [
            f"LOAD '{httpfs_extension}'", secret,
            f"ATTACH 's3://{bucket}/native/tpch-sf{args.sf:g}-v{HTTPFS_VERSION}.duckdb' AS db (READ_ONLY)", "USE db"]}),
        "differential_cold": (PYTHON, {"config": config, "count_requests": True,
                                       "setup": [f"LOAD '{EXTENSION}'", secret, remote, "USE db"]}),
        "differential_cache": (PYTHON, {"config": config, "count_requests": True,
                                        "setup": [f"LOAD '{EXTENSION}'", *cache, secret, remote, "USE db"]}),
        # The specification's follower row: a follower attached cold, reading what the head names.
        "differential_follower": (PYTHON, {"config": config, "count_requests": True,
                                           "setup": [f"LOAD '{EXTENSION}'", secret,
                                                     remote + " (FOLLOW true)", "USE db"]}),
    }


def phase_lines(report):
    """The warm cache's fresh process beside the local file's, phase by phase, and the floor one GET of the head
    sets: the goal allows that one revalidation, and the bench's latency is in every answer."""
    queries = report["queries"]
    if "phases" not in queries[0]["native_local"]:
        return []
    lines = ["", "Where a fresh process's time goes, warm disk cache against the local file: each phase's median "
             "per query, summed over the queries (the timed runs):", "",
             "| phase | native file, local | differential, warm disk cache | difference |", "|---|---|---|---|"]
    sums = {}
    for name in ("native_local", "differential_cache"):
        sums[name] = {p: sum(r[name]["phases"][p] for r in queries) * 1000 for p, _ in PHASES}
    for phase, label in PHASES:
        native, warm = sums["native_local"][phase], sums["differential_cache"][phase]
        lines.append(f"| {label} | {native:,.0f} ms | {warm:,.0f} ms | {warm - native:+,.0f} ms |")
    gets = [r["differential_cache"].get("attach_get_ms") for r in queries]
    if all(g is not None for g in gets):
        get_total = sum(gets)
        local = report["sums_of_medians"]["native_local"] * 1000
        warm, native = sums["differential_cache"], sums["native_local"]
        fixed = sum(warm[p] - native[p] for p, _ in PHASES if p != "query")
        lines += ["", f"The head's one GET during each `ATTACH` (its `remote_get` duration, in the counting run): "
                  f"{get_total:,.0f} ms over the {len(queries)} processes, so a fresh process that revalidates the head "
                  f"once cannot beat (local + GETs) / local = **{(local + get_total) / local:.2f}x** at this latency; "
                  f"the other phases' differences are what the extension itself adds. Before its query a fresh process "
                  f"pays {fixed / len(queries):.0f} ms more than the local file's ({get_total / len(queries):.0f} ms of "
                  f"it the GET), whatever the query; the query itself takes {warm['query'] / native['query']:.2f}x the "
                  f"local file's. The ratio to the local file is therefore that fixed cost over how long the local "
                  f"queries take: it is lower on a slower machine and higher on a faster one."]
    return lines


def write_markdown(report, path):
    sums = report["sums_of_medians"]
    lines = [
        "# S3 benchmark (bench/bench_s3.py)", "",
        f"TPC-H SF{report.get('sf', 1):g}, {report['threads']} threads, median of {report['runs']} fresh processes per query; versitygw "
        f"{report['versitygw']} on loopback behind Toxiproxy adding {report['latency_ms']} ms to every answer. "
        f"DuckDB {report['duckdb']} for differential and the local file; httpfs runs on DuckDB {HTTPFS_VERSION} "
        "(the newest with an httpfs package on PyPI) against a native file that version wrote from the same data. "
        f"Queries: {', '.join('Q' + str(r['query']) for r in report['queries'])}.",
        "", "| backend | sum of medians | vs httpfs |", "|---|---|---|"]
    for name, label in (("native_local", "native file, local (fresh process)"),
                        ("httpfs", f"native file on S3 via httpfs (DuckDB {HTTPFS_VERSION}), cold"),
                        ("differential_cold", "differential, branch head on S3, cold"),
                        ("differential_cache", "differential, branch head on S3, warm disk cache"),
                        ("differential_follower", "differential, follower of the branch head (`FOLLOW true`), cold")):
        if name not in sums:
            continue
        lines.append(f"| {label} | {sums[name] * 1000:,.0f} ms | {sums[name] / sums['httpfs']:.3f}x |")
    lines += ["", f"A warm disk cache against the same native file read locally, each query in a fresh process: "
              f"**{sums['differential_cache'] / sums['native_local']:.2f}x** (goal <= 1.3); cold against httpfs: "
              f"**{sums['differential_cold'] / sums['httpfs']:.3f}x** (goal <= 0.85)."]
    lines += ["", ("S3 requests per fresh process (`remote_get` and `remote_list` events in `duckdb_logs`), the ATTACH "
                   "and then the query, summed over the queries, with the cold and the warm disk cache; counted in one "
                   "more process per query and backend with `SET enable_logging = true`, apart from the timed runs, "
                   "which log nothing:"), "",
              "| backend | ATTACH (per process) | queries (sum over the queries) | bytes fetched by the queries (sum) |",
              "|---|---|---|---|"]
    for name, label in (("differential_cold", "cold"), ("differential_cache", "warm disk cache"),
                        ("differential_follower", "follower, cold")):
        counts = [r[name]["requests"] for r in report["queries"] if "requests" in r[name]]
        if counts:
            attach = sorted({c[0] for c in counts})
            fetched = [r[name]["fetched_bytes"][1] for r in report["queries"] if "fetched_bytes" in r[name]]
            fetched_text = f"{sum(fetched) / 2**20:,.0f} MiB" if len(fetched) == len(counts) else "-"
            lines.append(f"| {label} | {' or '.join(map(str, attach))} | {sum(c[1] for c in counts)} | "
                         f"{fetched_text} |")
    lines += phase_lines(report)
    export = report["export"]
    lines += ["", f"Export of a {export['file_bytes'] / 2**20:,.0f} MiB database:", "",
              "| snapshot | time | objects written | bytes uploaded | bytes / file size |", "|---|---|---|---|---|"]
    for step, data in export["snapshots"].items():
        lines.append(f"| {step} | {data['seconds']:.2f} s | {data['objects_written']} | {data['bytes_uploaded']:,} | "
                     f"{data['bytes_uploaded'] / export['file_bytes']:.4f} |")
    mismatched = [r["query"] for r in report["queries"] if not r["httpfs"]["hash_equal"]]
    lines += ["", "Every differential result hashed equal to the native file's."
              + (f" httpfs ({HTTPFS_VERSION}) differed on Q{mismatched}." if mismatched else
                 " So did every httpfs result."), "",
              "Reproduce: `bash scripts/bench.sh` (all benchmarks) or, after `make build`, "
              "`.venv/bin/python bench/bench_s3.py --tpch-extension <tpch.duckdb_extension>`."]
    path.write_text("\n".join(lines) + "\n")


def main():
    global EXTENSION
    parser = argparse.ArgumentParser()
    parser.add_argument("--tpch-extension", required=True)
    parser.add_argument("--work", default=str(REPO_ROOT / "bench" / "work"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--cache-size", default="8GB")
    parser.add_argument("--queries", default="", help="comma-separated query numbers (default: all 22)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--markdown", default=str(REPO_ROOT / "bench" / "S3_RESULTS.md"))
    parser.add_argument("--extension", default=str(EXTENSION), help="the differential extension to measure")
    args = parser.parse_args()
    EXTENSION = pathlib.Path(args.extension)
    work = pathlib.Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    httpfs_python, httpfs_extension = ensure_httpfs_venv()
    native, legacy, queries = prepare_native_files(args, work, httpfs_python)
    if args.queries:
        wanted = {int(q) for q in args.queries.split(",")}
        queries = [q for q in queries if q[0] in wanted]
    server = VersityGW()
    proxy = Toxiproxy(server.port, args.latency_ms)
    try:
        bucket = server.create_bucket("bench")
        put_file(server, bucket, f"native/{legacy.name}", legacy)
        endpoint = f"127.0.0.1:{proxy.port}"
        export = export_database(server, endpoint, bucket, native, work)
        cache_repository = work / "s3-cache-repository"
        shutil.rmtree(cache_repository, ignore_errors=True)
        targets = targets_for(args, server, endpoint, bucket, native, httpfs_python, httpfs_extension,
                              cache_repository)
        cache_python, cache_spec = targets["differential_cache"]
        for _, query in queries:  # fills the disk cache; not measured
            run_worker(cache_python, dict(cache_spec, query=query, count_requests=False))
        results = measure(args, targets, queries)
    finally:
        proxy.close()
        server.close()
    import duckdb

    report = {"duckdb": duckdb.__version__, "sf": args.sf, "versitygw": (REPO_ROOT / "VERSITYGW_VERSION").read_text().strip(),
              "latency_ms": args.latency_ms, "threads": args.threads, "runs": args.runs, "export": export,
              "queries": results,
              "sums_of_medians": {name: sum(r[name]["median"] for r in results) for name in results[0] if name != "query"}}
    write_markdown(report, pathlib.Path(args.markdown))
    print(pathlib.Path(args.markdown).read_text())
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
