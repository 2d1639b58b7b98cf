#!/usr/bin/env bash
# Opt-in: builds the pinned SeaweedFS (Apache-2.0), the second S3 server the object-store conformance
# suite can run against (DIFFERENTIAL_TEST_SEAWEEDFS=1). Not called by setup.sh: it downloads about
# 2 GB of Go modules and compiles for ~8 minutes, once, into the cache.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [ ! -x "$SEAWEEDFS_BIN" ]; then
  command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || { log "go (1.24 or newer) is required to build SeaweedFS"; exit 1; }
  log "building SeaweedFS $SEAWEEDFS_VERSION (once, into the cache; ~8 minutes)"
  module="github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION"
  # `go install` refuses a module with replace directives; building inside the downloaded module
  # makes it the main module, whose replace directives apply.
  dir="$(GOFLAGS=-mod=mod go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$dir" ] || { log "go mod download of $module failed"; exit 1; }
  mkdir -p "$(dirname "$SEAWEEDFS_BIN")"
  (cd "$dir" && nice -n 10 go build -o "$SEAWEEDFS_BIN.tmp" ./weed)
  mv "$SEAWEEDFS_BIN.tmp" "$SEAWEEDFS_BIN"
fi
