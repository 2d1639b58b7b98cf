# Shared paths for the setup, build and test scripts; sourced, never run.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DUCKDB_VERSION="$(tr -d '[:space:]' < "$REPO_ROOT/DUCKDB_VERSION")"
CACHE_ROOT="${DIFFERENTIAL_CACHE:-$HOME/.cache/differential}"
DUCKDB_SRC="$CACHE_ROOT/duckdb-$DUCKDB_VERSION"            # the unpacked PyPI sdist
# DuckDB's build tree, reused across checkouts; DIFFERENTIAL_BUILD_DIR gives a second checkout its own
# (ccache, shared through CACHE_ROOT, makes that second tree cheap).
# DIFFERENTIAL_SANITIZE=1 (set by scripts/test_asan.sh) selects the ASan + UBSan flavour instead: a tree of its own,
# configured with -DDIFFERENTIAL_SANITIZE=ON so that neither tree is ever reconfigured back and forth
# (DIFFERENTIAL_ASAN_BUILD_DIR moves it), and outputs under build/asan/ instead of build/release/.
# DIFFERENTIAL_COMPILER=clang19 selects the benchmarks' second compiler (scripts/bench_compilers.sh): DuckDB's copy and
# ours built by clang 19 with ThinLTO, as the wheel's Linux build does, in a tree of its own, outputs under build/clang19/.
if [ "${DIFFERENTIAL_SANITIZE:-0}" = 1 ]; then
  FLAVOR=asan
  DUCKDB_BUILD="${DIFFERENTIAL_ASAN_BUILD_DIR:-$CACHE_ROOT/build-$DUCKDB_VERSION-asan}"
elif [ "${DIFFERENTIAL_COMPILER:-gcc}" = clang19 ]; then
  FLAVOR=clang19
  DUCKDB_BUILD="$CACHE_ROOT/build-$DUCKDB_VERSION-clang19"
  LLVM_BIN=/usr/lib/llvm-19/bin
else
  FLAVOR=release
  DUCKDB_BUILD="${DIFFERENTIAL_BUILD_DIR:-$CACHE_ROOT/build-$DUCKDB_VERSION-release}"
fi
VENV="$REPO_ROOT/.venv"
EXTENSION_OUT="$REPO_ROOT/build/$FLAVOR/differential.duckdb_extension"
# The testing build (test switches compiled in: crash, pause and fault points, mutations) that the tests load; the
# sanitized flavour is always a testing build, so its one extension is build/asan/'s.
if [ "$FLAVOR" = asan ]; then TESTING_EXTENSION_OUT="$EXTENSION_OUT"
else TESTING_EXTENSION_OUT="$REPO_ROOT/build/testing/differential.duckdb_extension"; fi
# The stand-in for httpfs built with the testing extension (test/extensions/httpfs_standin.cpp).
HTTPFS_STANDIN_OUT="$(dirname "$TESTING_EXTENSION_OUT")/httpfs/httpfs.duckdb_extension"
REPOSITORY_OUT="$REPO_ROOT/build/repository"                 # a DuckDB extension repository: INSTALL ... FROM it
SHELL_OUT="$REPO_ROOT/build/$FLAVOR/duckdb"                  # the CLI, built against the same DuckDB library
export CCACHE_DIR="${CCACHE_DIR:-$CACHE_ROOT/ccache}"
export CCACHE_BASEDIR="$CACHE_ROOT"
log() { printf '\033[1m[differential]\033[0m %s\n' "$*" >&2; }
# Installs Debian packages, quietly, with sudo when not root.
apt_install() {
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
# S3: the pinned AWS CRT build and the test server, both under the cache.
AWSCRT_VERSION="$(tr -d '[:space:]' < "$REPO_ROOT/AWSCRT_VERSION")"
AWSCRT_ROOT="$CACHE_ROOT/awscrt-$AWSCRT_VERSION"              # src/ (unpacked sdist), build/, install/
VERSITYGW_VERSION="$(tr -d '[:space:]' < "$REPO_ROOT/VERSITYGW_VERSION")"
VERSITYGW_BIN="$CACHE_ROOT/bin-versitygw-$VERSITYGW_VERSION/versitygw"
TOXIPROXY_VERSION="v2.5.0"                                              # latency and faults
TOXIPROXY_DIR="$CACHE_ROOT/bin-toxiproxy-$TOXIPROXY_VERSION"              # server and cli
SEAWEEDFS_VERSION="v0.0.0-20261109003541-7506e5f91cd6"                  # opt-in second server
SEAWEEDFS_BIN="$CACHE_ROOT/bin-seaweedfs-$SEAWEEDFS_VERSION/weed"
