#!/bin/sh
# Run once by Patroni on the first leader (its argument: a superuser connection URL): the
# ledger's login and database. The ledger migrates as this owner; pg_read_all_stats lets its
# checkpointer see how far each standby has flushed (pg_stat_replication). Where PL/Proxy is
# installed, its extension in the ledger's database, usable by the ledger's login, so that
# `ledger shards init` can define the shards' cluster there (PL/Proxy is not a trusted extension:
# only a superuser makes it).
set -e
psql "$1" -v ON_ERROR_STOP=1 <<'SQL'
CREATE ROLE ledger LOGIN CREATEROLE PASSWORD 'ha-ledger';
GRANT pg_read_all_stats TO ledger;
CREATE DATABASE ledger OWNER ledger;
\connect ledger
SELECT 'CREATE EXTENSION plproxy' WHERE EXISTS (SELECT FROM pg_available_extensions WHERE name = 'plproxy') \gexec
SELECT 'GRANT USAGE ON FOREIGN DATA WRAPPER plproxy TO ledger' WHERE EXISTS (SELECT FROM pg_extension WHERE extname = 'plproxy') \gexec
SQL
