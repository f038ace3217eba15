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
# The data folder (./.ledger) is the ledger user's, writable.
WORKDIR /home/ledger
ENV LEDGER_HOST=0.0.0.0
EXPOSE 8080
# The image has no PostgreSQL server: the roles connect to LEDGER_DATABASE_URL (docker-compose.yml
# names one for each). Without it, `ledger api` stops at once with an error naming it.
CMD ["ledger", "api"]
