#!/usr/bin/env bash
# Builds build/release/differential.duckdb_extension against the pinned DuckDB sdist.
# DuckDB's build tree lives in the cache, so a change to our code alone never recompiles DuckDB.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ -f "$DUCKDB_SRC/duckdb_packaging/build_info.json" ] || bash "$REPO_ROOT/scripts/setup.sh"

commit=$("$VENV/bin/python" -c "import json;print(json.load(open('$DUCKDB_SRC/duckdb_packaging/build_info.json'))['duckdb_commit'])")
targets=("$@"); ((${#targets[@]})) || targets=(differential_loadable_extension)
mkdir -p "$DUCKDB_BUILD"
# One build at a time per tree: two ninja runs in one tree corrupt it.
exec 9>"$DUCKDB_BUILD.lock"
flock 9
# Reconfigure when this checkout is not the one the tree was configured for (CI clones elsewhere).
if [ ! -f "$DUCKDB_BUILD/build.ninja" ] || ! grep -qs "DUCKDB_EXTENSION_CONFIGS:.*=$REPO_ROOT/extension_config.cmake$" "$DUCKDB_BUILD/CMakeCache.txt"; then
  log "configuring DuckDB $DUCKDB_VERSION ($commit) in $DUCKDB_BUILD"
  cmake -S "$DUCKDB_SRC/external/duckdb" -B "$DUCKDB_BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DOVERRIDE_GIT_DESCRIBE="v$DUCKDB_VERSION" -DGIT_COMMIT_HASH="$commit" \
    -DDUCKDB_EXTENSION_CONFIGS="$REPO_ROOT/extension_config.cmake" \
    -DEXTENSION_STATIC_BUILD=1 -DBUILD_SHELL=0 -DBUILD_UNITTESTS=0 \
    -DENABLE_SANITIZER=0 -DENABLE_UBSAN=0 >"$DUCKDB_BUILD/configure.log"
fi
log "building ${targets[*]} (the first build compiles DuckDB: about 30-40 minutes on 2 cores)"
cmake --build "$DUCKDB_BUILD" --target "${targets[@]}" -- -j"$(nproc)"
for t in "${targets[@]}"; do
  if [ "$t" = differential_loadable_extension ]; then
    mkdir -p "$(dirname "$EXTENSION_OUT")"
    cp "$DUCKDB_BUILD/extension/differential/differential.duckdb_extension" "$EXTENSION_OUT"
    log "built $EXTENSION_OUT"
  fi
done
