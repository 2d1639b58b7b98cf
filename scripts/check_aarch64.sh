#!/usr/bin/env bash
# Compiles every src/**/*.cpp for aarch64-linux-gnu with Debian's cross compiler, without linking: proof that no
# x86-only code (intrinsics, flags, assumptions) crept into our sources. Part of `make check`; docs/ARCHITECTURE.md
# "Portability".
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
CROSS_CXX=aarch64-linux-gnu-g++
DUCKDB_ROOT="$DUCKDB_SRC/external/duckdb"
CRT_INCLUDE="$AWSCRT_ROOT/install/include"
# Setup installs the cross compiler with the other Debian packages and unpacks DuckDB's and the CRT's headers.
if ! command -v "$CROSS_CXX" >/dev/null || [ ! -f "$DUCKDB_ROOT/CMakeLists.txt" ] || [ ! -d "$CRT_INCLUDE/aws" ]; then
  bash "$REPO_ROOT/scripts/setup.sh"
fi

# DuckDB's own include list for an extension's objects, in its order: the unconditional include_directories of
# its CMakeLists (what build.ninja passes; jemalloc's is conditional and unused by extensions).
mapfile -t duckdb_dirs < <(sed -n 's/^ *include_directories(\(src\/include\|third_party\/[^)]*\))$/\1/p' \
  "$DUCKDB_ROOT/CMakeLists.txt" | grep -v jemalloc)
((${#duckdb_dirs[@]} > 1)) || { log "no include_directories found in $DUCKDB_ROOT/CMakeLists.txt"; exit 1; }
host_multiarch="$(gcc -print-multiarch)"
# The real build's warnings; DuckDB's arm64 architecture profile (-march=armv8-a, which lacks the CRC extension:
# code that uses it must enable it per function). Host SQLite and OpenSSL headers only fill in what the cross
# sysroot lacks (-idirafter), which is enough to type-check our calls into them.
flags=(-std=c++17 -march=armv8-a -fPIC -Wall -Wextra -Werror -Wno-unused-parameter -UDUCKDB_BUILD_LIBRARY
  -DDUCKDB_HAVE_FDATASYNC=1 -Isrc)
for d in "${duckdb_dirs[@]}"; do flags+=(-I"$DUCKDB_ROOT/$d"); done
flags+=(-isystem "$CRT_INCLUDE" -idirafter /usr/include -idirafter "/usr/include/$host_multiarch")

# Objects at -O0 rather than -fsyntax-only: code generation is where a per-function target (the CRC extension)
# that does not cover an intrinsic fails, for about 15% more time. Through ccache, which caches objects but not
# syntax checks, an unchanged source costs nothing on the next run; relative paths share hits across checkouts.
launcher=(); command -v ccache >/dev/null && launcher=(ccache)
objects="$(mktemp -d)"
trap 'rm -rf "$objects"' EXIT
cd "$REPO_ROOT"
files=$(find src -name '*.cpp' | sort)
find src -type d | (cd "$objects" && xargs mkdir -p)
start=$SECONDS
log "compiling $(wc -l <<<"$files") sources for aarch64 ($CROSS_CXX -O0, 2 at a time)"
# One file per compiler run, so an error names its file.
xargs -P2 -I{} "${launcher[@]}" "$CROSS_CXX" "${flags[@]}" -O0 -c {} -o "$objects/{}.o" <<<"$files" ||
  { log "aarch64 compile failed (above)"; exit 1; }
log "aarch64 compile passed in $((SECONDS - start)) s"
