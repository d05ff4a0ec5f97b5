# syntax=docker/dockerfile:1
# Image for the API and the Temporal worker (same image, different command; see docker-compose.yml).
FROM node:20-bookworm-slim

# ffmpeg/ffprobe (Debian's build includes libx264 and aac); ca-certificates for outbound HTTPS
# (URL imports, webhooks, S3).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg bubblewrap ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV NODE_ENV=production \
    PATH=/app/node_modules/.bin:$PATH

# Dependencies first for layer caching. tsx is a runtime dependency (TS runs directly).
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY . .
# The dashboard's bundle (vite is a runtime dependency for this step; see docs/dashboard.md).
RUN tsx bin/build-dashboard.ts

USER node
ENV HOST=0.0.0.0 PORT=3000
EXPOSE 3000
# Same as `npx tsx api/server.ts`, minus the npm wrapper (so SIGTERM reaches the app directly).
CMD ["tsx", "api/server.ts"]
