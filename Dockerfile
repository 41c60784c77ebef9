# One image for every Hado process: the `hado` binary runs core
# (`hado core`), the gateways (`hado gateway-http`, `hado gateway-mcp`) and
# the operator's commands. Nothing secret is baked in; settings come from the
# environment at run time.

FROM rust:1.95-bookworm AS build
WORKDIR /src

# The dependencies first, from the manifests alone, so that a change to
# Hado's own code does not rebuild them.
COPY Cargo.toml Cargo.lock ./
COPY proto/ proto/
COPY words/Cargo.toml words/
COPY views/Cargo.toml views/
COPY runtime/Cargo.toml runtime/
COPY gateway/Cargo.toml gateway/
COPY domain/Cargo.toml domain/
COPY storage/Cargo.toml storage/
COPY engine/Cargo.toml engine/
COPY core/Cargo.toml core/
COPY testing/Cargo.toml testing/
COPY gateway-http/Cargo.toml gateway-http/
COPY gateway-mcp/Cargo.toml gateway-mcp/
COPY cli/Cargo.toml cli/
RUN for crate in words views runtime gateway domain storage engine core testing gateway-http gateway-mcp cli; do \
        mkdir -p $crate/src $crate/benches && echo "fn main() {}" > $crate/src/main.rs && touch $crate/src/lib.rs; \
    done \
 && echo "fn main() {}" > core/benches/core.rs \
 && echo "fn main() {}" > gateway-http/benches/http.rs \
 && echo "fn main() {}" > gateway-mcp/benches/mcp.rs \
 && echo "fn main() {}" > cli/benches/memory.rs \
 && echo "fn main() {}" > cli/benches/floods.rs \
 && echo "fn main() {}" > cli/benches/peaks.rs \
 && echo "fn main() {}" > cli/benches/pages.rs \
 && cargo build --release --locked -p hado \
 && rm -rf words/src views/src runtime/src gateway/src domain/src storage/src engine/src core/src testing/src gateway-http/src gateway-mcp/src cli/src

# Then Hado itself.
COPY . .
RUN touch words/src/lib.rs views/src/lib.rs runtime/src/lib.rs gateway/src/lib.rs domain/src/lib.rs storage/src/lib.rs engine/src/lib.rs core/src/lib.rs testing/src/lib.rs gateway-http/src/lib.rs gateway-mcp/src/lib.rs cli/src/main.rs \
 && cargo build --release --locked -p hado

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/hado --create-home hado
COPY --from=build /src/target/release/hado /usr/local/bin/hado
USER hado
WORKDIR /var/lib/hado
ENV HADO_LOG_FORMAT=json
ENTRYPOINT ["hado"]
CMD ["--help"]
