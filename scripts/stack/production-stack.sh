#!/usr/bin/env bash
# Runs the topology of docker-compose.yml without Docker, for machines with no container engine (and for the CI
# smoke test, scripts/ci/production-smoke.ts): PostgreSQL, Temporal server 1.32.1 on it with its schema set up by
# deploy/temporal/setup-schema.sh, the one-shot deploy/temporal/setup-namespace.sh (namespace, search attributes), the
# agent API simulator and N workers. The server is configured by the same environment variables the
# compose file gives the temporalio/server image (its embedded config template reads them), with the same dynamic
# config file. There is no Web UI here: the UI server ships only as an image.
#
#   scripts/stack/production-stack.sh up [--workers N]   # build once, start everything, print the endpoints
#   scripts/stack/production-stack.sh env                # `eval "$(scripts/stack/production-stack.sh env)"` for the CLI
#   scripts/stack/production-stack.sh status
#   scripts/stack/production-stack.sh kill|stop|start SERVICE   # temporal, simulator, worker-1, worker-2, ...
#   scripts/stack/production-stack.sh down [--volumes]   # stop everything; --volumes also deletes the database
#
# Needs: Go (the server builds from the Go module proxy, cached by scripts/install/install-temporal-server.sh),
# PostgreSQL's server binaries (installed from Debian with apt-get when missing and running as root), a built checkout
# (`npm run build`). Everything lives in PRODUCTION_STACK_DIR (default /tmp/agent-followup-production-stack) and listens
# on loopback, on ports from PRODUCTION_STACK_PORT_BASE (default 17000) so it does not meet a dev server on 7233:
# PostgreSQL +432, Temporal frontend +233, simulator +787, Prometheus (server) +800, workers +464+N.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${PRODUCTION_STACK_DIR:-/tmp/agent-followup-production-stack}"
base="${PRODUCTION_STACK_PORT_BASE:-17000}"
pg_port=$((base + 432))
frontend_port=$((base + 233))
simulator_port=$((base + 787))
namespace="${TEMPORAL_NAMESPACE:-default}"
task_queue="${TEMPORAL_TASK_QUEUE:-agent-followup}"
coordinator_queue="${AGENT_COORDINATOR_TASK_QUEUE:-agent-followup-coordinators}"
sends_per_hour="${AGENT_SENDS_PER_PROJECT_PER_HOUR:-80}"
pg_user="${POSTGRES_USER:-temporal}"
pg_password="${POSTGRES_PASSWORD:-temporal}"

log() { echo "production-stack: $*" >&2; }
die() { log "$*"; exit 1; }

pidfile() { echo "$dir/run/$1.pid"; }
running() { [[ -f "$(pidfile "$1")" ]] && kill -0 "$(cat "$(pidfile "$1")")" 2>/dev/null; }

# Starts a service in the background with its own log; the command and its environment come after the name.
launch() {
  local name="$1"
  shift
  if running "$name"; then
    log "$name is already running"
    return
  fi
  mkdir -p "$dir/run" "$dir/logs"
  setsid "$@" >>"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$(pidfile "$name")"
  log "started $name (pid $!, log $dir/logs/$name.log)"
}

signal() {
  local name="$1" sig="$2"
  running "$name" || { log "$name is not running"; return 0; }
  local pid
  pid="$(cat "$(pidfile "$name")")"
  kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid"
  for _ in $(seq 1 120); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null
  rm -f "$(pidfile "$name")"
  log "$name stopped ($sig)"
}

wait_for() {
  local what="$1" attempts="$2"
  shift 2
  for _ in $(seq 1 "$attempts"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  die "$what did not come up; see $dir/logs"
}

postgres_bin() {
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [[ -z "$found" ]]; then
    [[ "$(id -u)" == 0 ]] || die "PostgreSQL's server is not installed: apt-get install postgresql"
    log "installing PostgreSQL from Debian"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql >&2 ||
      { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql >&2; }
    found="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  fi
  echo "$found"
}

# PostgreSQL refuses to run as root; as root it runs as the Debian package's postgres user.
as_postgres=()
[[ "$(id -u)" == 0 ]] && as_postgres=(runuser -u postgres --)

start_postgresql() {
  local bin data="$dir/postgresql"
  bin="$(postgres_bin)"
  if [[ ! -f "$data/PG_VERSION" ]]; then
    mkdir -p "$data"
    local pwfile
    pwfile="$(mktemp)"
    printf '%s\n' "$pg_password" >"$pwfile"
    if [[ "$(id -u)" == 0 ]]; then chown postgres "$data" "$pwfile"; fi
    "${as_postgres[@]}" "$bin/initdb" -D "$data" -U "$pg_user" --pwfile="$pwfile" --auth=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    # One Temporal server holds about 60 connections (docs/DEPLOYMENT.md); 200 leaves room for a second one and tools.
    printf "listen_addresses = '127.0.0.1'\nport = %s\nmax_connections = 200\nunix_socket_directories = '%s'\n" \
      "$pg_port" "$data" | "${as_postgres[@]}" tee -a "$data/postgresql.conf" >/dev/null
  fi
  launch postgresql "${as_postgres[@]}" "$bin/postgres" -D "$data"
  wait_for "PostgreSQL" 60 "$bin/pg_isready" -h 127.0.0.1 -p "$pg_port"
}

# The variables docker-compose.yml gives the temporalio/server image, plus ports off the PRODUCTION_STACK_PORT_BASE.
server_env() {
  server_vars=(DB=postgres12 DB_PORT="$pg_port" POSTGRES_SEEDS=127.0.0.1 POSTGRES_USER="$pg_user" POSTGRES_PWD="$pg_password" \
    BIND_ON_IP=127.0.0.1 NUM_HISTORY_SHARDS="${TEMPORAL_NUM_HISTORY_SHARDS:-64}" \
    DYNAMIC_CONFIG_FILE_PATH="$repo/deploy/temporal/dynamicconfig.yaml" PROMETHEUS_ENDPOINT="127.0.0.1:$((base + 800))" \
    LOG_LEVEL="${TEMPORAL_LOG_LEVEL:-warn}" \
    FRONTEND_GRPC_PORT="$frontend_port" FRONTEND_HTTP_PORT=$((base + 243)) FRONTEND_MEMBERSHIP_PORT=$((base - 67)) \
    INTERNAL_FRONTEND_GRPC_PORT=$((base + 236)) INTERNAL_FRONTEND_HTTP_PORT=$((base + 246)) \
    INTERNAL_FRONTEND_MEMBERSHIP_PORT=$((base - 64)) HISTORY_GRPC_PORT=$((base + 234)) \
    HISTORY_MEMBERSHIP_PORT=$((base - 66)) MATCHING_GRPC_PORT=$((base + 235)) MATCHING_MEMBERSHIP_PORT=$((base - 65)) \
    WORKER_GRPC_PORT=$((base + 239)) WORKER_MEMBERSHIP_PORT=$((base - 61)))
}

start_temporal() {
  server_env
  launch temporal env "${server_vars[@]}" "$server_dir/server" start
  wait_for "the Temporal frontend" 120 "$cli" operator cluster health --address "127.0.0.1:$frontend_port"
}

start_simulator() {
  launch simulator node "$repo/dist/src/simulator/main.js" --host 127.0.0.1 --port "$simulator_port" \
    --work-ms "${SIMULATOR_WORK_MS:-3000}" --job "${SIMULATOR_JOB:-demo-project/demo-job}"
  wait_for "the simulator" 30 curl -fsS "http://127.0.0.1:$simulator_port/_simulator/health"
}

start_worker() {
  local index="$1"
  # glibc's malloc as the Docker image sets it (Dockerfile), so that this path runs the worker the way it is deployed.
  launch "worker-$index" env MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536 MALLOC_TRIM_THRESHOLD_=1048576 \
    TEMPORAL_ADDRESS="127.0.0.1:$frontend_port" TEMPORAL_NAMESPACE="$namespace" \
    TEMPORAL_TASK_QUEUE="$task_queue" AGENT_COORDINATOR_TASK_QUEUE="$coordinator_queue" \
    AGENT_API_BASE_URL="http://127.0.0.1:$simulator_port" AGENT_API_ALLOW_LOOPBACK=true \
    AGENT_API_KEY="${AGENT_API_KEY:-mint_compose-simulator-only}" AGENT_API_REQUEST_TIMEOUT="${AGENT_API_REQUEST_TIMEOUT:-15s}" \
    AGENT_SENDS_PER_PROJECT_PER_HOUR="$sends_per_hour" WORKER_SHUTDOWN_GRACE_TIME="${WORKER_SHUTDOWN_GRACE_TIME:-30s}" \
    WORKER_METRICS_ADDRESS="127.0.0.1:$((base + 464 + index))" LOG_FORMAT=json LOG_LEVEL="${LOG_LEVEL:-INFO}" \
    node "$repo/dist/src/worker.js"
}

tools() {
  cli="$(bash "$repo/scripts/install/install-temporal-cli.sh" | tail -n 1)"
  server_dir="$(bash "$repo/scripts/install/install-temporal-server.sh" | tail -n 1)"
  [[ -f "$repo/dist/src/worker.js" ]] || die "build the checkout first: npm run build"
}

up() {
  local workers="${WORKER_REPLICAS:-2}"
  [[ "${1:-}" == "--workers" ]] && workers="$2"
  tools
  mkdir -p "$dir"
  start_postgresql
  # temporal-schema, as in compose: the same script, the schema files of the same server release.
  SQL_PLUGIN=postgres12 SQL_HOST=127.0.0.1 SQL_PORT="$pg_port" SQL_USER="$pg_user" SQL_PASSWORD="$pg_password" \
    TEMPORAL_SCHEMA_DIR="$server_dir/schema" PATH="$server_dir:$PATH" \
    sh "$repo/deploy/temporal/setup-schema.sh" >>"$dir/logs/temporal-schema.log" 2>&1 ||
    die "the schema set-up failed; see $dir/logs/temporal-schema.log"
  start_temporal
  # temporal-setup, as in compose.
  TEMPORAL_CLI="$cli" TEMPORAL_ADDRESS="127.0.0.1:$frontend_port" TEMPORAL_NAMESPACE="$namespace" \
    bash "$repo/deploy/temporal/setup-namespace.sh" >>"$dir/logs/temporal-setup.log" 2>&1 ||
    die "the namespace set-up failed; see $dir/logs/temporal-setup.log"
  start_simulator
  for index in $(seq 1 "$workers"); do start_worker "$index"; done
  log "up: Temporal at 127.0.0.1:$frontend_port (namespace $namespace), simulator at http://127.0.0.1:$simulator_port," \
    "$workers worker(s) on task queue $task_queue, PostgreSQL at 127.0.0.1:$pg_port"
  log "use the CLI with: eval \"\$(scripts/stack/production-stack.sh env)\"; npm run cli -- send ..."
}

service() {
  local action="$1" name="$2"
  case "$action:$name" in
    kill:*) signal "$name" KILL ;;
    stop:*) signal "$name" TERM ;;
    start:temporal) tools && start_temporal ;;
    start:postgresql) start_postgresql ;;
    start:simulator) start_simulator ;;
    start:worker-*) start_worker "${name#worker-}" ;;
    *) die "unknown service '$name': temporal, postgresql, simulator, worker-N" ;;
  esac
}

down() {
  for pidfile in "$dir"/run/worker-*.pid; do [[ -e "$pidfile" ]] && signal "$(basename "$pidfile" .pid)" TERM; done
  for name in simulator temporal postgresql; do signal "$name" TERM; done
  if [[ "${1:-}" == "--volumes" ]]; then
    rm -rf "$dir"
    log "deleted $dir"
  fi
}

case "${1:-}" in
  up) shift && up "$@" ;;
  down) shift && down "$@" ;;
  env) echo "export TEMPORAL_ADDRESS=127.0.0.1:$frontend_port TEMPORAL_NAMESPACE=$namespace TEMPORAL_TASK_QUEUE=$task_queue AGENT_COORDINATOR_TASK_QUEUE=$coordinator_queue" ;;
  status)
    for pidfile in "$dir"/run/*.pid; do
      [[ -e "$pidfile" ]] || continue
      name="$(basename "$pidfile" .pid)"
      if running "$name"; then echo "$name running (pid $(cat "$pidfile"))"; else echo "$name exited"; fi
    done
    ;;
  kill | stop | start) [[ $# -eq 2 ]] || die "usage: $0 $1 SERVICE" && service "$1" "$2" ;;
  *) die "usage: $0 up [--workers N] | env | status | kill|stop|start SERVICE | down [--volumes]" ;;
esac
