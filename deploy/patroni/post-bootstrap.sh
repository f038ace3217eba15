#!/bin/sh
# Run once by Patroni on the first leader (its argument: a superuser connection URL): the
# ledger's login and database. The ledger migrates as this owner; pg_read_all_stats lets its
# checkpointer see how far each standby has flushed (pg_stat_replication).
set -e
psql "$1" -v ON_ERROR_STOP=1 <<'SQL'
CREATE ROLE ledger LOGIN CREATEROLE PASSWORD 'ha-ledger';
GRANT pg_read_all_stats TO ledger;
CREATE DATABASE ledger OWNER ledger;
SQL
