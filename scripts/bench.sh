#!/usr/bin/env bash
# Benchmarks (never part of the tests): TPC-H SF1, the write path, snapshots, branches and time
# travel, each side by side with native DuckDB in one run, merge scaling, and how everyday operations scale with
# history. Writes bench/RESULTS.md.
# Takes about an hour on 2 cores once the TPC-H data is generated (cached in bench/work), SF10 included. `bench.sh tpch` runs
# the TPC-H part alone (a few minutes).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$REPO_ROOT/scripts/setup.sh"
bash "$REPO_ROOT/scripts/build.sh" differential_loadable_extension tpch_loadable_extension
TPCH="$DUCKDB_BUILD/extension/tpch/tpch.duckdb_extension"
WORK="$REPO_ROOT/bench/work"
mkdir -p "$WORK"
# `bench.sh sf10` (make bench-sf10): TPC-H SF10 locally and from S3, snapshot and branch on it, its exports; its
# section of bench/RESULTS.md. Generating the data takes minutes and about 20 GB of disk (cached in bench/work).
if [ "${1:-}" = sf10 ]; then
  "$VENV/bin/python" "$REPO_ROOT/bench/bench_sf10.py" --tpch-extension "$TPCH" --work "$WORK" --json "$WORK/sf10.json"
  exec "$VENV/bin/python" "$REPO_ROOT/bench/report.py" --sf10 "$WORK/sf10.json"
fi
"$VENV/bin/python" "$REPO_ROOT/bench/bench_tpch.py" --tpch-extension "$TPCH" --work "$WORK" --json "$WORK/tpch.json"
# `bench.sh tpch` (make bench-tpch): the TPC-H part alone, spliced into bench/RESULTS.md in place of its section.
if [ "${1:-}" = tpch ]; then
  exec "$VENV/bin/python" "$REPO_ROOT/bench/report.py" --tpch "$WORK/tpch.json"
fi
"$VENV/bin/python" "$REPO_ROOT/bench/bench_write.py" --source "$WORK/tpch-sf1.duckdb" --work "$WORK/write" \
  --json "$WORK/write.json"
# Where a small commit's cost goes, counted (callgrind, strace) and sampled (perf); spliced in after the report.
if ! command -v valgrind >/dev/null || ! command -v strace >/dev/null || ! command -v perf >/dev/null; then
  log "installing valgrind, strace and perf for the counted and sampled commit cost"
  apt_install valgrind strace linux-perf
fi
"$VENV/bin/python" "$REPO_ROOT/bench/bench_commit_cost.py" --work "$WORK/commit-cost" --json "$WORK/commit_cost.json"
"$VENV/bin/python" "$REPO_ROOT/bench/bench_merge.py" --work "$WORK" --json "$WORK/merge.json"
# TPC-H from S3 (versitygw behind Toxiproxy's 20 ms) vs httpfs and the local file; export costs: bench/S3_RESULTS.md.
"$VENV/bin/python" "$REPO_ROOT/bench/bench_s3.py" --tpch-extension "$TPCH" --work "$WORK" --json "$WORK/s3.json"
# Followers of an exported head: lag p50/p95 at FOLLOW_INTERVAL 1 and 2 s, requests per idle minute: bench/FOLLOW_RESULTS.md.
"$VENV/bin/python" "$REPO_ROOT/bench/bench_follow.py" --json "$WORK/follow.json"
# The review server under load (16 clients, 8 branches, 60 s): bench/REVIEW_RESULTS.md.
"$VENV/bin/python" "$REPO_ROOT/bench/bench_review.py" --json "$WORK/review.json"
# History that scales: 10,000 snapshots, 200 branches, 20 databases beside a fresh repository; the large
# repository is built once (minutes) and cached under ~/.cache/differential/bench-history.
"$VENV/bin/python" "$REPO_ROOT/bench/bench_history.py" --work "$WORK/history" --json "$WORK/history.json"
# Multi-process reads: 8 time-travelling readers, quiet, beside a writer on another repository, and beside
# a committing, snapshotting writer on theirs.
"$VENV/bin/python" "$REPO_ROOT/bench/bench_readers.py" --work "$WORK/readers" --json "$WORK/readers.json"
"$VENV/bin/python" "$REPO_ROOT/bench/report.py" "$WORK/tpch.json" "$WORK/write.json" "$WORK/merge.json" \
  "$WORK/history.json" "$WORK/readers.json"
"$VENV/bin/python" "$REPO_ROOT/bench/report.py" --commit-cost "$WORK/commit_cost.json"
# Ten times the data: TPC-H SF10 locally and from S3 (tens of minutes), spliced into bench/RESULTS.md.
"$VENV/bin/python" "$REPO_ROOT/bench/bench_sf10.py" --tpch-extension "$TPCH" --work "$WORK" --json "$WORK/sf10.json"
"$VENV/bin/python" "$REPO_ROOT/bench/report.py" --sf10 "$WORK/sf10.json"
# The compilers: the extension built by GCC 12 and by clang 19 with ThinLTO, TPC-H warm and small commits for both
# (the clang tree's first build compiles DuckDB once more); its section of bench/RESULTS.md.
bash "$REPO_ROOT/scripts/bench_compilers.sh"
