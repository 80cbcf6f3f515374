#!/usr/bin/env bash
# Registers agent-followup's custom search attributes on a Temporal namespace. Run it once per namespace before the
# first worker starts; running it again is harmless (existing attributes are left as they are).
#
#   scripts/install/register-search-attributes.sh              # TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE, or localhost:7233 / default
#   TEMPORAL_ADDRESS=temporal:7233 scripts/install/register-search-attributes.sh
#
# It uses the `temporal` CLI (TEMPORAL_CLI, else `temporal` on PATH, else the copy
# scripts/install/install-temporal-cli.sh builds). On Temporal Cloud, set TEMPORAL_API_KEY too; if the key may not
# use the operator API, add them in the Cloud UI (Namespace -> Search Attributes) or with
# `tcld namespace search-attributes add` instead.
set -euo pipefail

attributes=(AgentProjectId AgentJobId AgentJobStatus AgentPrLink AgentFollowUpOutcome)

cli="${TEMPORAL_CLI:-}"
if [[ -z "$cli" ]]; then
  if command -v temporal >/dev/null 2>&1; then
    cli="$(command -v temporal)"
  else
    cli="${XDG_CACHE_HOME:-$HOME/.cache}/agent-followup/temporal-cli-v1.5.1/temporal"
  fi
fi
if [[ ! -x "$cli" ]]; then
  echo "No Temporal CLI found: set TEMPORAL_CLI, put 'temporal' on PATH, or run scripts/install/install-temporal-cli.sh" >&2
  exit 2
fi

namespace="${TEMPORAL_NAMESPACE:-default}"
existing="$("$cli" operator search-attribute list --namespace "$namespace" --output json)"
for name in "${attributes[@]}"; do
  if grep -q "\"$name\"" <<<"$existing"; then
    echo "$name: already registered on namespace '$namespace'"
  else
    "$cli" operator search-attribute create --namespace "$namespace" --name "$name" --type Keyword >/dev/null
    echo "$name: registered (Keyword) on namespace '$namespace'"
  fi
done
