#!/usr/bin/env bash
# The main job: sets everything up, walks through the local lifecycle on a fresh repository,
# then leaves you at a SQL prompt with the extension loaded (when run from a terminal).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$REPO_ROOT/scripts/setup.sh"
bash "$REPO_ROOT/scripts/build.sh" differential_loadable_extension differential_shell
exec "$VENV/bin/python" "$REPO_ROOT/scripts/demo.py" "$@"
