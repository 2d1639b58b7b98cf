#!/usr/bin/env bash
# `make serve`: set up and build, then start the review server on a fresh repository with a TPC-H-like
# database; it prints a one-time admin token and the page's address. DIFFERENTIAL_PORT picks the port.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$REPO_ROOT/scripts/setup.sh"
bash "$REPO_ROOT/scripts/build.sh" differential_loadable_extension
REPOSITORY="${DIFFERENTIAL_SERVE_REPOSITORY:-$(mktemp -d)/repository}"
log "serving a fresh repository at $REPOSITORY"
exec "$VENV/bin/differential-server" serve-demo --repository "$REPOSITORY"
