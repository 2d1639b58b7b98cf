"""The extension built by two compilers, each beside native DuckDB: TPC-H SF1 warm and 10,000 small commits.

The extension carries its own statically linked copy of DuckDB, so the compiler that builds it decides how fast
DuckDB's own code runs inside it (the wheel is built by clang with ThinLTO). Two builds of one extension cannot share
a process, so every round runs one process per build, in an order that alternates from round to round; native DuckDB
runs in each of those processes beside the build, and the ratio of a build is always against the native runs of its
own processes. Small commits alternate native, one build and the other in fresh processes (bench_write.py's worker)."""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

BENCH = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import bench_tpch  # noqa: E402
import bench_write  # noqa: E402

WORKER = r'''
import json, pathlib, sys
sys.path.insert(0, sys.argv[1])
import bench_tpch
extension, tpch_extension, work, runs, threads = sys.argv[2], sys.argv[3], pathlib.Path(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
con = bench_tpch.connect(tpch_extension, threads, extension)
bench_tpch.prepare(con, 1.0, work)
print(json.dumps(bench_tpch.warm_results(con, bench_tpch.tpch_queries(con), runs)))
'''


def tpch_round(build, args):
    out = subprocess.run([sys.executable, "-c", WORKER, str(BENCH), build, args.tpch_extension, args.work,
                          str(args.tpch_runs), str(args.threads)], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"TPC-H with {build} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def rotated(items, round_number):
    shift = round_number % len(items)
    return items[shift:] + items[:shift]


def stats(values):
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def tpch_summary(rounds):
    """Per query, every timing of every round pooled per side; the ratio of the sums of medians, the worst query,
    and the spread of the per-round ratios."""
    queries = [r["query"] for r in rounds[0]]
    native_medians, diff_medians = [], []
    for index in range(len(queries)):
        native_medians.append(statistics.median(t for r in rounds for t in r[index]["times"]["native"]))
        diff_medians.append(statistics.median(t for r in rounds for t in r[index]["times"]["diff"]))
    per_query = [d / n for n, d in zip(native_medians, diff_medians)]
    worst = max(range(len(queries)), key=lambda i: per_query[i])
    round_ratios = [sum(q["diff"]["median"] for q in r) / sum(q["native"]["median"] for q in r) for r in rounds]
    return {"native_sum_of_medians": sum(native_medians), "diff_sum_of_medians": sum(diff_medians),
            "ratio": sum(diff_medians) / sum(native_medians), "worst_query": queries[worst],
            "worst_ratio": per_query[worst], "queries_above_1_10": [q for q, r in zip(queries, per_query) if r > 1.10],
            "round_ratios": stats(round_ratios)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", action="append", required=True, metavar="NAME=EXTENSION",
                        help="a build of the extension to compare (give two or more)")
    parser.add_argument("--compiler", action="append", default=[], metavar="NAME=VERSION",
                        help="the compiler and flags of a build, for the report")
    parser.add_argument("--shipped", required=True, help="the build the project ships (scripts/build.sh's default)")
    parser.add_argument("--tpch-extension", required=True)
    parser.add_argument("--work", required=True, help="the TPC-H work directory of bench_tpch.py")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tpch-runs", type=int, default=3, help="runs per query per side in every process")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--commits", type=int, default=10000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    builds = dict(b.split("=", 1) for b in args.build)
    compilers = dict(c.split("=", 1) for c in args.compiler)
    names = list(builds)

    tpch = {name: [] for name in names}
    commits = {name: [] for name in ["native"] + names}
    commit_work = pathlib.Path(args.work) / "compilers-commits"
    for round_number in range(args.rounds):
        for name in rotated(names, round_number):
            tpch[name].append(tpch_round(builds[name], args))
        for target in rotated(["native"] + names, round_number):
            work = bench_write.fresh(commit_work)
            extension = builds.get(target, builds[names[0]])
            result = bench_write.run("small_transactions", "native" if target == "native" else "diff", work,
                                     count=args.commits, extension=extension)
            commits[target].append(result["seconds"])
        print(f"round {round_number + 1}/{args.rounds} done", file=sys.stderr)

    report = {"shipped": args.shipped, "rounds": args.rounds, "tpch_runs": args.tpch_runs, "threads": args.threads, "commits": args.commits,
              "builds": {}}
    for name in names:
        report["builds"][name] = {
            "extension": builds[name],
            "compiler": compilers.get(name, ""),
            "tpch": tpch_summary(tpch[name]),
            "small_commits": {
                "native": stats(commits["native"]), "diff": stats(commits[name]),
                "ratio_of_medians": statistics.median(commits[name]) / statistics.median(commits["native"]),
                "ratio_of_minimums": min(commits[name]) / min(commits["native"]),
            },
        }
    # The faster build is the one whose combined ratios (TPC-H warm times small commits) are lower.
    report["faster"] = min(names, key=lambda n: report["builds"][n]["tpch"]["ratio"]
                         * report["builds"][n]["small_commits"]["ratio_of_medians"])
    print(json.dumps(report, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
