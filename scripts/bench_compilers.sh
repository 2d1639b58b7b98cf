#!/usr/bin/env bash
# The compiler comparison (make bench-compilers, also the last step of make bench): the extension, with its copy of
# DuckDB, built by Debian's GCC 12 (the default build) and by clang 19 with ThinLTO and lld (the wheel's Linux
# build's choices), each measured beside native DuckDB on TPC-H SF1 warm and 10,000 small commits in alternating
# rounds. Writes the compiler section of bench/RESULTS.md. The clang tree's first build compiles DuckDB (30-40 min).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$REPO_ROOT/scripts/setup.sh"
if [ ! -x /usr/lib/llvm-19/bin/clang ] || [ ! -x /usr/lib/llvm-19/bin/ld.lld ]; then
  log "installing clang 19 and lld 19 (Debian bookworm) for the compiler comparison"
  apt_install clang-19 lld-19 llvm-19
fi
bash "$REPO_ROOT/scripts/build.sh" differential_loadable_extension tpch_loadable_extension
TPCH="$DUCKDB_BUILD/extension/tpch/tpch.duckdb_extension"
GCC_EXTENSION="$EXTENSION_OUT"
DIFFERENTIAL_COMPILER=clang19 bash "$REPO_ROOT/scripts/build.sh" differential_loadable_extension
CLANG_EXTENSION="$REPO_ROOT/build/clang19/differential.duckdb_extension"
WORK="$REPO_ROOT/bench/work"
mkdir -p "$WORK"
gcc_version="$(g++ --version | head -n 1)"
clang_version="$(/usr/lib/llvm-19/bin/clang++ --version | head -n 1)"
common_flags="-O3 (CMAKE_BUILD_TYPE Release), -fno-semantic-interposition"
"$VENV/bin/python" "$REPO_ROOT/bench/bench_compilers.py" --tpch-extension "$TPCH" --work "$WORK" --shipped gcc12 \
  --build "gcc12=$GCC_EXTENSION" --compiler "gcc12=$gcc_version; $common_flags, no LTO" \
  --build "clang19=$CLANG_EXTENSION" \
  --compiler "clang19=$clang_version; $common_flags, ThinLTO (CMAKE_LTO thin), lld" \
  --json "$WORK/compilers.json"
"$VENV/bin/python" "$REPO_ROOT/bench/report.py" --compilers "$WORK/compilers.json"
