"""Writes bench/RESULTS.md and bench/tpch_ratios.png from the JSON the benchmark drivers wrote
(`report.py tpch.json [write.json [merge.json [history.json [readers.json [compilers.json]]]]]`, or
`report.py --tpch tpch.json` / `--write write.json` / `--history history.json` / `--merge merge.json` /
`--readers readers.json` / `--compilers compilers.json` / `--sf10 sf10.json` to replace only that section)."""
import json
import os
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BENCH = pathlib.Path(__file__).resolve().parent


def ms(seconds):
    return f"{seconds * 1000:.1f}"


def spread(entry):
    return f"{ms(entry['min'])} / {ms(entry['median'])} / {ms(entry['max'])}"


def storage_rewritten(result):
    """How much of the table each side's storage rewrote, as the merge benchmark measured it."""
    return "; ".join(f"{side}: {v['segments']} segments in {v['row_groups']} row groups"
                     for side, v in result.get("storage_changed", {}).items())


def warm_calls_line(tpch):
    """The extension's file system calls during the warm runs, as this run counted them (differential_io_counters)."""
    queries = [q for q in tpch["queries"] if "fs_calls" in q]
    if not queries:
        return "- Extension file system calls during warm runs: not counted in this run"
    totals = {}
    for q in queries:
        for key, n in q["fs_calls"].items():
            target, kind = key.split(":")
            if target == "diff":
                totals[kind] = totals.get(kind, 0) + n
    touching = [f"Q{q['query']}" for q in queries if any(k.startswith("diff:") for k in q["fs_calls"])]
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(totals.items())) or "none"
    return (f"- Extension file system calls during the {tpch['runs']} warm runs of all {len(queries)} queries "
            f"(`differential_io_counters`): {kinds}; queries that made any: {', '.join(touching) or 'none'}")


def durable_writes_line(counts):
    """What one small commit costs in durable writes, as this run counted them."""
    if not counts:
        return "- Durable writes per small commit: not measured in this run"
    native, diff = counts["native"], counts["diff"]
    line = "- Durable writes per small commit (1000 one-row commits, the run's setup included): "
    if "syncs_per_commit" in native:
        line += (f"fsync/fdatasync calls (strace) native {native['syncs_per_commit']:.2f}, differential "
                 f"{diff['syncs_per_commit']:.2f}; ")
    return line + (f"differential's own log: {diff.get('segment_flushes_per_commit', 0):.2f} segment flushes and "
                   f"{diff.get('metadata_commits_per_commit', 0):.2f} metadata commits per commit")


READERS_HEADING = "## Multi-process reads"


def readers_lines(readers):
    """The multi-process reads benchmark's section (bench/bench_readers.py), every figure from that run's JSON."""
    throughput = readers["throughput"]
    waits, longest = readers["reader_busy_waits"], readers["reader_busy_wait_max_us"]
    pin_waits, pin_longest = readers["reader_pin_waits"], readers["reader_pin_wait_max_us"]
    load = readers["load_average"]
    phases = [("quiet", "quiet: readers alone"),
              ("elsewhere", "the writer on a repository of its own (machine loaded, readers' repository quiet)"),
              ("busy", "the writer committing and snapshotting on the readers' repository")]

    def per_phase(values, scale=1.0, digits=0):
        return ", ".join(f"{values[p] / scale:.{digits}f} {p}" for p, _ in phases)

    return [
        READERS_HEADING,
        "",
        f"{readers['readers']} reader processes (one DuckDB thread each) run `SELECT count(*), sum(v) FROM t AT "
        f"(VERSION => n) WHERE id % 7 = 3` over {readers['versions']} snapshots of a {readers['rows']:,}-row table, "
        f"every {readers['newest_every']}th query on the newest snapshot instead (with the writer, often one it has "
        "just taken: attached, and pinned, at first use; "
        f"{readers['newest_reads']['busy']} such reads with the writer), for "
        f"{readers['seconds']:.0f} s per window, while one writer process commits 100 rows every "
        f"10 ms and takes a snapshot every 10 commits ({readers['writer']['commits']} commits and "
        f"{readers['writer']['snapshots']} snapshots in all on the readers' repository); {readers['rounds']} rounds "
        "of three windows. Reproduce: `.venv/bin/python bench/bench_readers.py --json bench/work/readers.json` "
        "(or `make bench`).",
        "",
        "| window | reader throughput, queries/s (min / median / max) |",
        "|---|---|",
    ] + [
        f"| {label} | {throughput[p]['min']:.1f} / {throughput[p]['median']:.1f} / {throughput[p]['max']:.1f} |"
        for p, label in phases
    ] + [
        "",
        f"**Reader throughput with the writer / quiet (medians): {readers['ratio']:.2f}** (goal >= 0.9). "
        f"With the writer / with the same writer on another repository: {readers['ratio_to_elsewhere']:.2f}.",
        "",
        f"- Readers' waits on the metadata's lock (writers hold it; counted by the busy handler, "
        f"`differential_io_counters`) in the measured windows: {per_phase(waits)}; "
        f"on the reader pins' lock (`pins.sqlite`: other readers, cleanup): {per_phase(pin_waits)}",
        f"- Longest of those waits in any reader process since it started (warm-up included): metadata "
        f"{per_phase(longest, 1000, 1)} ms; pins {per_phase(pin_longest, 1000, 1)} ms",
        f"- Metadata write transactions the readers began in the measured windows: "
        f"{per_phase(readers['reader_write_transactions'])}; pin transactions: "
        f"{per_phase(readers['reader_pin_transactions'])}; extension file reads: "
        f"{per_phase(readers['reader_fs_reads'])}",
        f"- Slowest single reader query (ms): {per_phase(readers['slowest_query'], 0.001, 1)}; the writer's longest "
        f"lock wait {readers['writer']['busy_wait_max_us'] / 1000:.1f} ms",
        f"- Load average (1 min) during the run: {load['min']:.1f} to {load['max']:.1f} (median {load['median']:.1f}) "
        f"on this {os.cpu_count()}-core machine; the writer's own CPU is taken from the same {os.cpu_count()} cores "
        "the readers use (the "
        "elsewhere window measures that share alone).",
    ]


HISTORY_HEADING = "## History that scales"


def history_lines(history):
    """The history benchmark's section (bench/bench_history.py), every figure from that run's JSON."""
    large, fresh, load = history["large"], history["fresh"], history["load_average"]
    ops = history["operations"]
    over = [op for op in ops if op["ratio"] > 1.5]
    build = (f"built in {large['build_seconds']:.0f} s, cached under `~/.cache/differential/bench-history/"
             f"{large['cache_key']}`" + ("; this run reused the cache" if large["cached"] else ""))
    lines = [
        HISTORY_HEADING,
        "",
        f"Everyday operations on a repository with {large['snapshots']:,} snapshots, {large['branches']} branches and "
        f"{large['databases']} databases ({build}) beside the same operations on a fresh one ({fresh['snapshots']} "
        f"snapshots, {fresh['branches']} branches, {fresh['databases']} databases); {history['runs']} repetitions, "
        "each a new process per repository, alternating fresh and large. Reproduce: "
        f"`.venv/bin/python bench/bench_history.py --runs {history['runs']} --json bench/work/history.json` then "
        "`.venv/bin/python bench/report.py --history bench/work/history.json` (or `make bench`).",
        "",
        "| operation | fresh ms (min / median / max) | large ms (min / median / max) | ratio large / fresh, medians "
        "(goal <= 1.5) | ratio of minimums |",
        "|---|---|---|---:|---:|",
    ]
    for op in ops:
        lines.append(f"| {op['label']} | {spread(op['fresh'])} | {spread(op['large'])} | {op['ratio']:.2f} | "
                     f"{op['large']['min'] / op['fresh']['min']:.2f} |")
    lines += [
        "",
        f"- Metadata per snapshot: {large['metadata_bytes'] / 1e6:.1f} MB of `metadata.sqlite` for "
        f"{large['snapshots']:,} snapshots, {large['metadata_bytes_per_snapshot']:,.0f} bytes per snapshot (the "
        "working copy after the untimed first round, in this build's schema)",
        f"- `differential_merge_ancestry` returned {large['ancestry_rows']} rows on the large repository, "
        f"{fresh['ancestry_rows']} on the fresh one (one per snapshot reachable from either head); the call returning "
        f"as many rows on both returned {large.get('same_rows_ancestry_rows', '?')} on the large repository and "
        f"{fresh.get('same_rows_ancestry_rows', '?')} on the fresh one",
        "- `differential_snapshots` was read " + ("with `page_size => 50`" if history.get("snapshots_paged") else
                                                 "whole, DuckDB keeping 50 rows (this build has no paging arguments)"),
        ("- Garbage each cleanup removed (first repetition): " + "; ".join(
            f"{t} {c['bytes_freed'] / 1e6:.1f} MB in {c['segments_deleted']} segment(s), {c['chunks_deleted']} chunks, "
            f"{c['index_pages_deleted']} index pages, {c['roots_deleted']} roots"
            for t, c in history["cleanup"].items()) if history.get("cleanup") else "- Garbage removed: not recorded"),
        "- The base selection a merge makes (`SelectBaseByWalk`: the `selected_base` of `differential_merge_ancestry`, "
        "read by a walk that stops at the base) is inside the preview row, with what every merge does around it "
        "(attaching the three snapshots, comparing the table)",
        f"- Operations above 1.5x in this run: {', '.join(op['key'] for op in over) if over else 'none'}",
        "- Operations whose ratio of minimums is above 1.5 in this run: " + (', '.join(
            f"{op['key']} ({op['large']['min'] / op['fresh']['min']:.2f})" for op in ops
            if op['large']['min'] / op['fresh']['min'] > 1.5) or 'none'),
        f"- Load average (1 min) during the run: {load['min']:.1f} to {load['max']:.1f} (median {load['median']:.1f}) "
        f"on this {os.cpu_count()}-core machine: single runs of a few milliseconds move by tens of percent under "
        "load, so read the medians, and the ratios only where they are far from 1.",
    ]
    # Only what this run measured: the rows an operation returns by contract, beside its time.
    rows = {"merge_ancestry": (large["ancestry_rows"], fresh["ancestry_rows"],
                               "returns one row per snapshot reachable from either head (its contract)")}
    explained = []
    for op in over:
        minimums = op["large"]["min"] / op["fresh"]["min"]
        if op["key"] in rows:
            big, small, why = rows[op["key"]]
            explained.append(f"- {op['label']} {why}: {big} rows on the large repository, {small} on the fresh one "
                             f"({big / small:.1f}x the rows for {op['ratio']:.2f}x the time).")
        else:
            explained.append(f"- {op['label']}: {op['ratio']:.2f}x (ratio of minimums {minimums:.2f}); this run "
                             "measured no cause: time it alone before reading growth into it.")
    return lines + (["", "Operations above 1.5x, with what this run measured about them:", ""] + explained
                    if explained else [])


MERGE_HEADING = "## Merges"


def rows_label(rows):
    """1M, 3M, 10M; other sizes (a smoke run's) spelled out."""
    return f"{rows // 1_000_000}M" if rows % 1_000_000 == 0 else f"{rows:,}"


def min_median_max(entry, prefix=""):
    return f"{entry[prefix + 'min_ms']:.0f} / {entry[prefix + 'median_ms']:.0f} / {entry[prefix + 'max_ms']:.0f}"


def merge_table(merge):
    """One row per merge shape: its phases, its total, the native floor of the same shape and the excess."""
    lines = [
        "| rows | changes per side | planning ms | comparison ms | application ms | publication ms | total ms (min / "
        "median / max) | native floor ms (min / median / max) | excess over the floor ms (min / median / max) | "
        "storage rewritten (ours; theirs) |",
        "|---:|---|---:|---:|---:|---:|---|---|---|---|",
    ]
    rows = [(key, "spread", r) for key, r in merge["results"].items()]
    rows += [(key, "confined", r) for key, r in merge.get("clustered", {}).items()]
    for key, kind, r in rows:
        count, changes = key.split("/")
        floor_key = key + ("/confined" if kind == "confined" else "")
        floor = merge["native_floor"].get(floor_key)
        excess = merge.get("excess", {}).get(floor_key)
        total = f"{r['total_min_ms']:.0f} / {r['total_ms']:.0f} / {r['total_max_ms']:.0f}"
        lines.append(f"| {int(count):,} | {changes} {kind} | {r.get('planning_ms', 0):.0f} | {r['comparison_ms']:.0f} | "
                     f"{r['application_ms']:.0f} | {r['publication_ms']:.0f} | {total} | "
                     f"{spread(floor) if floor else '-'} | {min_median_max(excess) if excess else '-'} | "
                     f"{storage_rewritten(r)} |")
    return lines


def merge_goal_lines(merge):
    """The goals on the excess over the native floor, each with its ratio of medians and median of rounds' ratios."""
    small, middle, large = (rows_label(n) for n in merge["sizes"])

    def ratio(key):
        r = merge[key]
        return f"**{r['of_medians']:.2f}**, median of each round's ratio {r['median_of_rounds']:.2f}"

    excess = merge["excess"]
    s, m, lg = (excess[f"{n}/100"] for n in merge["sizes"])
    mc = excess[f"{merge['sizes'][1]}/100/confined"]
    return [
        f"- **Excess over the floor, {middle} / {small}, 100 spread updates per side**: {m['median_ms']:.0f} ms / "
        f"{s['median_ms']:.0f} ms = {ratio('excess_ratio_3M_to_1M')} (goal <= 1.3).",
        f"- **Excess over the floor at {middle}, spread / confined**: {m['median_ms']:.0f} ms / {mc['median_ms']:.0f} ms"
        f" = {ratio('excess_ratio_spread_to_confined_3M')} (goal <= 2).",
        f"- **Excess over the floor, {large} / {small}, 100 spread updates per side**: {lg['median_ms']:.0f} ms / "
        f"{s['median_ms']:.0f} ms = {ratio('excess_ratio_10M_to_1M')} (goal <= 2).",
    ]


def merge_lines(merge):
    """The merges section: every figure comes from this run's merge.json."""
    small, middle = (rows_label(n) for n in merge["sizes"][:2])
    lines = [
        MERGE_HEADING,
        "",
        f"`differential_merge_branch` of an orders table (primary key) with sparse, non-conflicting updates on both "
        f"sides, into a new branch; {merge['runs']} rounds, each round merging once on every shape and writing the "
        "native floor of every shape, in turns (starting one further along each round); each merge result checked to "
        "hold exactly both sides' changes. The **native floor** is plain DuckDB (no extension) writing the same "
        "result: both sides' changes, already known by key, applied to a copy of the base table in one transaction "
        "and checkpointed. A merged snapshot is a checkpointed DuckDB file, so it cannot cost less; the **excess** is "
        "the merge's total minus the floor of the same shape in the same round. Phases are medians. Reproduce: "
        "`.venv/bin/python bench/bench_merge.py --json bench/work/merge.json` then `.venv/bin/python bench/report.py "
        "--merge bench/work/merge.json` (or `make bench`).",
        "",
    ] + merge_table(merge) + [
        "",
        "Spread changes touch every row group; confined ones the newest rows only (each side updates 100 of the "
        "newest 400). A merge compares by position (row id) the row groups both sides left at the base's rows, "
        "reading only the columns a side rewrote there, and matches the other rows by key (`docs/MERGES.md` §10b).",
        "",
    ] + merge_goal_lines(merge) + [
        f"- The totals, for comparison: t({middle}) / t({small}), 100 spread updates per side: "
        f"{merge['ratio_3M_to_1M_100']:.2f} (median of each round's ratio {merge['paired_ratio_3M_to_1M_100']:.2f}); "
        f"300 per side: {merge['ratio_3M_to_1M_300']:.2f}; {middle} spread / confined: "
        f"{merge['ratio_spread_to_confined_3M']:.2f}; the floor alone grows {merge['native_ratio_3M_to_1M_100']:.2f}x "
        f"from {small} to {middle} spread and costs {merge['native_ratio_spread_to_confined_3M']:.2f}x the confined "
        f"write at {middle}: DuckDB rewrites a changed column of every row group a change lands in.",
        "- The merge curve (floor and excess per size): `merge_curve.png` below.",
    ]
    wide = merge.get("untouched_tables")
    if wide:
        lines.append(f"- {wide['tables']} tables of {wide['rows_per_table']:,} rows, each side updating 100 rows of a "
                     f"different table: {wide['shortcut_ms']:.0f} ms, and {wide['reference_ms']:.0f} ms with the "
                     f"reference method (`SET differential_merge_skip_unchanged = false`), {wide['speedup']:.1f}x; "
                     "identical results.")
    if merge.get("load_average"):
        load = merge["load_average"]
        lines.append(f"- Load average (1 min) during the run: {min(load):.1f} to {max(load):.1f} on this "
                     f"{os.cpu_count()}-core machine.")
    return lines + ["", "![merge curve](merge_curve.png)"]


def merge_chart(merge):
    """Floor and excess, stacked, per size: spread and confined side by side."""
    sizes = merge["sizes"]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.38
    for offset, (kind, suffix, color) in enumerate((("spread", "", "#3a6ea5"), ("confined", "/confined", "#8fb3d9"))):
        x = [i + (offset - 0.5) * width for i in range(len(sizes))]
        floor = [merge["native_floor"][f"{n}/100{suffix}"]["median"] * 1000 for n in sizes]
        excess = [merge["excess"][f"{n}/100{suffix}"]["median_ms"] for n in sizes]
        ax.bar(x, floor, width, color="#bbbbbb", edgecolor=color, label=f"native floor ({kind})")
        ax.bar(x, excess, width, bottom=floor, color=color, label=f"excess over the floor ({kind})")
    ax.set_xticks(range(len(sizes)), [f"{rows_label(n)} rows" for n in sizes])
    ax.set_ylabel("ms (medians), 100 updates per side")
    ax.set_title("differential_merge_branch: the native floor and the merge's excess")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.35)
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    fig.tight_layout()
    fig.savefig(BENCH / "merge_curve.png", dpi=110)


SF10_HEADING = "## Ten times the data: TPC-H SF10"


def sf10_lines(sf10):
    """SF10 local and from S3, history operations on it, and the machine's limits (bench/bench_sf10.py)."""
    tpch, s3, ops, limits = sf10["tpch"], sf10["s3"], sf10["operations"], sf10["limits"]
    sums, cold = s3["sums_of_medians"], tpch.get("cold")
    export = s3["export"]
    gib = 2 ** 30

    def sec(value):
        return f"{value:,.1f} s"

    lines = [
        SF10_HEADING,
        "",
        f"TPC-H SF10 ({tpch['threads']} threads): locally, the median of {tpch['runs']} warm runs per query (one "
        f"warm-up) and of {cold['runs'] if cold else 0} cold run(s) (OS page cache dropped, a fresh DuckDB); from S3 "
        f"(versitygw behind Toxiproxy's {s3['latency_ms']} ms, as in `S3_RESULTS.md`), {s3['runs']} fresh process(es) "
        "per query and backend. Reproduce: `.venv/bin/python bench/bench_sf10.py --tpch-extension <tpch "
        "extension> --json bench/work/sf10.json` then `.venv/bin/python bench/report.py --sf10 bench/work/sf10.json` "
        "(or `make bench-sf10`).",
        "",
        "| measurement (sum over Q1-Q22) | baseline | differential | ratio |",
        "|---|---|---|---:|",
        f"| local, warm (baseline: native DuckDB on a file holding the same bytes) | "
        f"{sec(tpch['native_sum_of_medians'])} | {sec(tpch['diff_sum_of_medians'])} | {tpch['ratio']:.3f} |",
    ]
    if cold:
        lines.append(f"| local, cold (baseline: the same) | {sec(cold['native_sum_of_medians'])} | "
                     f"{sec(cold['diff_sum_of_medians'])} | {cold['ratio']:.3f} |")
    lines += [
        f"| from S3, cold (baseline: httpfs on DuckDB 1.5.5) | {sec(sums['httpfs'])} | "
        f"{sec(sums['differential_cold'])} | {sums['differential_cold'] / sums['httpfs']:.3f} |",
        f"| from S3, warm disk cache (baseline: httpfs) | {sec(sums['httpfs'])} | {sec(sums['differential_cache'])} | "
        f"{sums['differential_cache'] / sums['httpfs']:.3f} |",
        f"| from S3, warm disk cache (baseline: the native file read locally, a fresh process per query) | "
        f"{sec(sums['native_local'])} | {sec(sums['differential_cache'])} | "
        f"{sums['differential_cache'] / sums['native_local']:.2f} |",
        "",
        "| operation on the SF10 database | min / median / max |",
        "|---|---|",
        f"| `differential_create_snapshot` after a one-row change (a fresh process each) | "
        f"{spread(ops['snapshot'])} ms |",
    ]
    if "native_checkpoint" in ops:
        snap, floor = ops["snapshot"]["median"], ops["native_checkpoint"]["median"]
        lines.append(f"| native DuckDB's `CHECKPOINT` of the same change, taking turns with the snapshot (a fresh "
                     f"process each, a scratch copy of the native file; the snapshot's floor) | "
                     f"{spread(ops['native_checkpoint'])} ms; the snapshot's median is {snap / floor:.2f}x it, "
                     f"{(snap - floor) * 1e3:+.1f} ms |")
    lines += [
        f"| `differential_create_branch` (a fresh process each) | {spread(ops['branch'])} ms |",
    ]
    for step, label in (("first", "export of the first snapshot"), ("unchanged", "export of an unchanged snapshot")):
        data = export["snapshots"][step]
        lines.append(f"| {label} | {data['seconds']:.2f} s, {data['bytes_uploaded']:,} bytes uploaded "
                     f"({data['bytes_uploaded'] / export['file_bytes']:.4f} of the {export['file_bytes'] / gib:.2f} GiB "
                     f"file), {data['objects_written']} objects |")
    footprint = "; ".join(f"{name} {size / gib:.2f} GiB" for name, size in limits["footprint"].items())
    lines += [
        "",
        f"- Machine limits met: {limits['cores']} cores and {limits['memory_bytes'] / gib:.0f} GiB of memory, so "
        "the warm runs read from DuckDB's buffer pool and the OS page cache (SF10 fits), and the cold runs read "
        f"the disk; {limits['disk_free_before'] / gib:.0f} GiB of disk were free when the run began, and the copies "
        f"it keeps take: {footprint}. The run took "
        + (f"{limits['tpch_seconds'] / 60:.0f} min locally (warm and cold) and " if limits["tpch_seconds"] else "")
        + f"{limits['s3_seconds'] / 60:.0f} min for S3 (writing the 1.5.5 copy through Parquet, uploading both "
        "copies, the cold reads behind the added latency): the reason for its fewer runs per query.",
        f"- Every differential result hashed equal to the native file's, locally and from S3.",
    ]
    return lines


COMPILERS_HEADING = "## Compilers"


def compilers_lines(compilers):
    """The extension built by each compiler, each beside native DuckDB (bench/bench_compilers.py)."""
    builds = compilers["builds"]
    lines = [
        COMPILERS_HEADING,
        "",
        f"The extension with its statically linked copy of DuckDB, built by each compiler; {compilers['rounds']} rounds, "
        "each running one process per build in an order alternating from round to round, native DuckDB measured in "
        f"the same processes. TPC-H SF1 warm: {compilers['tpch_runs']} runs per query and side in every process after "
        "a warm-up, medians over all rounds; small commits: one fresh process per run, native and the builds rotating. "
        "Reproduce: `make bench-compilers` (`scripts/bench_compilers.sh`).",
        "",
        "| build | compiler and flags | TPC-H warm ratio (sum of medians) | worst query | per-round ratio "
        "(min / median / max) | "
        f"{compilers['commits']} small commits: differential ms (min / median / max) | ratio of medians | "
        "ratio of minimums |",
        "|---|---|---:|---|---|---|---:|---:|",
    ]
    for name, build in builds.items():
        tpch, commits = build["tpch"], build["small_commits"]
        rounds = tpch["round_ratios"]
        marker = " **(kept)**" if name == compilers["shipped"] else ""
        lines.append(
            f"| {name}{marker} | {build['compiler']} | {tpch['ratio']:.3f} | Q{tpch['worst_query']} "
            f"({tpch['worst_ratio']:.2f}) | {rounds['min']:.3f} / {rounds['median']:.3f} / {rounds['max']:.3f} | "
            f"{spread(commits['diff'])} | {commits['ratio_of_medians']:.2f} | {commits['ratio_of_minimums']:.2f} |")
    native = next(iter(builds.values()))["small_commits"]["native"]
    lines += [
        "",
        f"- Native DuckDB's {compilers['commits']} small commits in the same rounds: {spread(native)} ms",
        f"- Faster in this run (the lower product of the two ratios): {compilers['faster']}; the build `make build` "
        f"ships and the tests load: {compilers['shipped']}",
    ]
    return lines


COMMIT_COST_HEADING = "## Where a small commit's cost goes (counted and sampled)"


def commit_cost_lines(cost):
    """Instructions and system calls per one-row commit, by the code that runs them (bench/bench_commit_cost.py)."""
    native, diff = cost["native"], cost["diff"]
    rows = sorted(set(native["instructions"]) | set(diff["instructions"]),
                  key=lambda key: -max(native["instructions"].get(key, 0), diff["instructions"].get(key, 0)))
    total_native, total_diff = sum(native["instructions"].values()), sum(diff["instructions"].values())
    lines = [
        COMMIT_COST_HEADING,
        "",
        f"Instructions (callgrind) and system calls (strace) per one-row commit, counted in one process of "
        f"{cost['low']} commits and one of {cost['high']} for each side ({cost['threads']} thread) and divided over "
        "the difference, so that start-up and ATTACH cancel out. Counts do not move with the machine's load or the "
        "disk's latency, which move the timed ratio (the last line) from run to run. Native is DuckDB without the "
        "extension: loaded, it moves the heap's layout and with it the allocator's work by about 3% of a commit. "
        "Reproduce: "
        "`.venv/bin/python bench/bench_commit_cost.py --json bench/work/commit_cost.json` then "
        "`.venv/bin/python bench/report.py --commit-cost bench/work/commit_cost.json`.",
        "",
        "| code that runs | native (instructions per commit) | differential | difference |",
        "|---|---:|---:|---:|",
    ]
    for key in rows:
        a, b = native["instructions"].get(key, 0), diff["instructions"].get(key, 0)
        lines.append(f"| {key} | {a:,.0f} | {b:,.0f} | {b - a:+,.0f} |")
    lines.append(f"| **all** | **{total_native:,.0f}** | **{total_diff:,.0f}** | "
                 f"**{total_diff - total_native:+,.0f} ({total_diff / total_native:.3f}x)** |")
    calls = sorted(name for name in set(native["syscalls"]) | set(diff["syscalls"])
                   if abs(diff["syscalls"].get(name, 0) - native["syscalls"].get(name, 0)) >= 0.05)
    differing = ", ".join(f"{name} {native['syscalls'].get(name, 0):.2f} / {diff['syscalls'].get(name, 0):.2f}"
                          for name in calls)
    lines += [
        "",
        f"- System calls per commit: native {sum(native['syscalls'].values()):.1f}, differential "
        f"{sum(diff['syscalls'].values()):.1f}; those that differ (native / differential): {differing}",
    ]
    lines += cpu_time_lines(cost)
    if "timed" in cost:
        t = cost["timed"]
        lines += [
            "",
            f"- Timed in the same run, {t['runs']} alternating runs of {t['count']} one-row commits each (a fresh "
            f"process per run, 1 thread), ms min / median / max: native {spread(t['native'])}, differential "
            f"{spread(t['diff'])}; ratio of medians "
            f"**{t['diff']['median'] / t['native']['median']:.3f}x**, of minimums "
            f"{t['diff']['min'] / t['native']['min']:.3f}x",
        ]
    return lines


def cpu_time_lines(cost):
    """The sampled table of bench_commit_cost.py: CPU microseconds per one-row commit by the code that runs them."""
    native, diff = cost["native"].get("cpu_us"), cost["diff"].get("cpu_us")
    if native is None or diff is None:
        return ["", "- CPU time per commit: not sampled in this run (perf was not found)"]
    rows = sorted(set(native) | set(diff), key=lambda key: -max(native.get(key, 0), diff.get(key, 0)))
    total_native, total_diff = sum(native.values()), sum(diff.values())
    lines = [
        "",
        f"CPU time per one-row commit, sampled (perf's cpu-clock at {cost['samples_per_second']:,} samples a second, "
        f"1 thread; a process of {cost['sampled_low']:,} commits and one of {cost['sampled_high']:,} per side, divided "
        "over the difference). Instructions are not time: code that misses the processor's caches takes longer per "
        "instruction, and the extension's copy of DuckDB runs beside the wheel's. Samples move a few percent from run "
        "to run.",
        "",
        "| code that runs | native (CPU µs per commit) | differential | difference |",
        "|---|---:|---:|---:|",
    ]
    for key in rows:
        a, b = native.get(key, 0), diff.get(key, 0)
        lines.append(f"| {key} | {a:.1f} | {b:.1f} | {b - a:+.1f} |")
    lines.append(f"| **all** | **{total_native:.1f}** | **{total_diff:.1f}** | "
                 f"**{total_diff - total_native:+.1f} ({total_diff / total_native:.3f}x)** |")
    return lines


def write_sections(write):
    """The write path's and the snapshots' sections (bench/bench_write.py), every figure from that run's JSON."""
    small = write["small_transactions"]
    write_path = [
        "## Write path",
        "",
        "| measurement | native (min / median / max) | differential (min / median / max) | ratio |",
        "|---|---|---|---:|",
        f"| bulk load of lineitem (ms) | {spread(write['bulk_load']['native'])} | "
        f"{spread(write['bulk_load']['diff'])} | {write['bulk_load']['ratio']:.2f} |",
        f"| {small['count']} small committed transactions, one row each (ms; "
        f"reproduce: `bench/bench_write.py`, `make bench`) | "
        f"{spread(small['native'])} | {spread(small['diff'])} | "
        f"{small['ratio']:.2f} |",
        "",
        f"- Small transactions, ratio of the minimums: {small['diff']['min'] / small['native']['min']:.2f} "
        f"({small.get('runs', 3)} runs per side, alternating native and differential)",
        durable_writes_line(small.get("durable_writes")),
        f"- Write amplification (bytes on disk after the bulk load, differential / native): "
        f"{write['write_amplification']:.2f} (goal <= 1.1)",
        (f"- Bytes written to storage during the bulk load (the kernel's write_bytes) per byte of the native "
         f"file: differential {write['written_per_native_byte']:.2f}, native {write['native_written_per_native_byte']:.2f}"
         if "written_per_native_byte" in write else "- Bytes written: not measured in this run"),
        f"- Peak resident memory of the bulk load: native {write['peak_rss_kib']['native'] / 1024:.0f} MiB, "
        f"differential {write['peak_rss_kib']['diff'] / 1024:.0f} MiB, ratio {write['peak_rss_ratio']:.2f} "
        f"(goal <= 1.2)",
    ]
    snapshots = [
        "## Snapshots, branches, time travel",
        "",
        f"Database sizes as stored: {write['snapshot']['100MB']['stored_bytes'] / 1e6:.0f} MB and "
        f"{write['snapshot']['1GB']['stored_bytes'] / 1e6:.0f} MB.",
        "",
        "| measurement | 100 MB database (ms) | 1 GB database (ms) | ratio 1 GB / 100 MB |",
        "|---|---|---|---:|",
        f"| snapshot after a one-row change | {spread(write['snapshot']['100MB'])} | "
        f"{spread(write['snapshot']['1GB'])} | {write['snapshot']['ratio_1GB_to_100MB']:.2f} |",
        f"| create a branch | {spread(write['branch']['100MB'])} | {spread(write['branch']['1GB'])} | "
        f"{write['branch']['ratio_1GB_to_100MB']:.2f} |",
        "",
        f"Time travel on the 1 GB database, same query: head {spread(write['time_travel']['head'])} ms, "
        f"`AT (VERSION => 1)` {spread(write['time_travel']['version'])} ms, ratio "
        f"{write['time_travel']['ratio']:.2f}.",
    ]
    return write_path, snapshots


def tpch_lines(tpch):
    """The TPC-H section (bench/bench_tpch.py), every figure from that run's JSON."""
    lines = [
        f"## TPC-H SF{tpch['sf']:g}, warm, Q1-Q22",
        "",
        f"Median of {tpch['runs']} runs per query after one warm-up; all 22 results hashed equal to native. Native "
        "DuckDB reads a plain file holding the very bytes differential stores (`bench/stored_file.py`), so both sides "
        "read the same blocks in the same layout. Reproduce: `.venv/bin/python bench/bench_tpch.py --tpch-extension "
        f"<DuckDB build>/extension/tpch/tpch.duckdb_extension --runs {tpch['runs']} --cold-runs {tpch['cold']['runs']} "
        "--json bench/work/tpch.json` (`make bench` runs it with its defaults).",
        "",
        f"**Sum of medians: native {ms(tpch['native_sum_of_medians'])} ms, differential "
        f"{ms(tpch['diff_sum_of_medians'])} ms, ratio {tpch['ratio']:.3f}** (goal <= 1.02 with no query above 1.10). "
        "Queries above 1.10 in this run: " + (", ".join(
            f"Q{q['query']} ({q['diff']['median'] / q['native']['median']:.2f})" for q in tpch["queries"]
            if q["diff"]["median"] / q["native"]["median"] > 1.10) or "none") + ".",
        "",
        warm_calls_line(tpch),
        "",
        (f"Cold (OS page cache dropped and a fresh DuckDB instance before every run, median of "
         f"{tpch['cold']['runs']}): native {ms(tpch['cold']['native_sum_of_medians'])} ms, differential "
         f"{ms(tpch['cold']['diff_sum_of_medians'])} ms, **ratio {tpch['cold']['ratio']:.3f}** (goal <= 1.03)."
         + (f" The file dbgen wrote, same data in another layout: {ms(tpch['cold']['dbgen_sum_of_medians'])} ms "
            f"({tpch['cold']['dbgen_sum_of_medians'] / tpch['cold']['native_sum_of_medians']:.3f}x the copy): "
            "two writes of one database lay out their blocks differently, and cold reads feel it."
            if tpch['cold'].get('dbgen_sum_of_medians') else "")
         if tpch.get("cold") else "Cold runs were not possible on this machine (dropping the page cache needs root)."),
        "",
        "| query | native ms (min / median / max) | differential ms (min / median / max) | ratio |",
        "|---:|---|---|---:|",
    ]
    for q in tpch["queries"]:
        lines.append(f"| Q{q['query']} | {spread(q['native'])} | {spread(q['diff'])} | "
                     f"{q['diff']['median'] / q['native']['median']:.2f} |")
    return lines


def tpch_chart(tpch):
    ratios = [q["diff"]["median"] / q["native"]["median"] for q in tpch["queries"]]
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.bar([f"Q{q['query']}" for q in tpch["queries"]], ratios, color="#3a6ea5")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel("differential / native (median)")
    ax.set_title(f"TPC-H SF{tpch['sf']:g} warm, per-query ratio (sum of medians {tpch['ratio']:.3f})")
    plt.xticks(rotation=60)
    fig.tight_layout()
    fig.savefig(BENCH / "tpch_ratios.png", dpi=110)


def splice_section(heading, section):
    """Replaces (or appends before the chart) one section of the existing RESULTS.md."""
    path = BENCH / "RESULTS.md"
    text = path.read_text().split("\n")
    if heading in text:
        start = text.index(heading)
        end = next((i for i in range(start + 1, len(text)) if text[i].startswith(("## ", "![per-query"))), len(text))
        text[start:end] = section + [""]
    else:
        end = next((i for i, line in enumerate(text) if line.startswith("![per-query")), len(text))
        text[end:end] = section + [""]
    path.write_text("\n".join(text))
    print(f"wrote the section {heading!r} of {path}")


def splice_history(history):
    """Replaces (or appends) the history section of the existing RESULTS.md, for a run of bench_history.py alone."""
    splice_section(HISTORY_HEADING, history_lines(history))


def main():
    if sys.argv[1] == "--history":
        splice_history(json.loads(pathlib.Path(sys.argv[2]).read_text()))
        return
    if sys.argv[1] == "--merge":
        merge = json.loads(pathlib.Path(sys.argv[2]).read_text())
        splice_section(MERGE_HEADING, merge_lines(merge))
        merge_chart(merge)
        return
    if sys.argv[1] == "--write":
        for section in write_sections(json.loads(pathlib.Path(sys.argv[2]).read_text())):
            splice_section(section[0], section)
        return
    if sys.argv[1] == "--tpch":
        tpch = json.loads(pathlib.Path(sys.argv[2]).read_text())
        section = tpch_lines(tpch)
        splice_section(section[0], section)
        tpch_chart(tpch)
        return
    if sys.argv[1] == "--sf10":
        splice_section(SF10_HEADING, sf10_lines(json.loads(pathlib.Path(sys.argv[2]).read_text())))
        return
    if sys.argv[1] == "--commit-cost":
        splice_section(COMMIT_COST_HEADING, commit_cost_lines(json.loads(pathlib.Path(sys.argv[2]).read_text())))
        return
    if sys.argv[1] == "--compilers":
        splice_section(COMPILERS_HEADING, compilers_lines(json.loads(pathlib.Path(sys.argv[2]).read_text())))
        return
    if sys.argv[1] == "--readers":
        splice_section(READERS_HEADING, readers_lines(json.loads(pathlib.Path(sys.argv[2]).read_text())))
        return
    tpch = json.loads(pathlib.Path(sys.argv[1]).read_text())
    write = json.loads(pathlib.Path(sys.argv[2]).read_text()) if len(sys.argv) > 2 else None
    merge = json.loads(pathlib.Path(sys.argv[3]).read_text()) if len(sys.argv) > 3 else None
    history = json.loads(pathlib.Path(sys.argv[4]).read_text()) if len(sys.argv) > 4 else None
    readers = json.loads(pathlib.Path(sys.argv[5]).read_text()) if len(sys.argv) > 5 else None
    compilers = json.loads(pathlib.Path(sys.argv[6]).read_text()) if len(sys.argv) > 6 else None
    lines = [
        "# Benchmark results",
        "",
        "Written by `make bench`; every figure is measured side by side with native DuckDB in the same run.",
        "",
        f"- DuckDB {tpch['duckdb']} (the pinned wheel), {tpch['threads']} threads",
        f"- Machine: {tpch['machine']}",
        "",
    ] + tpch_lines(tpch)
    if write:
        write_path, snapshots = write_sections(write)
        lines += [""] + write_path + [""] + snapshots
    if merge:
        lines += [""] + merge_lines(merge)
        merge_chart(merge)
    if history:
        lines += [""] + history_lines(history)
    if readers:
        lines += [""] + readers_lines(readers)
    if compilers:
        lines += [""] + compilers_lines(compilers)
    lines += ["", "![per-query ratio](tpch_ratios.png)", ""]
    (BENCH / "RESULTS.md").write_text("\n".join(lines))

    tpch_chart(tpch)
    print(f"wrote {BENCH / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
