#!/usr/bin/env bash
# Installs Temporal server v1.32.1 (the same release as the compose stack's image), its SQL schema tool and the schema
# files of that release from the Go module proxy into a cache outside the repo, and prints the cache folder on the last
# line of stdout. Used by scripts/stack/production-stack.sh, which runs the compose topology without Docker. Cached
# binaries that run are reused.
set -euo pipefail

VERSION="v1.32.1"
CACHE_ROOT="${AGENT_FOLLOWUP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-followup}"
DEST="$CACHE_ROOT/temporal-server-$VERSION"

log() { echo "install-temporal-server: $*" >&2; }

if [ -x "$DEST/server" ] && [ -x "$DEST/temporal-sql-tool" ] && [ -d "$DEST/schema/postgresql" ] &&
  "$DEST/temporal-sql-tool" --version >/dev/null 2>&1; then
  log "using cached $DEST"
  echo "$DEST"
  exit 0
fi
command -v go >/dev/null 2>&1 || { log "go is not installed; the server builds from the Go module proxy"; exit 1; }

mkdir -p "$DEST"
start=$(date +%s)
log "building temporal server $VERSION and its sql tool with go install (first time only; several minutes)"
GOBIN="$DEST" GOFLAGS="${GOFLAGS:-} -buildvcs=false" go install \
  "go.temporal.io/server/cmd/server@$VERSION" "go.temporal.io/server/cmd/tools/sql@$VERSION" >&2
# The sql tool's package is named for its folder; give it the name the server image and docs use.
mv "$DEST/sql" "$DEST/temporal-sql-tool"
# The schema files of the same release, which the admin-tools image keeps in /etc/temporal/schema.
module_dir="$(go mod download -json "go.temporal.io/server@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
rm -rf "$DEST/schema"
cp -R "$module_dir/schema" "$DEST/schema"
chmod -R u+w "$DEST/schema"
log "built in $(( $(date +%s) - start ))s"
echo "$DEST"
