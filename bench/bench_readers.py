"""Multi-process reads: 8 reader processes time-travelling (AT (VERSION => n) over several snapshots) while
one writer process commits and takes snapshots, beside the same readers on a quiet repository.

Each round runs three windows: quiet (readers alone), elsewhere (the same writer on a repository of its own: the
machine as loaded as with the writer, the readers' repository quiet) and busy (the writer on the readers'
repository). Each process reads differential_io_counters() before and after its measured window: the readers' waits
on the metadata's lock (a statement that found another connection's SQLite lock; writers hold it) and on the reader
pins' lock (pins.sqlite, held by other readers and cleanup) are counted apart; a longest wait is the process's
maximum since it started (warm-up included).
Reproduce: `.venv/bin/python bench/bench_readers.py --json bench/work/readers.json` (or `make bench`)."""
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
EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"

COMMON = r'''
import json, sys, time
import duckdb
role, repository, extension, start_at, seconds, versions, newest_every = (sys.argv[1], sys.argv[2], sys.argv[3],
    float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]))
con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": 1})
con.execute(f"LOAD '{extension}'")
con.execute(f"SET differential_repository = '{repository}'")
def counters():
    return dict(con.execute("SELECT counter, value FROM differential_io_counters()").fetchall())
'''

READER = COMMON + r'''
con.execute("ATTACH 'differential:readers' AS db (READ_ONLY)")
query = "SELECT count(*), sum(v) FROM db.t AT (VERSION => {}) WHERE id % 7 = 3"
ids = [r[0] for r in con.execute("SELECT snapshot_id FROM differential_snapshots('readers') ORDER BY 1").fetchall()]
ids = ids[:versions]
for n in ids:
    con.execute(query.format(n)).fetchall()  # warm-up: attaches each snapshot once
time.sleep(max(0.0, start_at - time.time()))
before, begin = counters(), time.perf_counter()
done, slowest = 0, 0.0
newest_reads = 0
while time.perf_counter() - begin < seconds:
    t = time.perf_counter()
    if newest_every and done % newest_every == newest_every - 1:
        # The newest snapshot: while the writer snapshots, a new one, attached (and pinned) at first use.
        newest = con.execute("SELECT max(snapshot_id) FROM differential_snapshots('readers')").fetchone()[0]
        con.execute(query.format(newest)).fetchall()
        newest_reads += 1
    else:
        con.execute(query.format(ids[done % len(ids)])).fetchall()
    slowest = max(slowest, time.perf_counter() - t)
    done += 1
elapsed, after = time.perf_counter() - begin, counters()
delta = {k: after[k] - before[k] for k in after if not k.endswith("_max_us")}
print(json.dumps({"queries": done, "seconds": elapsed, "slowest_query": slowest, "counters": delta,
                  "newest_reads": newest_reads,
                  "busy_wait_max_us": after["metadata_busy_wait_max_us"],
                  "pin_wait_max_us": after["pin_busy_wait_max_us"]}))
'''

WRITER = COMMON + r'''
con.execute("ATTACH 'differential:readers' AS db")
time.sleep(max(0.0, start_at - time.time()))
before, begin = counters(), time.perf_counter()
commits = snapshots = 0
while time.perf_counter() - begin < seconds:
    con.execute("INSERT INTO db.t SELECT 10000000 + range, random() FROM range(100)")
    commits += 1
    if commits % 10 == 0:
        con.execute("CALL differential_create_snapshot('db')")
        snapshots += 1
    time.sleep(0.01)
elapsed, after = time.perf_counter() - begin, counters()
delta = {k: after[k] - before[k] for k in after if not k.endswith("_max_us")}
print(json.dumps({"commits": commits, "snapshots": snapshots, "seconds": elapsed, "counters": delta,
                  "busy_wait_max_us": after["metadata_busy_wait_max_us"]}))
'''


def setup(repository, rows, versions):
    """A database of `rows` rows with `versions` snapshots, each after an update of a tenth of the rows."""
    shutil.rmtree(repository, ignore_errors=True)
    script = COMMON + f'''
con.execute("ATTACH 'differential:readers' AS db")
con.execute("CREATE TABLE db.t AS SELECT range AS id, random() AS v FROM range({rows})")
for n in range({versions}):
    con.execute(f"UPDATE db.t SET v = v + 1 WHERE id % 10 = {{n}}")
    con.execute("CALL differential_create_snapshot('db')")
'''
    subprocess.run([sys.executable, "-c", script, "setup", str(repository), str(EXTENSION), "0", "0", "0", "0"],
                   check=True)


def run_round(repository, args, writer_repository):
    """One window of the readers on `repository`, beside a writer on `writer_repository` (None: no writer)."""
    start_at = time.time() + 10.0  # time for every process to load, attach and warm up on a loaded machine
    readers = args.readers
    tail = [str(EXTENSION), str(start_at), str(args.seconds), str(args.versions), str(args.newest_every)]
    procs = [subprocess.Popen([sys.executable, "-c", READER, "reader", str(repository)] + tail,
                              stdout=subprocess.PIPE, text=True) for _ in range(readers)]
    busy = writer_repository is not None
    if busy:
        procs.append(subprocess.Popen([sys.executable, "-c", WRITER, "writer", str(writer_repository)] + tail,
                                      stdout=subprocess.PIPE, text=True))
    load = []
    while any(p.poll() is None for p in procs):
        load.append(os.getloadavg()[0])
        time.sleep(1.0)
    results = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"a benchmark process failed (exit {p.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    reader_results = results[:readers]
    return {
        "throughput": sum(r["queries"] / r["seconds"] for r in reader_results),
        "slowest_query": max(r["slowest_query"] for r in reader_results),
        "reader_busy_waits": sum(r["counters"]["metadata_busy_waits"] for r in reader_results),
        "reader_busy_wait_max_us": max(r["busy_wait_max_us"] for r in reader_results),
        "reader_busy_wait_total_us": sum(r["counters"]["metadata_busy_wait_total_us"] for r in reader_results),
        "reader_pin_waits": sum(r["counters"]["pin_busy_waits"] for r in reader_results),
        "reader_pin_wait_max_us": max(r["pin_wait_max_us"] for r in reader_results),
        "reader_pin_transactions": sum(r["counters"]["pin_write_transactions"] for r in reader_results),
        "reader_write_transactions": sum(r["counters"]["metadata_write_transactions"] for r in reader_results),
        "reader_fs_reads": sum(r["counters"]["fs_read"] for r in reader_results),
        "newest_reads": sum(r["newest_reads"] for r in reader_results),
        "writer": results[readers] if busy else None,
        "load": load,
    }


def stats(values):
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default=str(REPO_ROOT / "bench" / "work" / "readers"))
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--versions", type=int, default=6)
    parser.add_argument("--newest-every", type=int, default=50,
                        help="every n-th query of a reader reads the newest snapshot (0: only the first versions)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    repository = pathlib.Path(args.work).resolve() / "repository"
    elsewhere = pathlib.Path(args.work).resolve() / "elsewhere"
    setup(repository, args.rows, args.versions)
    setup(elsewhere, args.rows, args.versions)
    # "elsewhere": the same writer on a repository of its own, so the readers' repository is quiet while the
    # machine is as loaded as in "busy"; busy / elsewhere is what the writer costs readers through the repository.
    writers = {"quiet": None, "elsewhere": elsewhere, "busy": repository}
    rounds = {"quiet": [], "elsewhere": [], "busy": []}
    for _ in range(args.rounds):
        for phase in ("quiet", "elsewhere", "busy"):
            rounds[phase].append(run_round(repository, args, writers[phase]))
            r = rounds[phase][-1]
            print(f"{phase}: {r['throughput']:.1f} queries/s, reader busy waits {r['reader_busy_waits']}, longest "
                  f"{r['reader_busy_wait_max_us'] / 1000:.1f} ms", file=sys.stderr)
    throughput = {p: stats([r["throughput"] for r in v]) for p, v in rounds.items()}
    writer_runs = [r["writer"] for r in rounds["busy"]]
    report = {
        "readers": args.readers, "rounds": args.rounds, "seconds": args.seconds, "rows": args.rows,
        "versions": args.versions, "newest_every": args.newest_every, "throughput": throughput,
        "newest_reads": {p: sum(r["newest_reads"] for r in v) for p, v in rounds.items()},
        "ratio": throughput["busy"]["median"] / throughput["quiet"]["median"],
        "ratio_to_elsewhere": throughput["busy"]["median"] / throughput["elsewhere"]["median"],
        "slowest_query": {p: max(r["slowest_query"] for r in v) for p, v in rounds.items()},
        "reader_busy_waits": {p: sum(r["reader_busy_waits"] for r in v) for p, v in rounds.items()},
        "reader_busy_wait_max_us": {p: max(r["reader_busy_wait_max_us"] for r in v) for p, v in rounds.items()},
        "reader_busy_wait_total_us": {p: sum(r["reader_busy_wait_total_us"] for r in v) for p, v in rounds.items()},
        "reader_pin_waits": {p: sum(r["reader_pin_waits"] for r in v) for p, v in rounds.items()},
        "reader_pin_wait_max_us": {p: max(r["reader_pin_wait_max_us"] for r in v) for p, v in rounds.items()},
        "reader_pin_transactions": {p: sum(r["reader_pin_transactions"] for r in v) for p, v in rounds.items()},
        "reader_write_transactions": {p: sum(r["reader_write_transactions"] for r in v) for p, v in rounds.items()},
        "reader_fs_reads": {p: sum(r["reader_fs_reads"] for r in v) for p, v in rounds.items()},
        "writer": {"commits": sum(w["commits"] for w in writer_runs),
                   "snapshots": sum(w["snapshots"] for w in writer_runs),
                   "busy_wait_max_us": max(w["busy_wait_max_us"] for w in writer_runs)},
        "load_average": stats([x for v in rounds.values() for r in v for x in r["load"]]),
    }
    print(json.dumps(report, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
