#!/usr/bin/env bash
# `make test-asan`: builds our sources with AddressSanitizer + UndefinedBehaviorSanitizer (DuckDB stays as built) and
# runs the GoogleTest units and the SQL tests of ATTACH, bad input, lifecycle, merges and replication against that
# build; any sanitizer report, in any process, fails the run. Extra arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$REPO_ROOT/scripts/setup.sh"

# The extension in its own DuckDB tree (scripts/common.sh): build/asan/differential.duckdb_extension.
# It is a testing build (test switches compiled in), as every extension the tests load is.
DIFFERENTIAL_SANITIZE=1 bash "$REPO_ROOT/scripts/build.sh" differential_testing_loadable_extension
ASAN_EXTENSION="$REPO_ROOT/build/asan/differential.duckdb_extension"

# Every report is also written to a file per process, so one in a child process whose exit status a test never
# looks at (or that a test kills) still fails the run below.
REPORTS="$REPO_ROOT/build/asan/reports"
rm -rf "$REPORTS" && mkdir -p "$REPORTS"
# CPython leaks by design (interned objects, module state), so leak detection stays off in the Python processes.
# abort_on_error=0: a report exits the process with status 1 (not SIGABRT), which the tests see as a failure.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:log_path=$REPORTS/asan:log_exe_name=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$REPORTS/ubsan:log_exe_name=1"

reports_or_pass() {
  local found
  found=$(find "$REPORTS" -type f | sort)
  if [ -n "$found" ]; then
    for f in $found; do
      log "sanitizer report $f:"
      head -n 60 "$f" >&2
    done
    log "FAILED: $(echo "$found" | wc -l) sanitizer report(s) under $REPORTS"
    return 1
  fi
}

UNIT_BUILD="$REPO_ROOT/build/unit-asan"
log "building and running the unit tests with ASan + UBSan ($UNIT_BUILD)"
cmake -S "$REPO_ROOT/test/unit" -B "$UNIT_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DDIFFERENTIAL_SANITIZE=ON >/dev/null
cmake --build "$UNIT_BUILD" -- -j"$(nproc)"
(cd "$UNIT_BUILD" && ctest --output-on-failure) || { reports_or_pass || true; exit 1; }
reports_or_pass

# The groups that exercise ATTACH, bad input, lifecycle, merges and replication, and every test file about attach.
groups=(test/python/bad_input test/python/lifecycle test/python/merge test/python/replication)
mapfile -t attach_files < <(cd "$REPO_ROOT" && find test/python -name 'test_*attach*.py' | sort)
log "running ${groups[*]} ${attach_files[*]} against $ASAN_EXTENSION"
cd "$REPO_ROOT"
# The wheel's Python is not instrumented: the runtimes come first by preload (ASan must be the first library), and
# child processes inherit them with DIFFERENTIAL_EXTENSION (test/python/differential_testing.py's child_env).
status=0
DIFFERENTIAL_EXTENSION="$ASAN_EXTENSION" \
  LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
  "$VENV/bin/python" -m pytest "${groups[@]}" "${attach_files[@]}" "$@" || status=$?
reports_or_pass || status=1
exit "$status"
