#!/usr/bin/env bash
# Sets everything up, builds, and runs every test: the replication protocol's model check (spin),
# the GoogleTest units, then pytest against the pinned DuckDB wheel with the extension loaded.
# Extra arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$REPO_ROOT/scripts/setup.sh"

log "model-checking the replication protocol (model/replication.pml)"
bash "$REPO_ROOT/scripts/model_check.sh"

# The release extension and CLI (installed from build/repository by the install tests), and the testing extension
# every other test loads (build/testing/: the release build has no test switches).
bash "$REPO_ROOT/scripts/build.sh" differential_loadable_extension differential_testing_loadable_extension \
  differential_shell

# Per checkout: CMake ties a build tree to one source directory (CI clones elsewhere).
UNIT_BUILD="$REPO_ROOT/build/unit"
log "building and running the unit tests"
cmake -S "$REPO_ROOT/test/unit" -B "$UNIT_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$UNIT_BUILD" -- -j"$(nproc)"
(cd "$UNIT_BUILD" && ctest --output-on-failure)

log "running the SQL tests against duckdb==$DUCKDB_VERSION"
cd "$REPO_ROOT"
"$VENV/bin/python" -m pytest test/python "$@"
