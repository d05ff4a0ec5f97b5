# syntax=docker/dockerfile:1
# Image for the API, the Temporal workers and live ingest (same image, different command; see
# docker-compose.yml and deploy/helm/vidhost). The TypeScript is compiled in a build stage; the
# runtime runs plain JavaScript with node (no tsx, no compiler, no dev dependencies). Live ingest
# is the media server (`node dist/workers/live-hooks.js`, RTMP) and the live edge `vidhost-edge`
# (Go, built from ingest/ in its own stage: SRT, WHIP/WHEP, LL-HLS; docs/live.md).

# The live edge: one static Go binary from the ingest/ module (ingest/cmd/vidhost-edge).
FROM golang:1.26-bookworm AS edge
WORKDIR /src/ingest
COPY ingest/go.mod ingest/go.sum ./
RUN go mod download
COPY ingest/ ./
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/vidhost-edge ./cmd/vidhost-edge

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# dist/ (tsc) and the dashboard's bundle (vite); then the workflow bundle (webpack), made once here
# so no worker runs webpack at its start (~3 s of CPU a start: WORKFLOW_BUNDLE_PATH below).
RUN npm run build && npm prune --omit=dev --no-audit --no-fund \
 && node dist/workers/workflow-bundle.js dist/workflow-bundle.js

FROM node:20-bookworm-slim
# ffmpeg/ffprobe (Debian's build includes libx264, libx265, SVT-AV1, libsrt and aac); bubblewrap
# for the media sandbox; ca-certificates for outbound HTTPS (URL imports, webhooks, S3).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg bubblewrap util-linux ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
# Built in the build stage from this image's own dist/workflows (same release, by construction).
ENV WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Assets read at run time from the root (lib/root.ts): the player's script and styles, the API
# reference page, the built dashboard.
COPY --from=build /app/api/player/embed.js /app/api/player/embed.css ./api/player/
COPY --from=build /app/sdk ./sdk
COPY --from=build /app/api/openapi/reference.js ./api/openapi/
COPY --from=build /app/dashboard ./dashboard
RUN mkdir -p /app/data && chown node:node /app/data
# The live edge (it runs ffmpeg from the PATH to republish SRT/WHIP feeds to the media server).
COPY --from=edge /out/vidhost-edge /usr/local/bin/vidhost-edge
ENV LIVE_EDGE_PATH=/usr/local/bin/vidhost-edge

USER node
ENV HOST=0.0.0.0 PORT=3000
# 3000 the API; live ingest: 1935/tcp RTMP, 8890/udp SRT, 8189/udp WebRTC, 8889/tcp the edge's
# internal HTTP API (keep it off the public network).
# 8889 (the edge's internal API) is deliberately not exposed: only the API and workers reach it.
EXPOSE 3000 1935 8890/udp 8189/udp
# node itself is PID 1's child of nothing: SIGTERM reaches the app directly and it drains.
CMD ["node", "dist/api/server.js"]
