#!/bin/sh
# The read replica's entrypoint: on first start, copy the primary (pg_basebackup -R writes the
# settings that make this a streaming standby), then run PostgreSQL as a hot standby, which
# serves reads (LEDGER_READ_DATABASE_URL) and follows the primary's WAL.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    until PGPASSWORD="$PRIMARY_PASSWORD" pg_basebackup -h "$PRIMARY_HOST" -U "$PRIMARY_USER" -D "$PGDATA" -R -X stream --checkpoint=fast; do
        echo "standby: waiting for the primary" >&2
        sleep 2
    done
    chmod 700 "$PGDATA"
fi
exec postgres -c hot_standby=on
