"""The shards' failover drill (scripts/failover --modes shards; docs/SCALING.md, "Shards on
Patroni"): a real `ledger serve` on two shards, each a three-node Patroni cluster behind its
HAProxy, the ledger's own database (the top log, the PL/Proxy cluster's definition) a third, all
from scripts/ha-cluster (LEDGER_HA_SHARD=0, 1, 2). Writers start collaborations on each shard
(each start's Idempotency-Key picked so PL/Proxy's hash places it there) while a shard's leader
is lost, then the top cluster's:

- the other shard's starts are all acknowledged, throughout;
- the lost shard's are refused with 503 and Retry-After, never another error, until its new
  leader takes them again (a start in flight as the leader is lost waits in the shard's pool,
  up to the failover: counted, and retried with its key);
- with the top cluster's leader lost, both shards' starts go on and /tlog/ comes back;
- no acknowledged start is lost or stored twice, each on the shard its key hashes to;
- afterwards each shard's log is checkpointed to its head, the top log has grown past the top
  checkpoint saved before the kills, and `ledger log verify --url --shards` checks both levels
  from tiles against that saved checkpoint.

Standard library only; psql for the shards' logs.
"""
import argparse, json, os, subprocess, sys, tempfile, threading, time, uuid

sys.path.insert(0, os.path.dirname(__file__))
from soak import NO_ANSWER, request, serving, wait_for  # noqa: E402

SHARDS = 2
PARTITIONS = 16


def url(cluster):
    return f"postgres://ledger:ha-ledger@127.0.0.1:{15432 + 100 * cluster}/ledger?sslmode=disable"


def log(*parts):
    print("shards:", *parts, flush=True)


def psql(sql, cluster):
    out = subprocess.run(["psql", url(cluster), "-XAtq", "-v", "ON_ERROR_STOP=1"], input=sql, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"shards: psql failed: {out.stderr[-500:]}")
    return out.stdout


def leader(cluster):
    """The cluster's running leader, from any node's Patroni REST API."""
    for node in range(3):
        try:
            status, body = request(18008 + 100 * cluster + node, "GET", "/cluster", timeout=2)
        except NO_ANSWER:
            continue
        if status == 200:
            return next((m["name"] for m in json.loads(body)["members"] if m["role"] == "leader" and m["state"] == "running"), None)
    return None


def keys_by_shard(count):
    """Start keys for each shard: PL/Proxy's rule, hashtext(key) & (partitions - 1), partition p on
    shard p mod SHARDS (`ledger shards init` maps them in turn)."""
    keys = [str(uuid.uuid4()) for _ in range(count)]
    rows = psql("".join(f"SELECT '{k}', hashtext('{k}') & {PARTITIONS - 1};\n" for k in keys), 0).split()
    pools = {s: [] for s in range(SHARDS)}
    for row in rows:
        key, partition = row.split("|")
        pools[int(partition) % SHARDS].append(key)
    return pools


class Drill:
    def __init__(self, port, token, pools):
        self.port, self.token, self.pools = port, token, pools
        self.lock = threading.Lock()
        self.acked = {}  # collaboration id -> (shard, position)
        self.acks = {s: [] for s in range(SHARDS)}  # each shard's ack times
        self.refusals = {s: [] for s in range(SHARDS)}  # each shard's 503 times
        self.failures = []
        self.waited = {s: 0 for s in range(SHARDS)}  # requests unanswered within 15 s, each shard
        self.stopping = threading.Event()

    def writer(self, shard):
        while not self.stopping.is_set():
            with self.lock:
                key = self.pools[shard].pop()
            body = {"localIdentifier": key, "title": "drill", "initiatorHandle": "drill@example.com"}
            while not self.stopping.is_set():  # the same key until answered: a retry never writes twice
                try:
                    status, raw, headers = self.post(body, key)
                except NO_ANSWER:
                    # In flight as the leader was lost: it waits in the shard's pool (up to the
                    # failover) past the client's 15 s; retried with its key, as soak.py does.
                    with self.lock:
                        self.waited[shard] += 1
                    continue
                now = time.monotonic()
                with self.lock:
                    if status == 201:
                        answer = json.loads(raw)
                        self.acked[answer["collaborationId"]] = (shard, answer["position"])
                        self.acks[shard].append(now)
                        break
                    if status == 503 and headers.get("retry-after"):
                        self.refusals[shard].append(now)
                    else:
                        self.failures.append(f"shard {shard}: {status} {raw[:200]!r}")
                time.sleep(0.1)

    def post(self, body, key):
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        try:
            conn.request("POST", "/v1/collaborations", body=json.dumps(body), headers={
                "Authorization": f"Bearer {self.token}", "Content-Type": "application/json", "Idempotency-Key": key})
            r = conn.getresponse()
            return r.status, r.read(), {k.lower(): v for k, v in r.getheaders()}
        finally:
            conn.close()

    def between(self, shard, start, end, times=None):
        with self.lock:
            return [t for t in (times or self.acks)[shard] if start <= t <= end]


def kill(cluster, drill, steady):
    """Loses the cluster's leader; returns (old, new, seconds its own shard's starts stopped)."""
    env = dict(os.environ, LEDGER_HA_SHARD=str(cluster))
    old = wait_for(f"cluster {cluster}'s leader", 60, lambda: leader(cluster))
    killed = time.monotonic()
    subprocess.run(["scripts/ha-cluster", "node-kill", old], check=True, env=env)
    new = wait_for(f"cluster {cluster}'s new leader", 120, lambda: (l := leader(cluster)) and l != old and l)
    if cluster > 0:
        wait_for(f"shard {cluster - 1}'s starts acknowledged again", 120,
                 lambda: drill.between(cluster - 1, time.monotonic() - 0.5, time.monotonic()), every=0.1)
    subprocess.run(["scripts/ha-cluster", "node-start", old], check=True, env=env)
    time.sleep(steady)
    return old, new, killed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--steady", type=float, default=4.0, help="seconds of writes before and after each kill")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="ledger-shards-drill-")
    env = dict(os.environ, LEDGER_DATABASE_URL=url(0), LEDGER_DATA_DIR=work, LEDGER_LOG_ORIGIN="shards.test/ledger",
               LEDGER_LOG_LEVEL="warning")
    shards = sum([["--shard", f"host=127.0.0.1 port={15432 + 100 * k} dbname=ledger"] for k in range(1, SHARDS + 1)], [])
    subprocess.run([args.ledger, "shards", "init", *shards, "--partitions", str(PARTITIONS)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return serving(args.ledger, env, work, ["--shard-cluster", "ledger_shards"], lambda port: drill(args, port, work))


def drill(args, port, work):
    wait_for("ledger serve ready", 120, lambda: request(port, "GET", "/ready", timeout=2)[0] == 200)
    token = subprocess.run([args.ledger, "token", "--account", "drill", "--data-dir", work], capture_output=True, text=True,
                           check=True).stdout.strip()
    d = Drill(port, token, keys_by_shard(20000))
    threads = [threading.Thread(target=d.writer, args=(s,), daemon=True) for s in range(SHARDS) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(args.steady)
    # The top checkpoint before the kills, kept as an auditor keeps one.
    note = wait_for("a top checkpoint", 60, lambda: (r := request(port, "GET", "/tlog/checkpoint"))[0] == 200 and r[1].decode())
    saved_size = int(note.split("\n")[1])
    saved_file = os.path.join(work, "top.checkpoint")
    with open(saved_file, "w") as f:
        f.write(note)
    status = 0
    # Shard 0's cluster (LEDGER_HA_SHARD=1), then the top cluster (0).
    for cluster in (1, 0):
        old, new, killed = kill(cluster, d, args.steady)
        now = time.monotonic()
        for shard in range(SHARDS):
            acks = d.between(shard, killed, now)
            gaps = [b - a for a, b in zip([killed] + acks, acks)]
            refused = len(d.between(shard, killed, now, d.refusals))
            lost = cluster == shard + 1
            log(f"cluster {cluster} ({'shard ' + str(cluster - 1) if cluster else 'top'}): {old} -> {new}; shard {shard}: "
                f"{len(acks)} starts acknowledged, longest gap {max(gaps) if gaps else float('inf'):.1f} s, {refused} refused with 503")
            if not lost and (refused or not acks):
                log(f"FAIL: shard {shard} was refused or stopped while cluster {cluster} failed over")
                status = 1
            if lost and not acks:
                log(f"FAIL: shard {shard} took no start after its failover")
                status = 1
    wait_for("/tlog/checkpoint again", 60, lambda: request(port, "GET", "/tlog/checkpoint", timeout=2)[0] == 200)
    d.stopping.set()
    for t in threads:
        t.join(90)
    log(f"starts unanswered within 15 s and retried with their key: {d.waited}")
    if d.failures:
        log(f"FAIL: {len(d.failures)} answers neither 201 nor 503 with Retry-After, e.g. {d.failures[:3]}")
        status = 1
    # Every acknowledged start on the shard its key hashes to, at its position, once.
    for shard in range(SHARDS):
        rows = psql("SELECT substr(stream_id, 15), position FROM ledger_events WHERE event_type = 'CollaborationStarted'", shard + 1).split()
        held = {}
        for row in rows:
            cid, position = row.split("|")
            held.setdefault(cid, []).append(int(position))
        mine = {cid: pos for cid, (s, pos) in d.acked.items() if s == shard}
        missing = [cid for cid, pos in mine.items() if held.get(cid) != [pos]]
        stray = [cid for cid, (s, _) in d.acked.items() if s != shard and cid in held]
        log(f"shard {shard}: {len(mine)} acknowledged starts, {len(missing)} missing or stored twice, {len(stray)} of another shard")
        if missing or stray:
            status = 1
    # The top log records each shard's checkpoint of its head, and both levels verify from tiles
    # against the top checkpoint saved before the kills (`ledger log verify --url --shards`).
    def recorded():
        s = json.loads(request(port, "GET", "/v1/log/status", token)[1])
        return all(p["checkpoint"] and p["checkpointLagEvents"] == 0 for p in s["shards"]) and s["head"] > saved_size
    wait_for("every shard checkpointed to its head and the top log grown", 120, recorded, every=0.5)
    answered, key = request(port, "GET", "/v1/log/key", token)
    if answered != 200:
        raise SystemExit(f"shards: GET /v1/log/key answered {answered}: {key[:200]!r}")
    try:
        verify = subprocess.run([args.ledger, "log", "verify", "--url", f"http://127.0.0.1:{port}", "--checkpoint", saved_file,
                                 "--key", key.decode().strip(), "--shards"], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise SystemExit("shards: ledger log verify --shards did not finish within 300 s")
    log(verify.stdout.strip().replace("\n", "; "))
    if verify.returncode != 0:
        log(f"FAIL: ledger log verify --shards: {verify.stderr[-500:]}")
        status = 1
    log("passed" if status == 0 else "failed")
    return status


if __name__ == "__main__":
    sys.exit(main())
