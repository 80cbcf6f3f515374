#!/usr/bin/env bash
# Validates docker-compose.yml (and deploy/compose.cloud.yml on top of it) with the real Compose implementation, the
# way `docker compose config` does, without a Docker engine: its defaults, a few environment overrides, and the
# Temporal Cloud override with and without its required variables. Exits non-zero with the reason on the first
# failure.
#
#   scripts/ci/check-compose.sh          # COMPOSE_BIN=/path/to/docker-compose to use another build
#
# The Compose CLI is built once from the Go module proxy (about a minute cold on two cores) and cached in
# ${XDG_CACHE_HOME:-$HOME/.cache}/agent-followup/; without Go, an installed `docker compose` plugin is used instead.
set -euo pipefail
cd "$(dirname "$0")/../.."

COMPOSE_VERSION="v5.6.0" # needs Go >= 1.26.8 (its go.mod); GOTOOLCHAIN=auto fetches that toolchain if Go is older
CACHE_ROOT="${AGENT_FOLLOWUP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-followup}"
CACHED_BIN="$CACHE_ROOT/docker-compose-$COMPOSE_VERSION/docker-compose"

log() { echo "check-compose: $*" >&2; }
fail() {
  log "FAILED: $*"
  exit 1
}

# The binary to run, as an array: a standalone `docker-compose`, or `docker compose`.
compose_cmd=()
if [[ -n "${COMPOSE_BIN:-}" ]]; then
  compose_cmd=("$COMPOSE_BIN")
elif [[ -x "$CACHED_BIN" ]] && "$CACHED_BIN" version >/dev/null 2>&1; then
  compose_cmd=("$CACHED_BIN")
elif command -v go >/dev/null 2>&1; then
  log "building Docker Compose $COMPOSE_VERSION from the Go module proxy (first time only)"
  started=$(date +%s)
  export GOFLAGS="-buildvcs=false" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
  # `go install module@version` refuses modules whose go.mod has exclude directives (Compose's does), so the module
  # is downloaded and built in place, as its own main module: exactly its go.mod and go.sum.
  module_dir="$(go mod download -json "github.com/docker/compose/v5@$COMPOSE_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$module_dir" ]] || fail "could not download github.com/docker/compose/v5@$COMPOSE_VERSION"
  mkdir -p "$(dirname "$CACHED_BIN")"
  (cd "$module_dir" && go build -trimpath \
    -ldflags "-s -w -X github.com/docker/compose/v5/internal.Version=$COMPOSE_VERSION" \
    -o "$CACHED_BIN.tmp" ./cmd) || fail "go build of Docker Compose $COMPOSE_VERSION failed (see above)"
  mv "$CACHED_BIN.tmp" "$CACHED_BIN"
  log "built in $(($(date +%s) - started))s: $CACHED_BIN"
  compose_cmd=("$CACHED_BIN")
elif docker compose version >/dev/null 2>&1; then
  compose_cmd=(docker compose)
else
  fail "no Compose CLI: install Go (to build it) or the docker compose plugin, or set COMPOSE_BIN"
fi
log "using $("${compose_cmd[@]}" version 2>&1 | head -n 1)"

# Compose in a clean environment: only PATH, HOME and the given VAR=value pairs, and no .env file, so that the
# defaults in the file are what is checked (not whatever this shell or a local .env happens to set).
compose() {
  local vars=()
  while [[ $# -gt 0 && "$1" == *=* ]]; do
    vars+=("$1")
    shift
  done
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" "${vars[@]}" "${compose_cmd[@]}" --env-file /dev/null "$@"
}

# expect_json DESCRIPTION JS_CONDITION [VAR=value...] [compose args...]: `config --format json`, then the condition
# (over `c`, the normalised model) must hold.
expect_json() {
  local description="$1" condition="$2" json
  shift 2
  json="$(compose "$@" config --format json)" || fail "$description: compose config rejected the file"
  # shellcheck disable=SC2016 # JavaScript, not shell: ${...} is a template literal
  node -e '
    const c = JSON.parse(require("fs").readFileSync(0, "utf8"));
    if (!new Function("c", `return (${process.argv[1]});`)(c)) process.exit(1);
  ' "$condition" <<<"$json" || fail "$description: expected $condition"
  log "ok: $description"
}

compose config --quiet || fail "docker-compose.yml is not valid (defaults)"
log "ok: docker-compose.yml is valid with its defaults"

expect_json "seven services, every image pinned to a version (none untagged or :latest)" '
  Object.keys(c.services).sort().join() === "postgresql,simulator,temporal,temporal-schema,temporal-setup,temporal-ui,worker" &&
  Object.values(c.services).every((s) => !s.image || /:[^:/]+$/.test(s.image) && !s.image.endsWith(":latest"))'

expect_json "by default the worker uses the local Temporal and the simulator" '
  c.services.worker.environment.TEMPORAL_ADDRESS === "temporal:7233" &&
  c.services.worker.environment.AGENT_API_BASE_URL === "http://simulator:8787" &&
  c.services.worker.environment.AGENT_API_ALLOW_PRIVATE_NETWORKS === "true" &&
  c.services.worker.environment.WORKER_METRICS_ADDRESS === "0.0.0.0:9464" &&
  c.services.worker.environment.LOG_FORMAT === "json" &&
  !("TEMPORAL_API_KEY" in c.services.worker.environment && c.services.worker.environment.TEMPORAL_API_KEY !== null)'

expect_json "every worker polls the coordinators' queue with the default send budget; no watcher setting to size; the set-up sets no budget" '
  c.services.worker.environment.AGENT_COORDINATOR_TASK_QUEUE === "agent-followup-coordinators" &&
  c.services.worker.environment.AGENT_SENDS_PER_PROJECT_PER_HOUR === "80" &&
  !("AGENT_WATCH_SHARDS" in c.services.worker.environment) &&
  !("AGENT_SENDS_PER_PROJECT_PER_HOUR" in c.services["temporal-setup"].environment) &&
  !("TEMPORAL_TASK_QUEUE" in c.services["temporal-setup"].environment)'

expect_json "the worker can be scaled: no container_name, no host port" '
  !c.services.worker.container_name && !(c.services.worker.ports || []).length && c.services.worker.deploy.replicas === 3' \
  WORKER_REPLICAS=3

expect_json "the worker stops later than its drain" '
  c.services.worker.stop_grace_period === "45s"'

expect_json "environment overrides reach the services (another Temporal, version, namespace, budget, queues)" '
  c.services.worker.environment.TEMPORAL_ADDRESS === "temporal.internal:7233" &&
  c.services.worker.environment.TEMPORAL_NAMESPACE === "followups" &&
  c.services.worker.environment.AGENT_COORDINATOR_TASK_QUEUE === "followups-coordinators" &&
  c.services.worker.environment.AGENT_SENDS_PER_PROJECT_PER_HOUR === "40" &&
  c.services["temporal-setup"].environment.TEMPORAL_NAMESPACE === "followups" &&
  c.services.temporal.image === "temporalio/server:1.32.2" &&
  c.services["temporal-schema"].image === "temporalio/admin-tools:1.32.2"' \
  TEMPORAL_ADDRESS=temporal.internal:7233 TEMPORAL_NAMESPACE=followups TEMPORAL_VERSION=1.32.2 \
  AGENT_COORDINATOR_TASK_QUEUE=followups-coordinators AGENT_SENDS_PER_PROJECT_PER_HOUR=40

cloud=(-f docker-compose.yml -f deploy/compose.cloud.yml)
expect_json "Temporal Cloud override: only the worker, TLS by API key, the real API over https" '
  Object.keys(c.services).join() === "worker" &&
  !c.services.worker.depends_on &&
  c.services.worker.environment.TEMPORAL_ADDRESS === "my-ns.a1b2c.tmprl.cloud:7233" &&
  c.services.worker.environment.TEMPORAL_API_KEY === "test-temporal-api-key" &&
  c.services.worker.environment.AGENT_API_BASE_URL === "https://api.mintlify.com" &&
  c.services.worker.environment.AGENT_API_ALLOW_INSECURE_HTTP === "false" &&
  c.services.worker.environment.AGENT_API_ALLOW_PRIVATE_NETWORKS === "false" &&
  c.services.worker.environment.AGENT_API_KEY === "mint_test-not-a-real-key"' \
  TEMPORAL_ADDRESS=my-ns.a1b2c.tmprl.cloud:7233 TEMPORAL_NAMESPACE=my-ns.a1b2c TEMPORAL_API_KEY=test-temporal-api-key \
  AGENT_API_KEY=mint_test-not-a-real-key "${cloud[@]}"

if output="$(compose "${cloud[@]}" config --quiet 2>&1)"; then
  fail "the Temporal Cloud override accepted a configuration without AGENT_API_KEY or TEMPORAL_ADDRESS"
fi
grep -q "AGENT_API_KEY" <<<"$output" || fail "the missing-variable error does not name AGENT_API_KEY: $output"
log "ok: the Temporal Cloud override refuses to run without its required variables"

log "all checks passed"
