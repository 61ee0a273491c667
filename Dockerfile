# The memory service image: one image for both roles (api: node dist/api/main.js, worker:
# node dist/workers/main.js; docker-compose.yml sets the command and ROLE).
#
#   docker build -t engram .
#
# Models are not baked in: mount the models folder at /models (MODELS_DIR), e.g.
#   docker run -v "$PWD/../shared/models:/models:ro" ... engram
# To bake them in instead, add `COPY models-dir/ /models/` to the runtime stage with the folder
# copied into the build context first.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: all dependencies, compile TypeScript, bundle the workflows, drop dev dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# onnxruntime-node's install script would download CUDA libraries; its CPU binaries ship in the
# npm package itself.
ENV ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
    ONNXRUNTIME_NODE_INSTALL=skip \
    npm_config_update_notifier=false
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: the lockfile leaves out optional packages of other platforms that
# the registry does not serve, which `npm ci` rejects; `npm install` keeps the lockfile as it is.
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    MODELS_DIR=/models \
    DATA_DIR=/data
WORKDIR /app
# File ingestion: pdftoppm renders scanned PDF pages for OCR; ffmpeg decodes compressed audio.
RUN apt-get update \
 && apt-get install -y --no-install-recommends poppler-utils ffmpeg \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /models /data && chown node:node /data
USER node
EXPOSE 8080
CMD ["node", "--scavenger-max-new-space-capacity-mb=8", "dist/api/main.js"]
