#!/usr/bin/env bash
# Installs everything the build and tests need, idempotently: Debian packages, the project venv
# with the pinned DuckDB wheel, and the pinned DuckDB sdist unpacked under the cache directory.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# chromium: the review page's browser tests drive Debian's build (Playwright with executable_path).
# spin: the model checker of the replication protocol (scripts/model_check.sh, model/).
# g++-aarch64-linux-gnu: make check compiles our sources for aarch64 too (scripts/check_aarch64.sh).
APT_PACKAGES=(cmake ninja-build ccache g++ patch libsqlite3-dev libssl-dev libgtest-dev clang-format chromium spin
  g++-aarch64-linux-gnu)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  apt_install "${missing[@]}"
fi

if [ ! -x "$VENV/bin/python" ]; then
  log "creating the project venv at .venv"
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import duckdb,sys; sys.exit(duckdb.__version__ != '$DUCKDB_VERSION')" 2>/dev/null \
   || ! "$VENV/bin/python" -c "import pytest, matplotlib, mypy, ruff" 2>/dev/null; then
  log "installing duckdb==$DUCKDB_VERSION and the test tools into .venv"
  "$VENV/bin/pip" install -q "duckdb==$DUCKDB_VERSION" -r "$REPO_ROOT/requirements-dev.txt"
fi

# Whether the venv's python ($1) has every `name==version` of the requirements file $2, and can import the module
# $3 if one is named (an editable install in place).
pins_satisfied() {
  "$1" - "$2" "${3:-}" <<'PY' 2>/dev/null
import importlib, sys, importlib.metadata as md
for line in open(sys.argv[1]):
    line = line.strip()
    if line and not line.startswith("#"):
        name, version = line.split("==")
        if md.version(name) != version:
            sys.exit(1)
if sys.argv[2]:
    importlib.import_module(sys.argv[2])
PY
}

# The review server (server/, importable as differential_server) and its locked dependencies.
if ! pins_satisfied "$VENV/bin/python" "$REPO_ROOT/requirements-server.txt" differential_server; then
  log "installing the review server and its pinned dependencies into .venv"
  "$VENV/bin/pip" install -q -r "$REPO_ROOT/requirements-server.txt"
  "$VENV/bin/pip" install -q --no-deps --no-build-isolation -e "$REPO_ROOT/server"
fi

# dbt for examples/dbt and its test (test/python/dbt): a venv of its own, since dbt-core 1.11 pins pathspec and
# python-dateutil below what the project venv's mypy and matplotlib use; duckdb is forced to the pinned version.
DBT_VENV="$REPO_ROOT/examples/dbt/.venv"
if [ ! -x "$DBT_VENV/bin/python" ]; then
  log "creating the dbt example's venv at examples/dbt/.venv"
  python3 -m venv "$DBT_VENV"
fi
if ! pins_satisfied "$DBT_VENV/bin/python" "$REPO_ROOT/examples/dbt/requirements.txt"; then
  log "installing dbt-core and dbt-duckdb (examples/dbt/requirements.txt) into examples/dbt/.venv"
  "$DBT_VENV/bin/pip" install -q -r "$REPO_ROOT/examples/dbt/requirements.txt"
fi

if [ ! -f "$DUCKDB_SRC/duckdb_packaging/build_info.json" ]; then
  log "fetching the duckdb==$DUCKDB_VERSION sdist (headers and sources)"
  mkdir -p "$CACHE_ROOT/sdist"
  # --no-binary for duckdb alone: its build backend may come as wheels, the sdist itself is what we want.
  "$VENV/bin/pip" download -q --no-deps --no-binary duckdb "duckdb==$DUCKDB_VERSION" -d "$CACHE_ROOT/sdist"
  rm -rf "$DUCKDB_SRC.tmp" && mkdir -p "$DUCKDB_SRC.tmp"
  tar xzf "$CACHE_ROOT/sdist/duckdb-$DUCKDB_VERSION.tar.gz" -C "$DUCKDB_SRC.tmp" --strip-components=1
  rm -rf "$DUCKDB_SRC" && mv "$DUCKDB_SRC.tmp" "$DUCKDB_SRC"
fi
# external/duckdb is where the build and editors look for headers; it is a link into the cache, never committed.
mkdir -p "$REPO_ROOT/external"
ln -sfn "$DUCKDB_SRC/external/duckdb" "$REPO_ROOT/external/duckdb"

# S3: the AWS CRT C libraries from the pinned awscrt sdist, the versitygw test server and
# Toxiproxy; each builds once into the cache and is skipped after that.
bash "$REPO_ROOT/scripts/setup_crt.sh"
bash "$REPO_ROOT/scripts/setup_versitygw.sh"
bash "$REPO_ROOT/scripts/setup_toxiproxy.sh"
