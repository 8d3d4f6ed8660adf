# copyhound: a multi-stage build. The first stage compiles the release binary; the second is
# a slim Debian with the binary alone, run as an unprivileged user.
#
#   docker build -t copyhound .
#   docker run --rm copyhound --help
#
# Templates, CSS/JS, migrations and the default settings are compiled into the binary, so the
# runtime image needs no files from the source tree.

# --- build -------------------------------------------------------------------------------
# The workspace's rust-version is 1.94; the image tracks the toolchain the project is tested
# with.
FROM rust:1.95-slim-bookworm AS build
# cmake and a C compiler: zstd and aws-lc (TLS for sqlx) are built from C sources.
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The registry and target caches outlive a build (BuildKit), so a change to one crate does not
# recompile the dependencies.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p copyhound \
 && cp target/release/copyhound /usr/local/bin/copyhound

# --- runtime -----------------------------------------------------------------------------
FROM debian:bookworm-slim AS runtime
# ca-certificates: crawling and the time-stamping authority speak HTTPS. tini reaps children
# and forwards SIGTERM, so `docker stop` gives workers their grace period (and reaps the
# headless browsers). chromium and chromium-driver: the rendered fetch (crawler.render);
# fonts-wqy-microhei: Chinese text in its screenshots, and the reference font for remapped
# fonts. tesseract-ocr and its Chinese models: chapters served as images (crawler.extract.ocr).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tini \
      chromium chromium-driver fonts-wqy-microhei \
      tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-chi-tra tesseract-ocr-eng \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 copyhound \
 && useradd --system --uid 10001 --gid copyhound --home-dir /srv/copyhound \
      --shell /usr/sbin/nologin copyhound \
 && mkdir -p /srv/copyhound/data/uploads \
 && chown -R copyhound:copyhound /srv/copyhound
COPY --from=build /usr/local/bin/copyhound /usr/local/bin/copyhound
USER copyhound:copyhound
WORKDIR /srv/copyhound
# The defaults (`--database sqlite://data/copyhound.db`, `--upload-dir data/uploads`) are
# relative to the working directory, so both land in the volume; compose sets a Postgres URL.
ENV COPYHOUND_LOG=info \
    COPYHOUND_LOG_FORMAT=json
VOLUME ["/srv/copyhound/data"]
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--", "copyhound"]
CMD ["serve", "--listen", "0.0.0.0:8080"]
