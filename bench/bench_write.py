"""Write-path, snapshot, branch and time-travel costs: native DuckDB vs differential, side by side.

Every measurement runs in a fresh subprocess so peak resident memory (ru_maxrss) is per run."""
import argparse
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"

WORKER = r'''
import json, pathlib, resource, sys, time
import duckdb
task, target, work, extra = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), json.loads(sys.argv[4])
con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": extra.get("threads", 4)})
con.execute("SET enable_progress_bar = false")
# Native is DuckDB as its users have it: without the extension, whose loaded code moves the heap's layout and so
# the allocator's work (about 3% of a one-row commit's instructions, either way, counted with callgrind).
if target == "native":
    con.execute(f"ATTACH '{work / 'native.duckdb'}' AS db")
else:
    con.execute(f"LOAD '{extra['extension']}'")
    con.execute(f"SET differential_repository = '{work / 'repository'}'")
    con.execute("ATTACH 'differential:bench' AS db")
out = {}
start = time.perf_counter()
if task == "bulk_load":
    con.execute(f"ATTACH '{extra['source']}' AS src (READ_ONLY)")
    con.execute("CREATE TABLE db.lineitem AS SELECT * FROM src.lineitem")
    con.execute("CHECKPOINT db")
elif task == "small_transactions":
    con.execute("CREATE TABLE db.events (id BIGINT, note VARCHAR)")
    if extra.get("log"):
        con.execute("CALL enable_logging('differential')")
    start = time.perf_counter()
    for i in range(extra["count"]):
        con.execute("INSERT INTO db.events VALUES (?, 'event')", [i])
    if extra.get("log"):
        out["events"] = dict(con.execute(
            "SELECT event, count(*) FROM duckdb_logs_parsed('differential') GROUP BY ALL").fetchall())
elif task == "grow":
    con.execute(f"CREATE TABLE db.big AS SELECT range AS id, hash(range) AS h, 'payload ' || range AS s FROM range({extra['rows']})")
    con.execute("CHECKPOINT db")
    if target != "native":
        con.execute("CALL differential_create_snapshot('db')")
elif task == "snapshot_after_one_row":
    con.execute("UPDATE db.big SET h = 0 WHERE id = 17")
    start = time.perf_counter()
    con.execute("CALL differential_create_snapshot('db')")
elif task == "branch":
    start = time.perf_counter()
    con.execute(f"CALL differential_create_branch('bench', 'b{time.time_ns()}')")
elif task == "time_travel":
    query = "SELECT count(*), sum(h) FROM db.big{} WHERE id % 7 = 3"
    con.execute(query.format(""))
    con.execute(query.format(" AT (VERSION => 1)"))
    timings = {"head": [], "version": []}
    for _ in range(extra["runs"]):
        for key, at in (("head", ""), ("version", " AT (VERSION => 1)")):
            t = time.perf_counter()
            con.execute(query.format(at)).fetchall()
            timings[key].append(time.perf_counter() - t)
    out["timings"] = timings
out["seconds"] = time.perf_counter() - start
con.close()
out["max_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
# Bytes this process caused to be written to storage (the kernel's accounting, fsyncs included).
for line in open("/proc/self/io"):
    if line.startswith("write_bytes:"):
        out["write_bytes"] = int(line.split()[1])
print(json.dumps(out))
'''


def directory_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            total += os.path.getsize(os.path.join(root, name))
    return total


def worker_command(task, target, work, **extra):
    """The command line of one WORKER process (the extension as built unless `extra` names another)."""
    extra.setdefault("extension", str(EXTENSION))
    return [sys.executable, "-c", WORKER, task, target, str(work), json.dumps(extra)]


def strace_counts(trace):
    """Calls per system call name from an `strace -c` summary."""
    calls = {}
    for line in trace.read_text().splitlines():
        words = line.split()
        # Rows are "% time, seconds, usecs/call, calls, [errors], syscall"; the total row's name is "total".
        if len(words) >= 5 and words[0][0].isdigit() and words[-1] != "total":
            calls[words[-1]] = calls.get(words[-1], 0) + int(words[3])
    return calls


def run(task, target, work, **extra):
    out = subprocess.run(worker_command(task, target, work, **extra), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{task} on {target} failed:\n{out.stderr}")
    # The report is the worker's last line; anything before it is DuckDB's own output.
    return json.loads(out.stdout.strip().splitlines()[-1])


def durable_writes(target, work, count):
    """fsync-family calls per commit of `count` one-row commits, counted by strace (None without strace), and for
    differential its own log's events per commit: segment flushes and metadata transactions."""
    out = {}
    trace = work / "strace.txt"
    cmd = worker_command("small_transactions", target, work, count=count, log=target == "diff")
    if shutil.which("strace"):
        cmd = ["strace", "-f", "-c", "-o", str(trace), "-e", "trace=fsync,fdatasync,sync_file_range,msync"] + cmd
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"durable writes on {target} failed:\n{result.stderr}")
    if trace.exists():
        out["syncs_per_commit"] = sum(strace_counts(trace).values()) / count
    events = json.loads(result.stdout.strip().splitlines()[-1]).get("events", {})
    if events:
        out["segment_flushes_per_commit"] = events.get("segment_fsync", 0) / count
        out["metadata_commits_per_commit"] = events.get("group_commit", 0) / count
    return out


def fresh(work):
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return work


def stats(values):
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def small_commit_runs(base, runs, count, **extra):
    """Seconds of `count` one-row commits, min / median / max per side over `runs` runs alternating native and
    differential, each run a fresh process in a fresh directory under `base`."""
    seconds = {"native": [], "diff": []}
    for _ in range(runs):
        for target in seconds:
            seconds[target].append(run("small_transactions", target, fresh(base / target), count=count,
                                       **extra)["seconds"])
    return {target: stats(values) for target, values in seconds.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True, help="a native TPC-H database with lineitem")
    parser.add_argument("--work", default=str(REPO_ROOT / "bench" / "work" / "write"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--small-transactions", type=int, default=10000)
    # A run's time moves from run to run (fsync latency, the machine's other load): medians of 7 alternating runs.
    parser.add_argument("--small-runs", type=int, default=7)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    base = pathlib.Path(args.work).resolve()
    report = {}

    loads = {"native": [], "diff": []}
    rss = {"native": [], "diff": []}
    written = {"native": [], "diff": []}
    write_bytes = {"native": [], "diff": []}
    for _ in range(args.runs):
        for target in ("native", "diff"):
            work = fresh(base / target)
            result = run("bulk_load", target, work, source=args.source)
            loads[target].append(result["seconds"])
            rss[target].append(result["max_rss_kib"])
            written[target].append(directory_bytes(work))
            write_bytes[target].append(result.get("write_bytes", 0))
    report["bulk_load"] = {t: stats(v) for t, v in loads.items()}
    report["bulk_load"]["ratio"] = report["bulk_load"]["diff"]["median"] / report["bulk_load"]["native"]["median"]
    report["write_amplification"] = statistics.median(written["diff"]) / statistics.median(written["native"])
    report["bytes_written"] = {t: statistics.median(v) for t, v in write_bytes.items()}
    report["written_per_native_byte"] = statistics.median(write_bytes["diff"]) / max(1, statistics.median(
        written["native"]))
    report["native_written_per_native_byte"] = statistics.median(write_bytes["native"]) / max(1, statistics.median(
        written["native"]))
    report["peak_rss_ratio"] = statistics.median(rss["diff"]) / statistics.median(rss["native"])
    report["peak_rss_kib"] = {t: statistics.median(v) for t, v in rss.items()}

    report["small_transactions"] = small_commit_runs(base, args.small_runs, args.small_transactions)
    report["small_transactions"]["count"] = args.small_transactions
    report["small_transactions"]["runs"] = args.small_runs
    report["small_transactions"]["ratio"] = (
        report["small_transactions"]["diff"]["median"] / report["small_transactions"]["native"]["median"]
    )
    # Where the time goes: durable writes per commit (the whole run, setup included, over 1000 commits).
    report["small_transactions"]["durable_writes"] = {
        target: durable_writes(target, fresh(base / target), 1000) for target in ("native", "diff")}

    # About 14 bytes a row once DuckDB compresses it: 7.2M rows make ~100 MB, 72M rows ~1 GB.
    sizes = {"100MB": 7_200_000, "1GB": 72_000_000}
    report["snapshot"] = {}
    report["branch"] = {}
    for label, rows in sizes.items():
        work = fresh(base / f"snap-{label}")
        run("grow", "diff", work, rows=rows)
        db_bytes = directory_bytes(work / "repository")
        snaps = [run("snapshot_after_one_row", "diff", work)["seconds"] for _ in range(args.runs)]
        branches = [run("branch", "diff", work)["seconds"] for _ in range(args.runs)]
        report["snapshot"][label] = {"stored_bytes": db_bytes, **stats(snaps)}
        report["branch"][label] = stats(branches)
        if label == "1GB":
            tt = run("time_travel", "diff", work, runs=5)["timings"]
            report["time_travel"] = {k: stats(v) for k, v in tt.items()}
            report["time_travel"]["ratio"] = (
                report["time_travel"]["version"]["median"] / report["time_travel"]["head"]["median"]
            )
    report["snapshot"]["ratio_1GB_to_100MB"] = report["snapshot"]["1GB"]["median"] / report["snapshot"]["100MB"]["median"]
    report["branch"]["ratio_1GB_to_100MB"] = report["branch"]["1GB"]["median"] / report["branch"]["100MB"]["median"]

    print(json.dumps(report, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
