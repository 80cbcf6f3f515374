#!/bin/sh
# Creates Temporal's two PostgreSQL databases if they are missing and brings both schemas up to the version that the
# admin-tools image ships, then exits. Runs in temporalio/admin-tools (Alpine, POSIX sh, no bash) before the server
# starts, on every `docker compose up`: each step is idempotent (an existing database is kept, setup-schema skips a
# schema already past 0.0, update-schema applies only missing versions), so bumping TEMPORAL_VERSION upgrades the
# schema here first. Temporal supports upgrades one minor version at a time.
#
# Needs temporal-sql-tool on PATH (the image has it; scripts/install/install-temporal-server.sh builds it).
# Connection settings come from temporal-sql-tool's own variables: SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER and
# SQL_PASSWORD (the password never appears on a command line).
set -eu

: "${SQL_PLUGIN:?set SQL_PLUGIN (postgres12)}"
: "${SQL_HOST:?set SQL_HOST}"
: "${SQL_USER:?set SQL_USER}"
: "${SQL_PASSWORD:?set SQL_PASSWORD}"
SQL_PORT="${SQL_PORT:-5432}"
export SQL_PLUGIN SQL_HOST SQL_PORT SQL_USER SQL_PASSWORD

# The admin-tools image keeps Temporal's schema files here; elsewhere point TEMPORAL_SCHEMA_DIR at the `schema` folder
# of the same Temporal server release (scripts/stack/production-stack.sh uses the Go module's copy).
schema_root="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema}/postgresql/v12"
if [ ! -d "$schema_root" ]; then
  echo "setup-schema: $schema_root is missing: run this in the temporalio/admin-tools image, or set TEMPORAL_SCHEMA_DIR" \
    "to the schema folder of the Temporal server release you run" >&2
  exit 1
fi

# database name, then its schema directory under $schema_root
for pair in "${TEMPORAL_DB:-temporal}:temporal" "${TEMPORAL_VISIBILITY_DB:-temporal_visibility}:visibility"; do
  db="${pair%%:*}"
  dir="$schema_root/${pair#*:}/versioned"
  echo "setup-schema: database '$db' on $SQL_HOST:$SQL_PORT"
  temporal-sql-tool --db "$db" create
  temporal-sql-tool --db "$db" setup-schema -v 0.0
  temporal-sql-tool --db "$db" update-schema -d "$dir"
done
echo "setup-schema: both schemas are up to date"
