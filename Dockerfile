# activity-control-plane: one binary, `acp` (serve | api | worker | migrate |
# openapi). Build: docker build -t activity-control-plane .

# --- console ---------------------------------------------------------------
# The operations console (console/), built from its lockfile; build.rs embeds
# console/dist into the binary.
FROM node:20-bookworm-slim AS console
WORKDIR /src
COPY clients/typescript clients/typescript
COPY console/package.json console/package-lock.json console/
RUN npm ci --prefix console --no-audit --no-fund --ignore-scripts
COPY openapi openapi
COPY console console
RUN npm run --prefix console build

# --- build -----------------------------------------------------------------
FROM rust:1-bookworm AS builder
# The Temporal SDK's protos crate runs protoc in its build script.
RUN apt-get update \
 && apt-get install -y --no-install-recommends protobuf-compiler libprotobuf-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Strip symbols (the binary goes from about 65 MB to 50 MB); set before the
# first build so the dependency layer and the final build use the same profile.
ENV CARGO_PROFILE_RELEASE_STRIP=symbols

# Dependencies first, against stub sources, so this slow layer (the SDK,
# axum, sqlx...) is reused until a manifest or Cargo.lock change. The
# workspace's crates (crates/*) need their manifests and a stub root each.
COPY Cargo.toml Cargo.lock ./
COPY crates/domain/Cargo.toml crates/domain/
COPY crates/store/Cargo.toml crates/store/
COPY crates/temporal/Cargo.toml crates/temporal/
COPY crates/service/Cargo.toml crates/service/
RUN mkdir src \
 && echo 'fn main() {}' > src/main.rs \
 && touch src/lib.rs \
 && for crate in domain store temporal service; do \
      mkdir crates/$crate/src && touch crates/$crate/src/lib.rs; \
    done \
 && cargo build --release --bin acp \
 && rm -rf src crates/*/src

# Then the real sources (src/, crates/, migrations/ embedded by the store's
# sqlx::migrate!, .sqlx/ with the query macros' offline data, which they find
# at the workspace root, ...; .dockerignore keeps target/, tools/ and .git
# out). The store's statements are checked against that data, not a
# database (there is none here): SQLX_OFFLINE. Touch the crate roots so
# cargo rebuilds the crates rather than trusting the stubs' timestamps.
COPY . .
COPY --from=console /src/console/dist console/dist
ENV SQLX_OFFLINE=true
RUN test -n "$(ls .sqlx/query-*.json)" \
 && touch src/main.rs src/lib.rs crates/*/src/lib.rs \
 && cargo build --release --bin acp

# --- runtime ---------------------------------------------------------------
FROM debian:bookworm-slim
# ca-certificates: TLS to managed PostgreSQL / Temporal Cloud.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin acp
COPY --from=builder /src/target/release/acp /usr/local/bin/acp
USER acp
EXPOSE 8080
ENV ACP_LISTEN=0.0.0.0:8080
ENTRYPOINT ["acp"]
CMD ["serve"]
