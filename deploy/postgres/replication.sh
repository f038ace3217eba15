#!/bin/sh
# Runs once, when the primary's container initialises its data folder: lets the standby
# (postgres-standby in docker-compose.yml) stream the primary's WAL as the owner.
set -eu
echo "host replication ${POSTGRES_USER} all scram-sha-256" >> "$PGDATA/pg_hba.conf"
