#!/usr/bin/env bash
# One-shot set-up of a self-hosted Temporal for agent-followup: waits until the frontend answers, creates the namespace
# if it does not exist, registers our search attributes with scripts/install/register-search-attributes.sh (the one list
# of them). Safe to run on every `docker compose up`: nothing that exists is changed. Nothing else needs setting up: the
# per-project send budget is kept by each project's coordinator workflow (README, "The send budget").
#
# Runs in the image's `temporal-setup` target (bash, the official `temporal` CLI and the register script beside this
# one) and from a checkout (scripts/stack/production-stack.sh), where the register script is in ../../scripts/install.
# Not for Temporal Cloud: there, namespaces and search attributes are created with `tcld` or the Cloud UI (see
# docs/DEPLOYMENT.md).
#
#   TEMPORAL_ADDRESS (temporal:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_NAMESPACE_RETENTION (72h),
#   TEMPORAL_CLI (else `temporal` on PATH), SETUP_ATTEMPTS (60; one every 2s)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
register="$here/register-search-attributes.sh"
[[ -f "$register" ]] || register="$here/../../scripts/install/register-search-attributes.sh"
if [[ ! -f "$register" ]]; then
  echo "setup-namespace: register-search-attributes.sh is neither beside this script nor in ../../scripts/install" >&2
  exit 2
fi
export TEMPORAL_CLI="${TEMPORAL_CLI:-$(command -v temporal || true)}"
if [[ ! -x "$TEMPORAL_CLI" ]]; then
  echo "setup-namespace: no Temporal CLI: set TEMPORAL_CLI or put 'temporal' on PATH (scripts/install/install-temporal-cli.sh)" >&2
  exit 2
fi
temporal() { "$TEMPORAL_CLI" "$@"; }
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
export TEMPORAL_NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
retention="${TEMPORAL_NAMESPACE_RETENTION:-72h}"
attempts="${SETUP_ATTEMPTS:-60}"

log() { echo "setup-namespace: $*" >&2; }

# Retries a command every 2s, quietly, until it succeeds or the attempts run out (then shows its last output).
retry() {
  local what="$1" output
  shift
  for ((i = 1; i <= attempts; i++)); do
    if output="$("$@" 2>&1)"; then
      [[ -n "$output" ]] && echo "$output"
      return 0
    fi
    sleep 2
  done
  log "gave up on $what after $attempts attempts; its last output:"
  echo "$output" >&2
  return 1
}

log "waiting for the Temporal frontend at $TEMPORAL_ADDRESS"
retry "the health check" temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null

if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
  log "namespace '$TEMPORAL_NAMESPACE' exists"
else
  log "creating namespace '$TEMPORAL_NAMESPACE' (retention $retention)"
  retry "creating the namespace" temporal operator namespace create --address "$TEMPORAL_ADDRESS" \
    --namespace "$TEMPORAL_NAMESPACE" --retention "$retention" >/dev/null
fi

# A namespace just created can be unknown to the search-attribute API for a few seconds (the server's namespace
# cache), so the idempotent registration is retried.
registered="$(retry "registering the search attributes" bash "$register")"
echo "$registered"
if grep -q ': registered' <<<"$registered"; then
  # SQL visibility maps new attributes through the namespace's config, which the server's caches see only after
  # their next namespace refresh (system.namespaceCacheRefreshInterval, 2s by default). Until then a follow-up
  # started with these attributes would be refused, so the worker starts after it.
  log "waiting 5s for the server's namespace cache to pick up the new attributes"
  sleep 5
fi
log "done"
