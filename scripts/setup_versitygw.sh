#!/usr/bin/env bash
# Installs the pinned versitygw S3 server (Apache-2.0) that the object-store tests start on loopback,
# idempotently, into the cache: one `go install` per version (about 2 minutes once).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [ ! -x "$VERSITYGW_BIN" ]; then
  # The machine's Go lives in /usr/local/go; a CI shell may not have it on PATH.
  command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || { log "go (1.21 or newer) is required to build versitygw"; exit 1; }
  log "building versitygw $VERSITYGW_VERSION (once, into the cache)"
  GOBIN="$(dirname "$VERSITYGW_BIN").tmp"
  rm -rf "$GOBIN" && mkdir -p "$GOBIN"
  # GOFLAGS=-mod=mod: the install must not depend on a go.work or vendor dir near the caller.
  GOBIN="$GOBIN" GOFLAGS=-mod=mod nice -n 10 go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  rm -rf "$(dirname "$VERSITYGW_BIN")" && mv "$GOBIN" "$(dirname "$VERSITYGW_BIN")"
fi
