# Images of agent-followup, one Dockerfile with three targets:
#   runtime (the default, last stage)  the worker (`node dist/src/worker.js`), the simulator and the CLI, with
#                                      production dependencies only, as the unprivileged `node` user
#   temporal-setup                     the one-shot namespace and search-attribute set-up of docker-compose.yml:
#                                      bash, the official `temporal` CLI and our two scripts
#   build                              compiles TypeScript with the dev dependencies (not shipped)
#
#   docker build -t agent-followup .                            # the runtime image
#   docker build --target temporal-setup -t agent-followup-setup .
ARG NODE_IMAGE=node:24.21.0-bookworm-slim
# Keep it on the same version as the Temporal server it sets up (docker-compose.yml passes TEMPORAL_VERSION).
ARG TEMPORAL_ADMIN_TOOLS_IMAGE=temporalio/admin-tools:1.32.1

# Only its `temporal` CLI is used: a static Go binary (no libc), so it runs on Debian too.
FROM ${TEMPORAL_ADMIN_TOOLS_IMAGE} AS temporal-admin-tools

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The image runs the worker, so @temporalio/worker (an optional peer of the package: a service that only starts
# follow-ups goes without it) is a production dependency here, at the version package.json pins, and survives the prune.
RUN worker="$(node -p "require('./package.json').peerDependencies['@temporalio/worker']")" \
  && npm pkg set "dependencies.@temporalio/worker=$worker" && npm pkg delete 'devDependencies.@temporalio/worker'
# --ignore-scripts: `prepare` would build before the sources are here. The two dependencies with install scripts
# (@swc/core, which checks its native binary, shipped as an optional package; protobufjs, a version notice) do not
# need them.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS temporal-setup
COPY --from=temporal-admin-tools /usr/local/bin/temporal /usr/local/bin/temporal
WORKDIR /opt/agent-followup
COPY scripts/install/register-search-attributes.sh deploy/temporal/setup-namespace.sh ./
USER node
ENTRYPOINT ["bash", "/opt/agent-followup/setup-namespace.sh"]

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# glibc's malloc, set before the process starts (nothing in Node can): two arenas instead of up to one per thread keep
# the SDK's native memory in fewer, fuller arenas; blocks of 64 KiB and more (payloads, histories, a watcher's book)
# mapped on their own go back to the system when freed, where inside an arena a burst of sends left them stranded
# (docs/BENCHMARKS.md, "10,000 waiting in the image's malloc settings").
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536 MALLOC_TRIM_THRESHOLD_=1048576
WORKDIR /app
# Owned by root and read-only to the process: the worker needs no writable files (workflows are bundled in memory).
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
# WORKER_METRICS_ADDRESS=0.0.0.0:9464 serves Prometheus metrics here (docker-compose.yml sets it).
EXPOSE 9464
# SIGTERM drains: in-flight activities get WORKER_SHUTDOWN_GRACE_TIME (30s) to finish; give the container longer.
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/worker.js"]
