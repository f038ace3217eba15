#!/usr/bin/env bash
# Installs the system packages the ledger needs when they are missing: the PostgreSQL server
# and client (initdb, pg_ctl, postgres, pgbench), Prometheus, Go's x/mod, Chromium and Selenium, glewlwyd, Patroni, etcd,
# HAProxy and Barman (tests only), PL/Proxy (shard routing), age (sealed secrets in backups), faketime (tests) and the usual
# build headers. Debian/Ubuntu.
set -euo pipefail

need=()
have_server=false
for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then have_server=true; fi
done
$have_server || need+=(postgresql)
command -v pgbench >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || need+=(postgresql-client)
# Prometheus and promtool: the monitoring tests check the shipped alert rules and dashboard
# against a real Prometheus.
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || need+=(prometheus)
# Go and golang.org/x/mod (sumdb/tlog): the tiles are checked by a verifier no one here wrote.
command -v go >/dev/null 2>&1 || need+=(golang-go)
# Chromium and its driver: the console is tested in a real browser (Selenium, from PyPI, below).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
# glewlwyd: the console signs in through a real OpenID Connect provider in its tests
# (scripts/oidc-provider); dbconfig-sqlite3 answers its database question without MariaDB's client.
command -v glewlwyd >/dev/null 2>&1 || need+=(glewlwyd dbconfig-sqlite3)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
# Patroni, etcd and HAProxy: the failover soak (scripts/failover) runs the cluster of deploy/patroni.
command -v patroni >/dev/null 2>&1 || need+=(patroni)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
# Barman: the disaster drill's backup server (scripts/disaster, deploy/barman).
command -v barman >/dev/null 2>&1 || need+=(barman)
# age: `ledger backup --recipient` seals the ledger's secrets with it (SPEC "A backup is not a key
# ring"); faketime: the tests skew the host's clock against the database's.
command -v age >/dev/null 2>&1 || need+=(age)
command -v faketime >/dev/null 2>&1 || need+=(faketime)
# PL/Proxy: shards are routed by it (issue 49); its package is built for one server version.
if ! ls /usr/share/postgresql/*/extension/plproxy.control >/dev/null 2>&1; then
    # The installed server's version, else the one Debian's `postgresql` would install.
    major=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1)
    [ -n "$major" ] || major=$(apt-cache depends postgresql 2>/dev/null | grep -oE 'postgresql-[0-9]+' | head -1 | cut -d- -f2)
    need+=("postgresql-${major:-15}-plproxy")
fi
for pkg in libpq-dev libssl-dev golang-golang-x-mod-dev python3-etcd; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done

# Selenium from PyPI (Debian's is older than Chromium's driver protocol wants).
if ! python3 -c "import selenium" >/dev/null 2>&1; then
    echo "setup: installing selenium (pip)" >&2
    python3 -m pip install -q selenium 2>/dev/null || python3 -m pip install -q --break-system-packages selenium
fi

if [ ${#need[@]} -eq 0 ]; then exit 0; fi
echo "setup: installing ${need[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
else
    echo "setup: please install: ${need[*]}" >&2
    exit 1
fi
# Debian starts a cluster of its own on install; the ledger runs private ones instead.
if command -v pg_lsclusters >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    pg_lsclusters -h 2>/dev/null | while read -r version name _; do
        pg_ctlcluster "$version" "$name" stop >/dev/null 2>&1 || true
    done
fi
