#!/bin/sh
# Runs once, when the PostgreSQL container initialises its data folder: the role the ledger's
# services log in as, a member of ledger_service (which the migrations grant: read the log,
# append through its functions, never change it). The owner (POSTGRES_USER) runs migrations.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE ledger_service NOLOGIN;
CREATE ROLE ledger_app LOGIN PASSWORD '${LEDGER_APP_PASSWORD}' IN ROLE ledger_service;
SQL
