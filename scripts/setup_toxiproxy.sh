#!/usr/bin/env bash
# Installs the pinned Toxiproxy (MIT), the TCP proxy the S3 tests and benchmarks put between the store
# and the server to add latency and faults: its server and CLI, once, into the cache (under a minute).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [ ! -x "$TOXIPROXY_DIR/server" ] || [ ! -x "$TOXIPROXY_DIR/cli" ]; then
  command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || { log "go is required to build Toxiproxy"; exit 1; }
  log "building Toxiproxy $TOXIPROXY_VERSION (once, into the cache)"
  rm -rf "$TOXIPROXY_DIR.tmp" && mkdir -p "$TOXIPROXY_DIR.tmp"
  GOBIN="$TOXIPROXY_DIR.tmp" GOFLAGS=-mod=mod nice -n 10 go install \
    "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION" \
    "github.com/Shopify/toxiproxy/v2/cmd/cli@$TOXIPROXY_VERSION"
  rm -rf "$TOXIPROXY_DIR" && mv "$TOXIPROXY_DIR.tmp" "$TOXIPROXY_DIR"
fi
