#!/usr/bin/env bash
# Builds build/release/differential.duckdb_extension against the pinned DuckDB sdist, publishes it into the
# extension repository build/repository, and builds the CLI at build/release/duckdb (see shell/shell.cpp);
# the target differential_testing_loadable_extension builds the tests' extension, build/testing/ (scripts/common.sh).
# DuckDB's build tree lives in the cache, so a change to our code alone never recompiles DuckDB.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# The sdist and this checkout's venv (which reads the sdist's commit and publishes the repository) come from setup.
if [ ! -f "$DUCKDB_SRC/duckdb_packaging/build_info.json" ] || [ ! -x "$VENV/bin/python" ]; then
  bash "$REPO_ROOT/scripts/setup.sh"
fi

commit=$("$VENV/bin/python" -c "import json;print(json.load(open('$DUCKDB_SRC/duckdb_packaging/build_info.json'))['duckdb_commit'])")
targets=("$@"); ((${#targets[@]})) || targets=(differential_loadable_extension differential_shell)
mkdir -p "$DUCKDB_BUILD"
# One build at a time per tree: two ninja runs in one tree corrupt it.
exec 9>"$DUCKDB_BUILD.lock"
flock 9
# BUILD_SHELL stays off: the sdist ships tools/shell's CMakeLists but not its sources, so configuring DuckDB's shell
# fails; our CMakeLists builds a small shell of our own (differential_shell) against the same library instead.
configure_args=(
  -S "$DUCKDB_SRC/external/duckdb" -B "$DUCKDB_BUILD" -G Ninja
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  -DOVERRIDE_GIT_DESCRIBE="v$DUCKDB_VERSION" -DGIT_COMMIT_HASH="$commit"
  -DDUCKDB_EXTENSION_CONFIGS="$REPO_ROOT/extension_config.cmake"
  -DEXTENSION_STATIC_BUILD=1 -DBUILD_SHELL=0 -DBUILD_UNITTESTS=0
  -DENABLE_SANITIZER=0 -DENABLE_UBSAN=0
  # DuckDB's sources are compiled -fPIC with default visibility, and GCC then treats every function as one the
  # dynamic linker might replace: it inlines none that is not declared inline, even within a unity file. Nothing
  # replaces DuckDB's symbols inside our extension (a version script exports only its entry points), so tell GCC
  # so; clang, which builds the wheel, assumes this already.
  "-DCMAKE_C_FLAGS=-fno-semantic-interposition" "-DCMAKE_CXX_FLAGS=-fno-semantic-interposition"
)
# The sanitized flavour (scripts/common.sh) instruments our sources only: DuckDB's own stay as built (ccache hits).
if [ "$FLAVOR" = asan ]; then configure_args+=(-DDIFFERENTIAL_SANITIZE=ON); fi
# The wheel's Linux build: clang with ThinLTO linked by lld (the sdist's pyproject.toml, DUCKDB_PY_LTO = "thin"); the
# LLVM archiver, because archives of bitcode need its symbol index. ThinLTO compiles every module at link time, so
# its cache (in the tree) keeps a relink after a change to our sources from compiling DuckDB's modules again.
if [ "$FLAVOR" = clang19 ]; then
  lto_link="-fuse-ld=lld -Wl,--thinlto-cache-dir=$DUCKDB_BUILD/thinlto-cache"
  configure_args+=(-DCMAKE_C_COMPILER="$LLVM_BIN/clang" -DCMAKE_CXX_COMPILER="$LLVM_BIN/clang++"
    -DCMAKE_AR="$LLVM_BIN/llvm-ar" -DCMAKE_RANLIB="$LLVM_BIN/llvm-ranlib" -DCMAKE_LTO=thin
    "-DCMAKE_EXE_LINKER_FLAGS=$lto_link" "-DCMAKE_SHARED_LINKER_FLAGS=$lto_link"
    "-DCMAKE_MODULE_LINKER_FLAGS=$lto_link")
fi
# Reconfigure when the tree was configured with other arguments: another checkout (CI clones elsewhere, and the
# extension config's path is among them) or an older version of this script. Ninja then rebuilds only what changed.
configured="$DUCKDB_BUILD/differential-configure-args"
if [ ! -f "$DUCKDB_BUILD/build.ninja" ] || [ "$(cat "$configured" 2>/dev/null)" != "${configure_args[*]}" ]; then
  log "configuring DuckDB $DUCKDB_VERSION ($commit) in $DUCKDB_BUILD"
  rm -f "$configured"
  cmake "${configure_args[@]}" >"$DUCKDB_BUILD/configure.log" 2>&1 || { tail -n 30 "$DUCKDB_BUILD/configure.log"; exit 1; }
  printf '%s' "${configure_args[*]}" >"$configured"
fi
# Regenerate first when a CMakeLists changed: ninja checks the targets asked for against the old build.ninja.
ninja -C "$DUCKDB_BUILD" build.ninja >/dev/null
log "building ${targets[*]} (the first build compiles DuckDB: about 30-40 minutes on 2 cores)"
cmake --build "$DUCKDB_BUILD" --target "${targets[@]}" -- -j"$(nproc)"
for t in "${targets[@]}"; do
  case "$t" in
    differential_loadable_extension)
      mkdir -p "$(dirname "$EXTENSION_OUT")"
      cp "$DUCKDB_BUILD/extension/differential/differential.duckdb_extension" "$EXTENSION_OUT"
      log "built $EXTENSION_OUT"
      # The repository serves release builds only: a sanitized build loads only into a process that preloads ASan.
      [ "$FLAVOR" = release ] || continue
      # The repository path comes from the file's own footer (DuckDB version, platform), never from this script.
      log "published $("$VENV/bin/python" "$REPO_ROOT/scripts/extension_repository.py" publish "$EXTENSION_OUT" \
        "$REPOSITORY_OUT")"
      ;;
    differential_testing_loadable_extension)
      # DuckDB derives the init symbol from the file name, so the testing build keeps the name in a folder of its own.
      mkdir -p "$(dirname "$TESTING_EXTENSION_OUT")"
      cp "$DUCKDB_BUILD/extension/differential/differential_testing.duckdb_extension" "$TESTING_EXTENSION_OUT"
      log "built $TESTING_EXTENSION_OUT (the testing build: test switches compiled in)"
      # The httpfs stand-in the coexistence tests load (CMakeLists.txt builds it with the testing extension).
      mkdir -p "$(dirname "$HTTPFS_STANDIN_OUT")"
      cp "$DUCKDB_BUILD/extension/differential/differential_httpfs_standin.duckdb_extension" "$HTTPFS_STANDIN_OUT"
      log "built $HTTPFS_STANDIN_OUT (a stand-in for httpfs: its s3 secret type only)"
      ;;
    differential_shell)
      mkdir -p "$(dirname "$SHELL_OUT")"
      # Copy to a temporary name first: a running shell keeps the old file, and a half-copied binary is never run.
      cp "$DUCKDB_BUILD/extension/differential/differential_shell" "$SHELL_OUT.tmp"
      mv -f "$SHELL_OUT.tmp" "$SHELL_OUT"
      log "built $SHELL_OUT"
      ;;
  esac
done
