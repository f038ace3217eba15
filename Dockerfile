# Build the ledger with the Swift toolchain, run it on a slim Debian with its runtime libraries.
FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY Package.swift ./
COPY Sources Sources
COPY Migrations Migrations
COPY Tests Tests
RUN swift build -c release --product ledger --static-swift-stdlib \
 && mkdir -p /out && cp "$(swift build -c release --show-bin-path)/ledger" /out/ \
 && cp -r "$(swift build -c release --show-bin-path)"/*.resources /out/

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl libcurl4 libxml2 tzdata \
 && rm -rf /var/lib/apt/lists/* && useradd --system --create-home ledger
COPY --from=build /out/ /usr/local/bin/
USER ledger
ENV LEDGER_HOST=0.0.0.0
EXPOSE 8080
CMD ["ledger", "serve"]
