#!/usr/bin/env bash
# Installs the official Temporal CLI (which runs `temporal server start-dev`) into a cache outside the repo and prints
# its path on the last line of stdout. Temporal's download site may be unreachable, so it builds the CLI from the Go
# module proxy (Go 1.24 or later). A cached binary that runs is reused. There is no other fallback: the one prebuilt
# binary on PyPI we tried is built for one platform only and did not run on Debian.
set -euo pipefail

VERSION="v1.5.1" # the newest release whose go.mod has no replace directive, which `go install` requires
CACHE_ROOT="${AGENT_FOLLOWUP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-followup}"
DEST="$CACHE_ROOT/temporal-cli-$VERSION"
BIN="$DEST/temporal"

log() { echo "install-temporal-cli: $*" >&2; }

if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
  log "using cached $BIN"
  echo "$BIN"
  exit 0
fi

mkdir -p "$DEST"
start=$(date +%s)
if command -v go >/dev/null 2>&1; then
  log "building temporal $VERSION with go install (first time only; a few minutes)"
  if GOBIN="$DEST" GOFLAGS="${GOFLAGS:-} -buildvcs=false" go install "github.com/temporalio/cli/cmd/temporal@$VERSION" >&2; then
    log "built in $(( $(date +%s) - start ))s"
  else
    log "go install failed"
  fi
else
  log "go is not installed"
fi

if ! [ -x "$BIN" ]; then
  log "no Temporal CLI: install Go 1.24+ and run this again, install the CLI (https://docs.temporal.io/cli#install)"
  log "and put it on PATH, or set TEMPORAL_CLI_PATH to a temporal binary"
  exit 1
fi

"$BIN" --version >&2
echo "$BIN"
