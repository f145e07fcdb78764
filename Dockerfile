# syntax=docker/dockerfile:1
# flags in one image: flags-proxy (the default, in Unleash Edge's mode) and flags-server.
#
#   docker build -t flags:0.1.0 .
#   docker run -p 3063:3063 -e UPSTREAM_URL=http://flags-server:4242 -e TOKENS='*:production.…' flags:0.1.0
#   docker run -p 4242:4242 -e DATABASE_URL=postgres://… flags:0.1.0 flags-server
#
# The install is scripts/pack-install.mjs, the script test/e2e/packed-install.test.ts runs outside a
# container: it builds, packs every package and installs the tarballs without dev dependencies.
# test/image/image.podman.ts builds this file and runs both services from it (CI, with Podman, on a
# NODE_IMAGE it makes itself as node:22-slim is made: Debian, Node.js 22, npm, the `node` user).

ARG NODE_IMAGE=node:22-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY . .
# Dev dependencies are needed to build (TypeScript, esbuild); `npm ci` builds once by `prepare`.
RUN npm ci --no-audit --no-fund
RUN node scripts/pack-install.mjs /opt/flags

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="flags" \
      org.opencontainers.image.description="flags-proxy (an Unleash Edge and Unleash Proxy successor) and flags-server (an Unleash-compatible feature-flag server)" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/flags-oss/flags" \
      org.opencontainers.image.documentation="https://github.com/flags-oss/flags/blob/main/docs/deployment.md" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"

ENV NODE_ENV=production \
    PATH=/opt/flags/node_modules/.bin:$PATH \
    DATA_DIR=/var/lib/flags
# The installed tree belongs to root and is read-only for the services; flags-server's embedded
# database (PGlite, used without DATABASE_URL) is the only place either writes.
COPY --from=build /opt/flags /opt/flags
COPY deploy/docker/entrypoint.sh /usr/local/bin/flags-entrypoint
COPY deploy/docker/healthcheck.sh /usr/local/bin/flags-healthcheck
RUN mkdir -p /var/lib/flags && chown node:node /var/lib/flags
VOLUME /var/lib/flags
WORKDIR /var/lib/flags
# The `node` user of the Node.js image (uid 1000), never root.
USER node

# flags-proxy in edge mode (3063, as Unleash Edge) and flags-server (4242).
EXPOSE 3063 4242
# The entry point execs the service, so node is the container's main process: both services stop
# on SIGTERM by finishing requests in flight (the proxy also sends pending usage) and exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["flags-entrypoint"]
CMD ["edge"]
# The probe of the service the container runs (no curl in the image): `flags-server ready` where
# flags-server runs, `flags-proxy health` where flags-proxy does (deploy/docker/healthcheck.sh).
# The start period covers flags-server's first start on PGlite, which creates its database.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["flags-healthcheck"]
