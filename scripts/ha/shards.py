"""The shards' failover drill (scripts/failover --modes shards; docs/SCALING.md, "Shards on
Patroni"): a real `ledger serve` on two shards, each a three-node Patroni cluster behind its
HAProxy, the ledger's own database (the top log, the PL/Proxy cluster's definition) a third, all
from scripts/ha-cluster (LEDGER_HA_SHARD=0, 1, 2). Writers start collaborations on each shard
(each start's Idempotency-Key picked so PL/Proxy's hash places it there) while shard 0's leader
is lost, then the top cluster's, then shard 1's whole cluster is stopped and started again:

- the other shard's starts are all acknowledged, throughout;
- the lost shard's are refused with 503 and Retry-After, never another error, until its new
  leader takes them again (a start in flight as the leader is lost waits in the shard's pool,
  up to the failover: counted, and retried with its key);
- with the top cluster's leader lost, both shards' starts go on and /tlog/ comes back;
- with shard 1's whole cluster stopped (`scripts/ha-cluster nodes-stop`: every node's Patroni and
  PostgreSQL; its etcd and HAProxy kept) for --outage seconds (60), each answer timed: shard 0's
  starts all acknowledged, none refused; shard 1's refused with 503 and Retry-After, never a 500
  or no answer; /ready 200; every answer within --bound seconds (5). Started again
  (`nodes-start`), shard 1's starts are acknowledged again within 120 s of its leader's return.
  It prints the starts acknowledged and refused, the slowest answers, the time from the restart
  to the first acknowledged start, the server's request lines and error counters meanwhile, and
  keeps every answer's time in outage-answers.csv beside the server's log;
- no acknowledged start is lost or stored twice, each on the shard its key hashes to;
- afterwards each shard's log is checkpointed to its head, the top log has grown past the top
  checkpoint saved before the kills, and `ledger log verify --url --shards` checks both levels
  from tiles against that saved checkpoint.

A writer counts an answer it did not get whole (no connection, a timeout, an answer cut off:
soak.NO_ANSWER) as an unacknowledged start, retries it with its key and carries on.

Standard library only; psql for the shards' logs.
"""
import argparse, datetime, json, os, re, subprocess, sys, tempfile, threading, time

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
    rows = psql(f"SELECT k, hashtext(k) & {PARTITIONS - 1} FROM (SELECT gen_random_uuid()::text AS k FROM generate_series(1, {count})) keys", 0).split()
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
        self.answers = []  # (shard, sent, answered, status or None unanswered, Retry-After given)
        self.stopping = threading.Event()

    def writer(self, shard):
        while not self.stopping.is_set():
            with self.lock:
                if not self.pools[shard]:
                    self.failures.append(f"shard {shard}: its writer ran out of keys")
                    return
                key = self.pools[shard].pop()
            body = {"localIdentifier": key, "title": "drill", "initiatorHandle": "drill@example.com"}
            while not self.stopping.is_set():  # the same key until answered: a retry never writes twice
                sent = time.monotonic()
                try:
                    status, raw, headers = self.post(body, key)
                except NO_ANSWER:
                    # In flight as the leader was lost: it waits in the shard's pool (up to the
                    # failover) past the client's 15 s, or its answer was cut off; unacknowledged,
                    # retried with its key, as soak.py does.
                    with self.lock:
                        self.waited[shard] += 1
                        self.answers.append((shard, sent, time.monotonic(), None, False))
                    time.sleep(0.1)
                    continue
                now = time.monotonic()
                with self.lock:
                    self.answers.append((shard, sent, now, status, bool(headers.get("retry-after"))))
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

    def sent_between(self, shard, start, end):
        """The shard's answers to requests sent from start to end: (sent, seconds, status, Retry-After)."""
        with self.lock:
            return [(t0, t1 - t0, status, ra) for s, t0, t1, status, ra in self.answers if s == shard and start <= t0 <= end]


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


def metrics(port):
    """The server's counters of errors and 5xx answers: {line without its value: value}."""
    try:
        status, text = request(port, "GET", "/metrics", timeout=5)
    except NO_ANSWER:
        return {}
    found = {}
    for line in text.decode(errors="replace").splitlines() if status == 200 else []:
        name, _, value = line.rpartition(" ")
        if not line.startswith("#") and ("error" in name or re.search(r'status(_code)?="5', name)):
            try:
                found[name] = float(value)
            except ValueError:
                pass
    return found


def grown(before, after):
    return "; ".join(f"{name} +{value - before.get(name, 0):g}" for name, value in sorted(after.items()) if value > before.get(name, 0))


def outage(drill, port, work, args):
    """Shard 1's whole cluster (LEDGER_HA_SHARD=2: every node's Patroni and PostgreSQL; its etcd
    and HAProxy kept) stopped for args.outage seconds while the writers go on, then started again.
    Throughout, each answer timed: shard 0's starts all acknowledged within args.bound seconds,
    none refused; shard 1's refused with 503 and Retry-After within args.bound, never another
    answer or none; /ready 200 within args.bound. Then shard 1's starts acknowledged again within
    120 s of its leader's return. Prints the figures; answers whether it passed."""
    down, up = SHARDS - 1, 0
    env = dict(os.environ, LEDGER_HA_SHARD=str(down + 1))
    serve_log = os.path.join(work, "serve.log")
    log_from = os.path.getsize(serve_log)
    readiness, watching = [], threading.Event()  # (sent, seconds, status or None)

    def ready():
        while not watching.is_set():
            sent = time.monotonic()
            try:
                status = request(port, "GET", "/ready", timeout=15)[0]
            except NO_ANSWER:
                status = None
            readiness.append((sent, time.monotonic() - sent, status))
            time.sleep(0.2)

    before = time.monotonic()
    time.sleep(args.steady)  # writes to both shards, for their normal answer times
    counted = metrics(port)
    watcher = threading.Thread(target=ready, daemon=True)
    watcher.start()
    stopping = time.monotonic()
    subprocess.run(["scripts/ha-cluster", "nodes-stop"], check=True, env=env, timeout=300)
    stopped = time.monotonic()
    time.sleep(args.outage)  # the outage's length: the writers go on meanwhile
    restarting = time.monotonic()
    subprocess.run(["scripts/ha-cluster", "nodes-start"], check=True, env=env, timeout=300)
    leading = time.monotonic()
    deadline, first = leading + 120, None
    while first is None and time.monotonic() < deadline:
        first = next(iter(drill.between(down, restarting, time.monotonic())), None)
        time.sleep(0.1)
    back = time.monotonic() if first is None else first
    # The cluster whole again (its replicas running), then writes to both for args.steady seconds.
    wait_for(f"cluster {down + 1}'s three members running", 180, lambda: sum(m["state"] in ("running", "streaming") for m in json.loads(
        request(18008 + 100 * (down + 1), "GET", "/cluster", timeout=2)[1])["members"]) == 3)
    time.sleep(args.steady)
    end = time.monotonic()
    watching.set()
    watcher.join(30)

    # The evidence beside the figures: every answer timed (wall clock, to read with the server's
    # log), the server's own request lines meanwhile, and its error counters' growth.
    wall = time.time() - time.monotonic()
    answers_file = os.path.join(work, "outage-answers.csv")
    with open(answers_file, "w") as f:
        f.write("shard,sent,seconds,status,retry_after\n")
        for shard in range(SHARDS):
            for sent, seconds, status, ra in drill.sent_between(shard, before, end):
                f.write(f"{shard},{datetime.datetime.fromtimestamp(wall + sent, datetime.timezone.utc).isoformat()},{seconds:.3f},{status},{ra}\n")
    with open(serve_log, errors="replace") as f:
        f.seek(log_from)
        lines = f.read().splitlines()
    logged = {}
    for line in lines:
        if (m := re.search(r"duration_ms=([\d.]+) .*path=(\S+) .*status=(\d+) \[LedgerAPI\] request", line)):
            seen = logged.setdefault((m[2], m[3]), [0, 0.0])
            seen[0], seen[1] = seen[0] + 1, max(seen[1], float(m[1]) / 1000)
    log(f"outage: the server's request lines meanwhile (level warning: errors and refusals): "
        + ("; ".join(f"{path} {status}: {n}, the longest {longest:.1f} s" for (path, status), (n, longest) in sorted(logged.items())) or "none")
        + f"; its error counters grown: {grown(counted, metrics(port)) or 'none'}; every answer timed in {answers_file}")

    failures = []
    slowest = lambda answers: max((a[1] for a in answers), default=0.0)
    normal = [a for a in drill.sent_between(up, before, stopping) if a[2] == 201]
    mine = drill.sent_between(up, stopping, end)
    acked = [a for a in mine if a[2] == 201]
    gaps = [b - a for a, b in zip([stopping] + [a[0] + a[1] for a in acked], [a[0] + a[1] for a in acked])]
    log(f"outage: cluster {down + 1} (shard {down}) stopped in {stopped - stopping:.1f} s, kept down {args.outage:.0f} s, "
        f"its leader back {leading - restarting:.1f} s after the restart, its starts acknowledged again "
        f"{back - restarting:.1f} s after the restart ({back - leading:.1f} s after its leader)" + ("" if first else ": NEVER"))
    log(f"outage: shard {up}: {len(acked)} starts acknowledged while shard {down} was down and back ({end - stopping:.0f} s), "
        f"longest gap {max(gaps, default=float('inf')):.1f} s, slowest answer {slowest(mine):.2f} s "
        f"(before: {len(normal)}, slowest {slowest(normal):.2f} s); "
        f"{sum(1 for a in mine if a[2] == 503)} refused, {sum(1 for a in mine if a[2] not in (201, 503))} other answers or none")
    if not acked or len(acked) != len(mine):
        failures.append(f"shard {up} answered other than 201: {sorted({str(a[2]) for a in mine if a[2] != 201})}")
    if slowest(mine) > args.bound:
        failures.append(f"shard {up}'s slowest answer {slowest(mine):.2f} s, past {args.bound} s")
    theirs = drill.sent_between(down, stopping, back)
    refused = [a for a in theirs if a[2] == 503 and a[3]]
    wrong = [a for a in theirs if a[2] != 201 and not (a[2] == 503 and a[3])]
    during = [a for a in theirs if stopped <= a[0] and a[0] + a[1] <= restarting]
    first_refusal = min((a[0] + a[1] for a in refused), default=None)
    log(f"outage: shard {down}: {len(refused)} starts refused with 503 and Retry-After, slowest answer {slowest(theirs):.2f} s "
        f"(median {sorted(a[1] for a in theirs)[len(theirs) // 2] if theirs else 0:.2f} s), the first "
        + (f"{first_refusal - stopping:.1f} s after the stop began" if first_refusal else "never")
        + f"; {sum(1 for a in theirs if a[2] == 201)} acknowledged as it stopped, {sum(1 for a in during if a[2] == 201)} while stopped; "
        f"{len(wrong)} other answers or none")
    if wrong:
        failures.append(f"shard {down} answered other than 201 or 503 with Retry-After: "
                        f"{[(round(a[0] - stopping, 1), round(a[1], 2), a[2]) for a in wrong[:10]]} (seconds after the stop, seconds, status)")
    if slowest(theirs) > args.bound:
        failures.append(f"shard {down}'s slowest answer {slowest(theirs):.2f} s, past {args.bound} s: "
                        f"{[(round(a[0] - stopping, 1), round(a[1], 2), a[2]) for a in theirs if a[1] > args.bound][:10]}")
    if not refused or any(a[2] == 201 for a in during):
        failures.append(f"shard {down} was not refused while its cluster was down")
    if first is None:
        failures.append(f"shard {down} took no start within 120 s of its leader's return")
    bad = [r for r in readiness if r[2] != 200 or r[1] > args.bound]
    log(f"outage: /ready asked {len(readiness)} times, {sum(1 for r in readiness if r[2] == 200)} answered 200, "
        f"slowest {max((r[1] for r in readiness), default=0):.2f} s")
    if bad or not readiness:
        failures.append(f"/ready: {[(round(r[0] - stopping, 1), round(r[1], 2), r[2]) for r in bad[:10]]}")
    for f in failures:
        log(f"FAIL: outage: {f}")
    if failures:
        log(f"outage: the server's log meanwhile ({len(lines)} lines, {serve_log}); the first and last 30:")
        for line in lines[:30] + (["..."] + lines[-30:] if len(lines) > 60 else lines[30:]):
            print("    " + line, flush=True)
    return not failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--steady", type=float, default=4.0, help="seconds of writes before and after each kill")
    parser.add_argument("--outage", type=float, default=60.0, help="seconds shard 1's whole cluster is kept stopped")
    parser.add_argument("--bound", type=float, default=5.0, help="seconds any answer may take while shard 1 is down")
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
    d = Drill(port, token, keys_by_shard(100000))
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
    # Shard 1's whole cluster stopped, then started again.
    if not outage(d, port, work, args):
        status = 1
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
