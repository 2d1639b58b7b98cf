"""Ten times the data: TPC-H SF10 (about 10 GB as dbgen counts it) local warm and cold against native DuckDB
(bench_tpch.py), a snapshot and a branch after a one-row change, and from S3 a branch head cold and with a warm
disk cache against httpfs plus the export of the first and of an unchanged snapshot (bench_s3.py). Records the
machine's limits as met: disk used by each copy, memory, and the run's duration. Never part of the tests."""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

from bench_write import directory_bytes, stats

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH = REPO_ROOT / "bench"
PYTHON = REPO_ROOT / ".venv" / "bin" / "python"
EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"

# One measurement in a fresh process: a one-row change on a branch of the SF10 database, then the snapshot (or, on a
# scratch copy of the native file, DuckDB's own checkpoint of the same change), or a branch of that snapshot. Main stays as dbgen made it, so the TPC-H answers stay the native file's.
WORKER = r"""
import duckdb, json, sys, time
spec = json.loads(sys.argv[1])
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{spec['extension']}'")
con.execute(f"SET differential_repository = '{spec['repository']}'")
if spec["task"] == "native_checkpoint":
    con.execute(f"ATTACH '{spec['native']}' AS probe")
else:
    con.execute(f"ATTACH 'differential:tpch' AS probe (BRANCH '{spec['branch']}')")
if spec["task"] in ("snapshot", "native_checkpoint"):
    con.execute(f"UPDATE probe.lineitem SET l_comment = 'probe {spec['round']}' "
                "WHERE l_orderkey = 1 AND l_linenumber = 1")
    start = time.perf_counter()
    con.execute("CHECKPOINT probe" if spec["task"] == "native_checkpoint" else
                "CALL differential_create_snapshot('probe')")
else:
    start = time.perf_counter()
    con.execute(f"CALL differential_create_branch('tpch', '{spec['branch']}_{spec['round']}')")
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def footprint(path):
    """The bytes a file or a directory takes."""
    return path.stat().st_size if path.is_file() else directory_bytes(path)


def snapshot_and_branch(repository, native, runs):
    """Snapshot after a one-row change and branch creation on an SF10 database, each in a fresh process; beside the
    snapshot, native DuckDB's checkpoint of the same change on a scratch copy of the native file (the floor: a
    snapshot is a checkpoint plus the publication of the file's new version)."""
    import duckdb

    branch = f"sf10probe{time.time_ns()}"
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    con.execute(f"SET differential_repository = '{repository}'")
    if not con.execute("SELECT * FROM differential_snapshots('tpch')").fetchall():
        # bench_tpch.py loads main without a snapshot; one of the data as loaded is what the probe branches from.
        con.execute("ATTACH 'differential:tpch' AS tpch")
        con.execute("CALL differential_create_snapshot('tpch')")
        con.execute("DETACH tpch")
    con.execute(f"CALL differential_create_branch('tpch', '{branch}')")
    con.close()
    scratch = native.with_name(native.stem + "-checkpoint-scratch.duckdb")
    shutil.copyfile(native, scratch)
    out = {"snapshot": [], "native_checkpoint": [], "branch": []}
    # The snapshot and the native checkpoint take turns, so that both see the disk in the same state.
    rounds = [(task, run) for run in range(runs) for task in ("snapshot", "native_checkpoint")]
    rounds += [("branch", run) for run in range(runs)]
    for task, run in rounds:
        spec = {"extension": str(EXTENSION), "repository": str(repository), "branch": branch, "round": run,
                "task": task, "native": str(scratch)}
        result = subprocess.run([str(PYTHON), "-c", WORKER, json.dumps(spec)], capture_output=True, text=True,
                                check=True)
        out[task].append(json.loads(result.stdout.strip().splitlines()[-1])["seconds"])
    scratch.unlink()
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    con.execute(f"SET differential_repository = '{repository}'")
    for name in [branch] + [f"{branch}_{run}" for run in range(runs)]:
        con.execute(f"CALL differential_drop_branch('tpch', '{name}')")
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    con.close()
    return {task: stats(values) for task, values in out.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tpch-extension", required=True)
    parser.add_argument("--work", default=str(BENCH / "work"))
    parser.add_argument("--runs", type=int, default=3, help="warm runs per query, and snapshot/branch runs")
    parser.add_argument("--cold-runs", type=int, default=1)
    parser.add_argument("--s3-runs", type=int, default=1, help="fresh processes per query and S3 backend")
    parser.add_argument("--json", default=None)
    parser.add_argument("--reuse-local", action="store_true",
                        help="take the local TPC-H part from the JSON an earlier run left in --work")
    args = parser.parse_args()
    work = pathlib.Path(args.work).resolve()
    started = time.perf_counter()
    free_before = shutil.disk_usage(work).free
    tpch_json, s3_json = work / "tpch-sf10.json", work / "s3-sf10.json"
    reused = args.reuse_local and tpch_json.exists()
    if not reused:
        subprocess.run([str(PYTHON), str(BENCH / "bench_tpch.py"), "--sf", "10", "--tpch-extension",
                        args.tpch_extension, "--work", str(work), "--runs", str(args.runs), "--cold-runs",
                        str(args.cold_runs), "--json", str(tpch_json)], check=True)
    tpch_seconds = time.perf_counter() - started
    operations = snapshot_and_branch(work / "repository-sf10", work / "tpch-sf10-differential-bytes.duckdb",
                                     max(args.runs, 5))
    s3_started = time.perf_counter()
    subprocess.run([str(PYTHON), str(BENCH / "bench_s3.py"), "--sf", "10", "--tpch-extension", args.tpch_extension,
                    "--work", str(work), "--runs", str(args.s3_runs), "--json", str(s3_json),
                    "--markdown", str(work / "S3_SF10.md")], check=True)
    s3_footprint = {"export's local repository": footprint(work / "s3-repository"),
                    "disk cache": footprint(work / "s3-cache-repository")}
    report = {
        "tpch": json.loads(tpch_json.read_text()),
        "operations": operations,
        "s3": json.loads(s3_json.read_text()),
        "limits": {
            "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
            "cores": os.cpu_count(),
            "disk_free_before": free_before,
            "footprint": {
                "native file (dbgen)": footprint(work / "tpch-sf10.duckdb"),
                "native file holding differential's bytes": footprint(work / "tpch-sf10-differential-bytes.duckdb"),
                "repository": footprint(work / "repository-sf10"),
                "native file of DuckDB 1.5.5 (httpfs)": footprint(work / "tpch-sf10-v1.5.5.duckdb"),
                **s3_footprint,
            },
            "tpch_seconds": None if reused else tpch_seconds,
            "s3_seconds": time.perf_counter() - s3_started,
        },
    }
    print(json.dumps(report["operations"], indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
