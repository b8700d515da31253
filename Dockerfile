# syntax=docker/dockerfile:1
#
# One Dockerfile for every process of the gateway. Pick the process with --target:
#
#   docker build --target edge       -t gateway-edge .
#   docker build --target registry   -t gateway-registry .
#   docker build --target auth-flow  -t gateway-auth-flow .
#   docker build --target onboarding -t gateway-onboarding .
#   docker build --target gateway    -t gateway .            (all-in-one, configured by env)
#   docker build --target embedded   -t gateway-embedded .   (all-in-one demo, PGlite inside)
#
# Without --target the last stage (gateway) is built. See deploy/README.md.

# ---------------------------------------------------------------------------------------
# base: Node 20 with the pnpm version of package.json's packageManager, through corepack.
# ---------------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS base
ENV CI=true \
    COREPACK_ENABLE_DOWNLOAD_PROMPT=0
RUN corepack enable && corepack prepare pnpm@10.34.9 --activate
WORKDIR /app

# ---------------------------------------------------------------------------------------
# manifests: only the files that decide what gets installed, so the install layers below
# stay cached until a dependency changes. Every workspace package.json is listed here
# (scripts/deployment-files.test.ts fails when a new package is missing).
# ---------------------------------------------------------------------------------------
FROM base AS manifests
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY packages/config/package.json packages/config/
COPY packages/contracts/package.json packages/contracts/
COPY packages/crypto/package.json packages/crypto/
COPY packages/db/package.json packages/db/
COPY packages/errors/package.json packages/errors/
COPY packages/field-rules/package.json packages/field-rules/
COPY packages/oidc/package.json packages/oidc/
COPY packages/oidc-memory-store/package.json packages/oidc-memory-store/
COPY packages/platform-sdk/package.json packages/platform-sdk/
COPY packages/rpc/package.json packages/rpc/
COPY packages/telemetry/package.json packages/telemetry/
COPY packages/testkit/package.json packages/testkit/
COPY services/admin-console/package.json services/admin-console/
COPY services/all-in-one/package.json services/all-in-one/
COPY services/auth-flow/package.json services/auth-flow/
COPY services/demo-platform/package.json services/demo-platform/
COPY services/dev-identity/package.json services/dev-identity/
COPY services/edge/package.json services/edge/
COPY services/onboarding/package.json services/onboarding/
COPY services/registry/package.json services/registry/

# ---------------------------------------------------------------------------------------
# deps: the full install (dev dependencies included: TypeScript, type packages) needed to
# compile. Build scripts run only for pnpm-workspace.yaml's onlyBuiltDependencies.
# ---------------------------------------------------------------------------------------
FROM manifests AS deps
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --store-dir /pnpm/store

# ---------------------------------------------------------------------------------------
# build: compile every workspace project with `tsc --build` into its dist/, and build the
# admin console's static files (services/admin-console/dist/web).
# ---------------------------------------------------------------------------------------
FROM deps AS build
COPY tsconfig.json tsconfig.base.json ./
COPY packages packages
COPY services services
COPY scripts scripts
RUN pnpm build

# ---------------------------------------------------------------------------------------
# prod-deps: a second, clean install with production dependencies only. @gateway/testkit
# (testcontainers and friends) is a dev dependency of every package and is left out.
# ---------------------------------------------------------------------------------------
FROM manifests AS prod-deps
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --filter '!@gateway/testkit' --store-dir /pnpm/store

# ---------------------------------------------------------------------------------------
# app: the production node_modules plus each package's compiled dist/ (its package.json
# is already there from the manifests). Tests, type declarations and build info are
# dropped: nothing runs them in production.
# ---------------------------------------------------------------------------------------
FROM prod-deps AS app
COPY --from=build /app/packages/config/dist packages/config/dist
COPY --from=build /app/packages/contracts/dist packages/contracts/dist
COPY --from=build /app/packages/crypto/dist packages/crypto/dist
COPY --from=build /app/packages/db/dist packages/db/dist
COPY --from=build /app/packages/errors/dist packages/errors/dist
COPY --from=build /app/packages/field-rules/dist packages/field-rules/dist
COPY --from=build /app/packages/oidc/dist packages/oidc/dist
COPY --from=build /app/packages/oidc-memory-store/dist packages/oidc-memory-store/dist
COPY --from=build /app/packages/platform-sdk/dist packages/platform-sdk/dist
COPY --from=build /app/packages/rpc/dist packages/rpc/dist
COPY --from=build /app/packages/telemetry/dist packages/telemetry/dist
# The admin console's static files (dist/web), served by the edge at /admin/.
COPY --from=build /app/services/admin-console/dist services/admin-console/dist
COPY --from=build /app/services/all-in-one/dist services/all-in-one/dist
COPY --from=build /app/services/auth-flow/dist services/auth-flow/dist
COPY --from=build /app/services/demo-platform/dist services/demo-platform/dist
COPY --from=build /app/services/dev-identity/dist services/dev-identity/dist
COPY --from=build /app/services/dev-identity/seed-accounts.json services/dev-identity/
COPY --from=build /app/services/edge/dist services/edge/dist
COPY --from=build /app/services/onboarding/dist services/onboarding/dist
COPY --from=build /app/services/registry/dist services/registry/dist
RUN rm -rf packages/testkit services/admin-console/dist/tsc \
    && find packages services -path '*/dist/*' -type f \
       \( -name '*.test.js' -o -name '*.test.js.map' -o -name '*.d.ts' -o -name '*.d.ts.map' \
          -o -name '.tsbuildinfo' \) -delete

# ---------------------------------------------------------------------------------------
# runtime: a fresh slim Node image (no pnpm, no compiler, no dev dependencies) holding
# /app read-only for the unprivileged `node` user. Migrations run at each service start.
# ---------------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=app /app /app
# The only writable folder: the embedded PGlite database of the gateway/embedded targets
# when DATABASE_URL is unset (GATEWAY_DATA_DIR defaults to .gateway-data).
RUN mkdir /app/.gateway-data && chown node:node /app/.gateway-data
USER node

# ---------------------------------------------------------------------------------------
# http-runtime: base of the processes that serve HTTP/1.1 (edge, gateway, embedded). The
# health check asks GET /health/live with Node's built-in fetch (slim has no curl).
# ---------------------------------------------------------------------------------------
FROM runtime AS http-runtime
ENV PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# ---------------------------------------------------------------------------------------
# rpc-runtime: base of the internal Connect services, HTTP/2 cleartext on PORT. The health
# check calls grpc.health.v1.Health/Check (Connect JSON over HTTP/2), which probes the
# service's stores live; Kubernetes uses a `grpc:` probe on the same service instead.
# ---------------------------------------------------------------------------------------
FROM runtime AS rpc-runtime
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["node", "-e", "const c=require('node:http2').connect('http://127.0.0.1:'+(process.env.PORT||8080));const no=()=>process.exit(1);c.on('error',no);c.setTimeout(4000,no);const r=c.request({':method':'POST',':path':'/grpc.health.v1.Health/Check','content-type':'application/json'});let b='';r.on('error',no);r.setEncoding('utf8');r.on('data',(d)=>{b+=d});r.on('end',()=>{try{process.exit(JSON.parse(b).status==='SERVING'?0:1)}catch{no()}});r.end('{}')"]

# ---------------------------------------------------------------------------------------
# edge: the public HTTP edge (split mode). Needs REGISTRY_SERVICE_URL,
# AUTH_FLOW_SERVICE_URL, ONBOARDING_SERVICE_URL and IDENTITY_ISSUER.
# ---------------------------------------------------------------------------------------
FROM http-runtime AS edge
CMD ["node", "services/edge/dist/main.js"]

# ---------------------------------------------------------------------------------------
# registry, auth-flow, onboarding: the internal services (split mode). Each needs
# DATABASE_URL and IDENTITY_ISSUER; auth-flow needs REDIS_URL too.
# ---------------------------------------------------------------------------------------
FROM rpc-runtime AS registry
ENV PORT=8081
EXPOSE 8081
CMD ["node", "services/registry/dist/main.js"]

FROM rpc-runtime AS auth-flow
ENV PORT=8082
EXPOSE 8082
CMD ["node", "services/auth-flow/dist/main.js"]

FROM rpc-runtime AS onboarding
ENV PORT=8083
EXPOSE 8083
CMD ["node", "services/onboarding/dist/main.js"]

# ---------------------------------------------------------------------------------------
# embedded: the all-in-one demo (`pnpm start`): PGlite and generated keys under
# /app/.gateway-data (mount a volume there to keep them), nothing else required. The demo
# platform listens on 3000 (DEMO_PLATFORM_PORT): publish both, -p 8080:8080 -p 3000:3000.
# ---------------------------------------------------------------------------------------
FROM http-runtime AS embedded
EXPOSE 3000
CMD ["node", "services/all-in-one/dist/main.js"]

# ---------------------------------------------------------------------------------------
# gateway: the whole gateway in one process, configured only by the environment
# (`pnpm start:gateway`). Needs GATEWAY_ENCRYPTION_KEYS and IDENTITY_ISSUER; DATABASE_URL
# and REDIS_URL are optional (PGlite in /app/.gateway-data and the SQL store otherwise).
# Last, so it is what `docker build .` builds.
# ---------------------------------------------------------------------------------------
FROM http-runtime AS gateway
CMD ["node", "services/all-in-one/dist/gateway-main.js"]
