"""What a small commit costs: timed (10,000 one-row commits, native DuckDB and differential alternating, each run a
fresh process), then counted: instructions (callgrind) and system calls (strace) per one-row commit, split by the code
that runs them, and sampled: CPU time per one-row commit by the same split (perf's cpu-clock). The clock moves with
the machine's load and the disk's fsync latency from run to run; the counts do not, and show what the commit path
itself adds. Never part of the tests."""
import argparse
import collections
import json
import pathlib
import re
import shutil
import subprocess

from bench_write import fresh, small_commit_runs, strace_counts, worker_command

DUCKDB = "DuckDB's code (the wheel's, or the extension's copy)"
# Callgrind's and perf's object names, mapped to what they are.
OBJECTS = (
    ("_duckdb.cpython", DUCKDB),
    ("differential.duckdb_extension", "the extension"),
    ("libsqlite3", "SQLite"),
    ("libc.so", "libc (malloc, locks, copies)"),
    ("[kernel", "the kernel (system calls)"),
)
# perf report's rows: "overhead  samples  object  [.] symbol" ([k] for the kernel's).
SAMPLED = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[[.k]\]\s+(.*?)\s*$")
SAMPLES_PER_SECOND = 4000
ANNOTATED = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)\s*(?:\[(.+)\])?\s*$")


def object_label(path, function):
    for marker, label in OBJECTS:
        if marker in path:
            if label == "the extension":
                # The extension links its own copy of DuckDB, and the storage code of a differential database runs
                # from there. Which copy runs a function defined in DuckDB's headers (a vtable's, an inline one's)
                # follows where the object was made, and moved between builds of the same source by up to 100 K
                # instructions per commit either way: the two copies are one row.
                return "differential's own code" if "differential::" in function else DUCKDB
            return label
    return "other (Python, libstdc++, the loader, the kernel's vDSO)"


def commits(target, work, count):
    """One process committing `count` one-row transactions on one thread (bench_write.py's worker)."""
    return worker_command("small_transactions", target, work, count=count, threads=1)


def instructions(target, work, count):
    """Instructions of one process committing `count` one-row transactions, by object (callgrind_annotate)."""
    out = work / "callgrind.out"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + commits(target, work, count),
                   capture_output=True, text=True, check=True)
    annotated = subprocess.run(["callgrind_annotate", "--threshold=100", str(out)], capture_output=True, text=True,
                               check=True).stdout
    by_object = collections.Counter()
    for line in annotated.splitlines():
        match = ANNOTATED.match(line)
        if not match or "PROGRAM TOTALS" in line:
            continue
        by_object[object_label(match.group(3) or "", match.group(2))] += int(match.group(1).replace(",", ""))
    return by_object


def cpu_time(target, work, count):
    """Microseconds of CPU by object of one process committing `count` one-row transactions, from perf's cpu-clock
    samples: the clock the timed runs show, where instructions run at the pace their cache misses allow."""
    data = work / "perf.data"
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(SAMPLES_PER_SECOND), "-o", str(data), "--"]
                   + commits(target, work, count), capture_output=True, text=True, check=True)
    report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "-n", "--sort", "dso,sym"],
                            capture_output=True, text=True, check=True).stdout
    by_object = collections.Counter()
    for line in report.splitlines():
        match = SAMPLED.match(line)
        if match:
            by_object[object_label(match.group(2), match.group(3))] += int(match.group(1)) * 1e6 / SAMPLES_PER_SECOND
    return by_object


def syscalls(target, work, count):
    """System calls of one process committing `count` one-row transactions, by name (strace -c)."""
    trace = work / "strace.txt"
    subprocess.run(["strace", "-f", "-c", "-o", str(trace)] + commits(target, work, count), capture_output=True,
                   text=True, check=True)
    return collections.Counter(strace_counts(trace))


def per_commit(measure, target, base, low, high):
    """The difference between a run of `high` commits and one of `low`, per commit: start-up, ATTACH and the
    table's creation cancel out."""
    small = measure(target, fresh(base / f"{target}-{low}"), low)
    large = measure(target, fresh(base / f"{target}-{high}"), high)
    return {key: (large[key] - small[key]) / (high - low) for key in set(small) | set(large)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default=str(pathlib.Path(__file__).resolve().parent / "work" / "commit-cost"))
    parser.add_argument("--low", type=int, default=100)
    parser.add_argument("--high", type=int, default=300)
    # The measure: the ratio of medians of at least 7 alternating runs (and the ratio of minimums beside it).
    parser.add_argument("--timed-runs", type=int, default=7)
    parser.add_argument("--timed-commits", type=int, default=10000)
    # CPU time is sampled over longer runs than the counts: at 4,000 samples a second, a commit is 3 or 4 samples.
    parser.add_argument("--sampled-low", type=int, default=500)
    parser.add_argument("--sampled-high", type=int, default=5000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    missing = [tool for tool in ("valgrind", "callgrind_annotate", "strace") if not shutil.which(tool)]
    if missing:
        raise SystemExit(f"bench_commit_cost.py needs {', '.join(missing)} (Debian: apt-get install valgrind strace)")
    base = pathlib.Path(args.work).resolve()
    report = {"low": args.low, "high": args.high, "sampled_low": args.sampled_low, "sampled_high": args.sampled_high,
              "samples_per_second": SAMPLES_PER_SECOND, "threads": 1}
    if args.timed_runs:
        report["timed"] = {"runs": args.timed_runs, "count": args.timed_commits,
                           **small_commit_runs(base / "timed", args.timed_runs, args.timed_commits, threads=1)}
    for target in ("native", "diff"):
        report[target] = {
            "instructions": per_commit(instructions, target, base, args.low, args.high),
            "syscalls": per_commit(syscalls, target, base, args.low, args.high),
        }
        # perf's software clock works where hardware counters are not offered (virtual machines); without perf at
        # all, the report says the row was not measured.
        if shutil.which("perf"):
            report[target]["cpu_us"] = per_commit(cpu_time, target, base, args.sampled_low, args.sampled_high)
    print(json.dumps(report, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
