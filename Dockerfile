# The agent-followup worker (and, with another command, the simulator). Two stages: build with dev dependencies,
# run with production dependencies only, as the unprivileged `node` user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
# SIGTERM drains: in-flight activities get WORKER_SHUTDOWN_GRACE_TIME (30s) to finish.
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/worker.js"]
