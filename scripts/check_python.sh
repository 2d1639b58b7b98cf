#!/usr/bin/env bash
# The review server's Python checked like the C++: ruff (lint) and mypy (types), both pinned in
# requirements-dev.txt and configured in server/pyproject.toml. Run by `make check`.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [ ! -x "$VENV/bin/ruff" ] || [ ! -x "$VENV/bin/mypy" ]; then
  bash "$REPO_ROOT/scripts/setup.sh"
fi
cd "$REPO_ROOT/server"
"$VENV/bin/ruff" check differential_server
"$VENV/bin/mypy"
