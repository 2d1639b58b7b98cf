"""History that scales: everyday operations on a repository with 10,000 snapshots, 200 branches and 20 databases,
side by side with the same operations on a fresh repository, in one run.

The large repository is built once and cached under ~/.cache/differential/ keyed by HISTORY_FORMAT and the
store format, so reruns skip the build; each run works on a copy (metadata copied, segment files hard-linked), so
the cached one never changes.
Every repetition runs in a fresh process per repository, alternating fresh and large."""
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
CACHE = pathlib.Path(os.environ.get("DIFFERENTIAL_CACHE", pathlib.Path.home() / ".cache" / "differential"))
# Bump when the shape of the built history changes; the store format is part of the key as well.
HISTORY_FORMAT = "history-v2"

# Shape of one database's history: main takes FORK_EVERY snapshots, then a branch forks from main's head and takes
# BRANCH_SNAPSHOTS; repeated for each branch; main finishes with the rest. 20 x (main + 9 branches) = 200 branches.
SHAPE = {"databases": 20, "branches_per_database": 9, "snapshots_per_database": 500, "fork_every": 30,
         "branch_snapshots": 25}
FRESH_SHAPE = {"databases": 2, "branches_per_database": 9, "snapshots_per_database": 0, "fork_every": 1,
               "branch_snapshots": 1}

BUILD_PROCESSES = 4

BUILDER = r'''
import json, sys, time
import duckdb
repo, shape, ext, databases = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": 1})
con.execute(f"LOAD '{ext}'")
con.execute("SET enable_progress_bar = false")
con.execute(f"SET differential_repository = '{repo}'")
row = 0
def commit_and_snapshot(alias, count):
    global row
    for _ in range(count):
        con.execute(f"INSERT INTO {alias}.t VALUES (?, 'event')", [row])
        row += 1
        con.execute(f"CALL differential_create_snapshot('{alias}')")
for d in databases:
    name = f"db{d:02d}"
    con.execute(f"ATTACH 'differential:{name}' AS m")
    # A primary key: merges (and so their previews) match rows by it.
    con.execute("CREATE TABLE m.t (id BIGINT PRIMARY KEY, note VARCHAR)")
    for b in range(1, shape["branches_per_database"] + 1):
        commit_and_snapshot("m", shape["fork_every"])
        con.execute(f"CALL differential_create_branch('{name}', 'b{b:02d}')")
        con.execute(f"ATTACH 'differential:{name}' AS b (BRANCH 'b{b:02d}')")
        commit_and_snapshot("b", shape["branch_snapshots"])
        con.execute("DETACH b")
    per_fork = shape["fork_every"] + shape["branch_snapshots"]
    commit_and_snapshot("m", max(1, shape["snapshots_per_database"] - shape["branches_per_database"] * per_fork))
    con.execute("DETACH m")
    print(f"built {name} ({time.strftime('%H:%M:%S')})", file=sys.stderr, flush=True)
if not databases:
    con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
    print(json.dumps({"snapshots": con.execute(
        "SELECT sum(snapshot_count) FROM differential_databases()").fetchone()[0]}))
'''

WORKER = r'''
import json, subprocess, sys, time
import duckdb
repo, ext, GARBAGE = sys.argv[1], sys.argv[2], sys.argv[3]
con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": 2})
con.execute(f"LOAD '{ext}'")
con.execute("SET enable_progress_bar = false")
con.execute(f"SET differential_repository = '{repo}'")
out = {}
def timed(key, sql, params=None):
    start = time.perf_counter()
    result = con.execute(sql, params or []).fetchall()
    out[key] = time.perf_counter() - start
    return result
# The first ATTACH of the process also opens the repository (SQLite, schema check, recovery).
timed("attach_first", "ATTACH 'differential:db00' AS d")
timed("attach", "ATTACH 'differential:db01' AS d1")
timed("at_version", "SELECT count(*), sum(id) FROM d.t AT (VERSION => 2)")
# An old time on another database (its snapshot 2, not attached yet): the snapshot lookup by time, then the attach.
(old,) = con.execute("SELECT epoch_us(created_at) FROM differential_snapshots('db01', page_size => 1, "
                     "before_snapshot_id => 3)").fetchone()
timed("at_timestamp", f"SELECT count(*), sum(id) FROM d1.t AT (TIMESTAMP => make_timestamptz({old}))")
con.execute("INSERT INTO d.t VALUES (?, 'bench')", [-time.time_ns()])
timed("create_snapshot", "CALL differential_create_snapshot('d')")
timed("create_branch", f"CALL differential_create_branch('db00', 'bench{time.time_ns()}')")
# One page, the 50 newest; a build without paging arguments (an older build) lists all and DuckDB keeps 50.
try:
    timed("snapshots_page", "SELECT * FROM differential_snapshots('db00', page_size => 50)")
    out["snapshots_paged"] = True
except duckdb.BinderException:
    timed("snapshots_page", "SELECT * FROM differential_snapshots('db00') ORDER BY snapshot_id DESC LIMIT 50")
    out["snapshots_paged"] = False
heads = dict(con.execute("SELECT branch_name, head_snapshot_id FROM differential_branches('db00')").fetchall())
# First the same number of rows on both: the fresh repository's (main head, b09 head), and on the large one two
# snapshots of main's first run (ids 1 to FORK_EVERY, a line) whose ancestry has as many rows. Then the contract's
# rows of (main head, b09 head), a second call in the process on both.
fresh_rows = int(sys.argv[4])
pair = [heads["main"], heads["b09"]] if fresh_rows == 0 else [fresh_rows, fresh_rows - 2]
rows = timed("merge_ancestry_same_rows", "SELECT * FROM differential_merge_ancestry('db00', ?, ?)", pair)
out["same_rows_ancestry_rows"] = len(rows)
if fresh_rows and len(rows) != fresh_rows:
    raise SystemExit(f"the same-rows ancestry returned {len(rows)} rows, the fresh one {fresh_rows}")
rows = timed("merge_ancestry", "SELECT * FROM differential_merge_ancestry('db00', ?, ?)", [heads["main"], heads["b09"]])
out["ancestry_rows"] = len(rows)
out["selected_base"] = rows[0][5]
# One page of the 10 newest rows: as many rows on both (the fresh ancestry has 11), so the ratio is the history's
# cost, not a larger page's. A build without paging arguments has no such call.
try:
    rows = timed("merge_ancestry_page", "SELECT * FROM differential_merge_ancestry('db00', ?, ?, page_size => 10)",
                 [heads["main"], heads["b09"]])
except duckdb.BinderException:
    rows = timed("merge_ancestry_page", "SELECT * FROM differential_merge_ancestry('db00', ?, ?) ORDER BY "
                 "snapshot_id DESC LIMIT 10", [heads["main"], heads["b09"]])
if len(rows) != 10:
    raise SystemExit(f"the ancestry page returned {len(rows)} rows, not 10")
timed("merge_base_preview", "SELECT * FROM differential_merge_branch_preview('db00', 'main', 'b09')")
# Garbage of a fixed size on both: clean up what earlier steps left, then another process (so that its segment file
# is sealed and nobody's current one) writes 200,000 rows on a branch it then drops, unsnapshotted.
con.execute("CALL differential_cleanup_old_files(cleanup_all => true)")
subprocess.run([sys.executable, "-c", GARBAGE, repo, ext], check=True)
freed = timed("cleanup_old_files", "SELECT * FROM differential_cleanup_old_files(cleanup_all => true)")
out["cleanup"] = dict(zip([c[0] for c in con.description], [int(v) for v in freed[0]]))
print(json.dumps(out))
'''

GARBAGE = r'''
import sys
import duckdb
repo, ext = sys.argv[1], sys.argv[2]
con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": 1})
con.execute(f"LOAD '{ext}'")
con.execute("SET enable_progress_bar = false")
con.execute(f"SET differential_repository = '{repo}'")
con.execute("CALL differential_create_branch('db00', 'garbage')")
con.execute("ATTACH 'differential:db00' AS g (BRANCH 'garbage')")
con.execute("CREATE TABLE g.junk AS SELECT range AS id, hash(range) AS h FROM range(200000)")
con.execute("CHECKPOINT g")
con.execute("DETACH g")
con.execute("CALL differential_drop_branch('db00', 'garbage')")
'''

OPERATIONS = [
    ("attach_first", "`ATTACH` (first in the process: opens the repository)"),
    ("attach", "`ATTACH` (another database)"),
    ("at_version", "`SELECT ... AT (VERSION => 2)` (first read: attaches the old snapshot)"),
    ("at_timestamp", "`SELECT ... AT (TIMESTAMP => t)`, t the time of snapshot 2 (first read: finds and attaches it)"),
    ("create_snapshot", "`differential_create_snapshot` after a one-row insert"),
    ("create_branch", "`differential_create_branch`"),
    ("snapshots_page", "`differential_snapshots` (one page: 50 newest)"),
    ("merge_ancestry_same_rows", "`differential_merge_ancestry` returning as many rows on both (fresh: main head, "
     "b09 head; large: two snapshots of main's first line)"),
    ("merge_ancestry", "`differential_merge_ancestry` (main head, b09 head; second call in the process)"),
    ("merge_ancestry_page", "`differential_merge_ancestry` one page (main head, b09 head; `page_size => 10`, 10 rows "
     "on both)"),
    ("merge_base_preview", "base selection of a merge: `differential_merge_branch_preview` (main, b09)"),
    ("cleanup_old_files", "`differential_cleanup_old_files` with the same garbage on both"),
]


def store_format():
    """The store format the built repository is written in; a newer metadata schema migrates a cached copy on open,
    a newer store format cannot read it, so the format is part of the cache key."""
    for header in (REPO_ROOT / "src").rglob("*.hpp"):
        for line in header.read_text().splitlines():
            if "STORE_FORMAT_VERSION =" in line:
                return line.split("=")[1].strip().rstrip(";")
    return "unknown"


def build(repo, shape):
    """Builds the repository at repo (removed first); returns the snapshot count and the seconds it took."""
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    start = time.perf_counter()
    # The build waits on fsyncs, not the CPU: BUILD_PROCESSES writers, each its own databases, overlap them.
    builders = [subprocess.Popen([sys.executable, "-c", BUILDER, str(repo), json.dumps(shape), str(EXTENSION),
                                  json.dumps(list(range(shape["databases"]))[i::BUILD_PROCESSES])])
                for i in range(min(BUILD_PROCESSES, shape["databases"]))]
    if any(b.wait() != 0 for b in builders):
        raise SystemExit(f"building {repo} failed")
    # Then one cleanup, so that the repository starts without garbage, and the count.
    out = subprocess.run([sys.executable, "-c", BUILDER, str(repo), json.dumps(shape), str(EXTENSION), "[]"],
                         stdout=subprocess.PIPE, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"building {repo} failed")
    return json.loads(out.stdout.strip().splitlines()[-1])["snapshots"], time.perf_counter() - start


def cached_large():
    """The cached large repository and how it was built; built now if the cache has none of this format."""
    key = f"{HISTORY_FORMAT}-store{store_format()}-" + "-".join(str(v) for v in SHAPE.values())
    repo = CACHE / "bench-history" / key
    info_file = repo.with_suffix(".json")
    if info_file.exists() and repo.exists():
        info = json.loads(info_file.read_text())
        info["cached"] = True
        return repo, info
    print(f"building the large history repository at {repo} (once per format)", file=sys.stderr)
    snapshots, seconds = build(repo, SHAPE)
    info = {"snapshots": snapshots, "build_seconds": seconds, "key": key, "cached": False}
    info_file.write_text(json.dumps(info))
    return repo, info


def copy_repository(source, target):
    """A working copy of the cached repository: the metadata copied, the segment files hard-linked (a segment file is
    never written again once its process is gone; cleanup unlinks or replaces whole files), so a run costs seconds."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("segments"))
    (target / "segments").mkdir()
    for segment in (source / "segments").iterdir():
        os.link(segment, target / "segments" / segment.name)


def run_worker(repo, same_rows=0):
    """same_rows: 0 on the fresh repository; on the large one, the rows its ancestry returned there."""
    out = subprocess.run([sys.executable, "-c", WORKER, str(repo), str(EXTENSION), GARBAGE, str(same_rows)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"worker on {repo} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def stats(values):
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main():
    global EXTENSION
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default=str(REPO_ROOT / "bench" / "work" / "history"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", default=None)
    parser.add_argument("--extension", default=str(EXTENSION), help="the extension to measure (default: this build)")
    args = parser.parse_args()
    EXTENSION = pathlib.Path(args.extension).resolve()
    work = pathlib.Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cached, info = cached_large()
    large = work / "large"
    copy_repository(cached, large)
    fresh = work / "fresh"
    fresh_snapshots, _ = build(fresh, FRESH_SHAPE)
    # One untimed round first: it migrates the copy if this build's metadata schema is newer, and warms the page cache.
    run_worker(large, run_worker(fresh)["same_rows_ancestry_rows"])
    # Measured on the working copy after that round (migrated to this build's schema, its indexes included; the
    # round ends with a cleanup, which checkpoints SQLite's WAL into the file).
    metadata_bytes = (large / "metadata.sqlite").stat().st_size
    samples = {"fresh": [], "large": []}
    load = []
    for _ in range(args.runs):
        # Each round adds a snapshot to db00's main on both, so the fresh ancestry grows by one row a round: the
        # large repository's same-rows call follows the fresh one's of the same round.
        samples["fresh"].append(run_worker(fresh))
        load.append(os.getloadavg()[0])
        samples["large"].append(run_worker(large, samples["fresh"][-1]["same_rows_ancestry_rows"]))
        load.append(os.getloadavg()[0])
    report = {
        "runs": args.runs,
        "large": {"snapshots": info["snapshots"], "branches": SHAPE["databases"] * (SHAPE["branches_per_database"] + 1),
                  "databases": SHAPE["databases"], "build_seconds": info["build_seconds"], "cached": info["cached"],
                  "cache_key": info["key"], "metadata_bytes": metadata_bytes,
                  "metadata_bytes_per_snapshot": metadata_bytes / info["snapshots"],
                  "ancestry_rows": samples["large"][0]["ancestry_rows"],
                  "same_rows_ancestry_rows": samples["large"][0]["same_rows_ancestry_rows"]},
        "fresh": {"snapshots": fresh_snapshots, "databases": FRESH_SHAPE["databases"],
                  "branches": FRESH_SHAPE["databases"] * (FRESH_SHAPE["branches_per_database"] + 1),
                  "ancestry_rows": samples["fresh"][0]["ancestry_rows"],
                  "same_rows_ancestry_rows": samples["fresh"][0]["same_rows_ancestry_rows"]},
        "snapshots_paged": samples["large"][0]["snapshots_paged"],
        "cleanup": {t: samples[t][0]["cleanup"] for t in samples},
        "extension": str(EXTENSION),
        "load_average": stats(load),
        "operations": [],
    }
    for key, label in OPERATIONS:
        entry = {"key": key, "label": label, "fresh": stats([s[key] for s in samples["fresh"]]),
                 "large": stats([s[key] for s in samples["large"]])}
        entry["ratio"] = entry["large"]["median"] / entry["fresh"]["median"]
        report["operations"].append(entry)
        print(f"{label:80s} fresh {entry['fresh']['median'] * 1000:8.1f} ms  large "
              f"{entry['large']['median'] * 1000:8.1f} ms  ratio {entry['ratio']:.2f}")
    print(f"metadata bytes per snapshot: {report['large']['metadata_bytes_per_snapshot']:.0f}; "
          f"load average {report['load_average']['min']:.1f}-{report['load_average']['max']:.1f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
