"""The failover soak (scripts/failover): a real `ledger serve` on the Patroni cluster of
scripts/ha-cluster, through HAProxy, with 8 writers and a reader, while the leader is lost
(kill -9 of its Patroni and PostgreSQL) again and again. It checks what SPEC "High availability"
promises and prints what it measured.

- sync: no acknowledged write lost, none stored twice, no minPosition read stale, every
  checkpoint seen consistent with the final log, `ledger log verify` OK.
- async (the leader cut off from its standbys for 1.5 s before each kill, so they lack its
  newest commits): no checkpoint forked; lost writes are counted, not failed.

Standard library only; psql for the final log.
"""
import argparse, base64, hashlib, http.client, json, os, signal, socket, subprocess, sys, tempfile, threading, time, uuid

DB = "postgres://ledger:ha-ledger@127.0.0.1:15432/ledger?sslmode=disable"
READ_DB = "postgres://ledger:ha-ledger@127.0.0.1:15433/ledger?sslmode=disable"
APIS = {"node1": 18008, "node2": 18009, "node3": 18010}


def log(*parts):
    print("failover:", *parts, flush=True)


def wait_for(what, deadline_s, check, every=0.2):
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            value = check()
            if value:
                return value
        except Exception:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"failover: timed out after {deadline_s} s waiting for {what}")
        time.sleep(every)


# What a request that got no whole answer raises: no connection, a timeout, or an answer cut off
# (http.client.IncompleteRead, RemoteDisconnected and the like are HTTPExceptions, not OSErrors).
# A write whose answer was cut off is unacknowledged: retried with its key, never lost count of.
NO_ANSWER = (OSError, http.client.HTTPException)


def request(port, method, path, token=None, body=None, headers=None, timeout=10):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = dict(headers or {})
        if token:
            h["Authorization"] = f"Bearer {token}"
        if body is not None:
            h["Content-Type"] = "application/json"
            body = json.dumps(body)
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def cluster():
    """Patroni's view of the members: {name: (role, state)}."""
    for port in APIS.values():
        try:
            status, body = request(port, "GET", "/cluster", timeout=2)
            if status == 200:
                return {m["name"]: (m["role"], m["state"]) for m in json.loads(body)["members"]}
        except NO_ANSWER:
            continue
    return {}


def leader():
    return next((n for n, (role, state) in cluster().items() if role == "leader" and state == "running"), None)


def psql(sql, url=DB):
    out = subprocess.run(["psql", url, "-XAtq", "-v", "ON_ERROR_STOP=1"], input=sql, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"failover: psql failed: {out.stderr[-500:]}")
    return out.stdout


class Soak:
    def __init__(self, port, token, mode):
        self.port, self.token, self.mode = port, token, mode
        self.lock = threading.Lock()
        self.acked = {}  # collaboration id -> (position, Idempotency-Key)
        self.failures = []  # what a writer saw that it should not have
        self.acks = []  # ack times
        self.stale = self.reads = self.unresolved = 0
        self.checkpoints = {}  # size -> root (base64)
        self.probes = []  # times a plain psql write through HAProxy succeeded
        self.stopping = threading.Event()

    def writer(self):
        while not self.stopping.is_set():
            key = str(uuid.uuid4())
            body = {"localIdentifier": key, "title": "soak", "initiatorHandle": "soak@example.com"}
            # Retried with the same Idempotency-Key until answered: a retry of a write that did
            # commit answers as the first time, so an unknown outcome never writes twice.
            give_up = None
            while True:
                try:
                    status, raw = request(self.port, "POST", "/v1/collaborations", self.token, body, {"Idempotency-Key": key})
                except NO_ANSWER:
                    status, raw = None, b""
                if status == 201:
                    answer = json.loads(raw)
                    with self.lock:
                        self.acked[answer["collaborationId"]] = (answer["position"], key)
                        self.acks.append(time.monotonic())
                        n = len(self.acked)
                    if n % 5 == 0:
                        self.read(answer["collaborationId"], answer["position"])
                    break
                if status is not None and status < 500 and status != 429:
                    with self.lock:
                        self.failures.append(f"a write refused with {status}: {raw[:200]!r}")
                    return
                if self.stopping.is_set():
                    give_up = give_up or time.monotonic() + 60
                    if time.monotonic() > give_up:
                        with self.lock:
                            self.unresolved += 1
                        return
                time.sleep(0.05)

    def read(self, cid, position):
        """A read with minPosition, from the replicas through HAProxy: never stale."""
        try:
            status, _ = request(self.port, "GET", f"/v1/collaborations/{cid}?minPosition={position}", self.token)
        except NO_ANSWER:
            return
        with self.lock:
            if status == 200:
                self.reads += 1
            elif status in (400, 404):
                self.stale += 1  # the write it follows is not there (404), or past the log's head (400)

    def watcher(self):
        while not self.stopping.is_set():
            try:
                status, note = request(self.port, "GET", "/tlog/checkpoint", timeout=2)
                if status == 200:
                    lines = note.decode().split("\n")
                    size, root = int(lines[1]), lines[2]
                    with self.lock:
                        if self.checkpoints.setdefault(size, root) != root:
                            self.checkpoints[size] = "served twice with different roots"
            except NO_ANSWER + (ValueError, IndexError):
                pass
            time.sleep(0.1)

    def prober(self):
        """The cluster's own write outage, for comparison: a psql write through HAProxy, again and again."""
        while not self.stopping.is_set():
            try:
                # Answers only on a leader (a standby is in recovery).
                probe = subprocess.run(["psql", DB + "&connect_timeout=1", "-XAtqc", "SELECT pg_current_wal_lsn()"],
                                       capture_output=True, timeout=5)
            except subprocess.TimeoutExpired:
                continue
            if probe.returncode == 0:
                with self.lock:
                    self.probes.append(time.monotonic())
            time.sleep(0.1)

    def acks_between(self, start, end, probes=False):
        with self.lock:
            return [t for t in (self.probes if probes else self.acks) if start <= t <= end]


def cut_off(node, seconds):
    """Stops (SIGSTOP) the node's WAL senders for `seconds`: its standbys get nothing more, as if
    the network between them were cut; the commits it acknowledges meanwhile are its alone."""
    data = os.path.join(os.environ.get("LEDGER_HA_DIR", "/tmp/ledger-ha"), node)
    with open(os.path.join(data, "postmaster.pid")) as f:
        postmaster = f.readline().strip()
    pids = [int(p) for p in subprocess.run(["pgrep", "-P", postmaster, "-f", "walsender"], capture_output=True, text=True).stdout.split()]
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    time.sleep(seconds)
    return pids


def resume(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def roots_at(leaf_hashes, sizes):
    """RFC 6962 tree heads of the log's first n leaves, for each n in sizes."""
    wanted, roots, stack = set(sizes), {}, []  # stack: (height, hash) of full subtrees
    node = lambda l, r: hashlib.sha256(b"\x01" + l + r).digest()
    for i, leaf in enumerate(leaf_hashes, start=1):
        stack.append((0, leaf))
        while len(stack) > 1 and stack[-1][0] == stack[-2][0]:
            (h, r), (_, l) = stack.pop(), stack.pop()
            stack.append((h + 1, node(l, r)))
        if i in wanted:
            root = stack[-1][1]
            for _, left in reversed(stack[:-1]):
                root = node(left, root)
            roots[i] = base64.b64encode(root).decode()
    return roots


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["sync", "async"], required=True)
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--kills", type=int, default=4)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--steady", type=float, default=5.0, help="seconds of writes between kills")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="ledger-failover-")
    env = dict(os.environ, LEDGER_DATABASE_URL=DB, LEDGER_READ_DATABASE_URL=READ_DB, LEDGER_DATA_DIR=work, LEDGER_PORT="0",
               LEDGER_LOG_ORIGIN="failover.test/ledger", LEDGER_LOG_LEVEL="warning")
    return serving(args.ledger, env, work, [], lambda port: soak(args, port, work))


def serving(ledger, env, work, flags, body):
    """`ledger serve` with `env` and `flags` on a free loopback port, its log in work/serve.log:
    body(port)'s answer, the server stopped (SIGTERM, then SIGKILL after 30 s) after it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with open(os.path.join(work, "serve.log"), "w") as serve_log:
        server = subprocess.Popen([ledger, "serve", "--port", str(port), *flags], env=env, stdout=serve_log, stderr=subprocess.STDOUT)
    try:
        return body(port)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


def soak(args, port, work):
    wait_for("ledger serve ready", 120, lambda: request(port, "GET", "/ready", timeout=2)[0] == 200)
    token = subprocess.run([args.ledger, "token", "--account", "soak", "--data-dir", work], capture_output=True, text=True, check=True).stdout.strip()
    s = Soak(port, token, args.mode)
    threads = [threading.Thread(target=s.writer, daemon=True) for _ in range(args.writers)] + [threading.Thread(target=s.watcher, daemon=True), threading.Thread(target=s.prober, daemon=True)]
    for t in threads:
        t.start()
    outages, cluster_outages, started = [], [], time.monotonic()
    time.sleep(args.steady)
    for k in range(1, args.kills + 1):
        old = wait_for("a leader", 60, leader)
        paused = cut_off(old, 1.5) if args.mode == "async" else []
        killed_at = time.monotonic()
        subprocess.run(["scripts/ha-cluster", "node-kill", old], check=True)
        resume(paused)
        new = wait_for("a new leader", 120, lambda: (l := leader()) and l != old and l)
        wait_for("writes acknowledged again", 120, lambda: s.acks_between(time.monotonic() - 0.5, time.monotonic()), every=0.1)
        subprocess.run(["scripts/ha-cluster", "node-start", old], check=True)
        wait_for(f"{old} back as a replica", 180, lambda: cluster().get(old, ("", ""))[1] in ("running", "streaming") and cluster()[old][0] != "leader")
        time.sleep(args.steady)
        for times, into in [(s.acks_between(killed_at, time.monotonic()), outages),
                            (s.acks_between(killed_at, time.monotonic(), probes=True), cluster_outages)]:
            gaps = [b - a for a, b in zip([killed_at] + times, times)]
            into.append(max(gaps) if gaps else float("inf"))
        log(f"{args.mode}: kill {k}: {old} -> {new}, writes stopped for {outages[-1]:.1f} s (psql through HAProxy: {cluster_outages[-1]:.1f} s)")
    s.stopping.set()
    for t in threads:
        t.join(90)
    elapsed = time.monotonic() - started

    # The final log, from the leader.
    head = int(psql("SELECT position FROM ledger_head"))
    try:
        # Covering it, not equal to it: the index recorder may append a revision record past it.
        wait_for(f"a checkpoint covering the final head {head}", 60,
                 lambda: int(request(port, "GET", "/tlog/checkpoint")[1].split(b"\n")[1]) >= head)
        signed_final = True
    except SystemExit as timeout:
        log(f"{args.mode}: {timeout}")
        signed_final = False
    with s.lock:
        acked = dict(s.acked)
        observed = dict(s.checkpoints)
    # The last checkpoint the checkpointer published, which the watcher may have missed.
    with open(os.path.join(work, "published-checkpoint")) as f:
        lines = f.read().split("\n")
    if observed.setdefault(int(lines[1]), lines[2]) != lines[2]:
        observed[int(lines[1])] = "the file and /tlog/checkpoint disagree"
    ids = os.path.join(work, "acked.csv")
    with open(ids, "w") as f:
        f.writelines(f"collaboration-{cid},{pos},{key}\n" for cid, (pos, key) in acked.items())
    # Each acknowledged start: its stream's CollaborationStarted events, and every event carrying
    # its Idempotency-Key (the metadata's correlationId): exactly one of each, at its position.
    counts = psql(
        "CREATE TEMP TABLE acked (stream_id text, position int8, key text);\n"
        f"\\copy acked FROM '{ids}' WITH (FORMAT csv)\n"
        "WITH keyed AS (SELECT metadata->>'correlationId' AS key, count(*) AS k FROM ledger_events GROUP BY 1)"
        " SELECT count(*) FILTER (WHERE n = 0), count(*) FILTER (WHERE n > 1 OR k > 1), count(*) FILTER (WHERE n = 1 AND moved) FROM ("
        " SELECT a.stream_id, count(e.position) AS n, bool_or(e.position <> a.position) AS moved, max(coalesce(keyed.k, 0)) AS k"
        " FROM acked a LEFT JOIN keyed ON keyed.key = a.key"
        " LEFT JOIN ledger_events e ON e.stream_id = a.stream_id AND e.event_type = 'CollaborationStarted' GROUP BY a.stream_id) c")
    lost, twice, moved = (int(x) for x in counts.strip().split("\n")[-1].split("|"))
    leaves = [bytes.fromhex(h) for h in psql(
        "SELECT encode(sha256('\\x00'::bytea || ledger_leaf(position, stream_id, version, event_id, event_type, data::text,"
        " metadata::text, recorded_at)), 'hex') FROM ledger_events ORDER BY position").split()]
    final = roots_at(leaves, [n for n in observed if 0 < n <= len(leaves)])
    forks = sum(1 for n, root in observed.items() if n > 0 and final.get(n) != root)
    key = request(port, "GET", "/v1/log/key", token)[1].decode().strip()
    note = os.path.join(work, "checkpoint.note")
    with open(note, "wb") as f:
        f.write(request(port, "GET", "/tlog/checkpoint")[1])
    verify = subprocess.run([args.ledger, "log", "verify", "--database-url", DB, "--checkpoint", note, "--key", key],
                            capture_output=True, text=True)
    metrics = request(port, "GET", "/metrics")[1].decode()
    refusals = sum(float(l.split()[-1]) for l in metrics.splitlines() if l.startswith("ledger_checkpoint_fork_refusals_total"))
    median = lambda xs: sorted(xs)[len(xs) // 2] if len(xs) % 2 else sum(sorted(xs)[len(xs) // 2 - 1:len(xs) // 2 + 1]) / 2

    log(f"{args.mode}: {args.kills} leader kills in {elapsed:.0f} s, {args.writers} writers through HAProxy")
    log(f"{args.mode}: acknowledged writes {len(acked)}: lost {lost}, stored twice {twice}, at another position {moved};"
        f" unresolved at the end {s.unresolved}")
    log(f"{args.mode}: minPosition reads {s.reads}, stale {s.stale}")
    log(f"{args.mode}: checkpoints seen {len(observed)}, inconsistent with the final log (forks) {forks};"
        f" fork refusals {refusals:.0f}; final log {len(leaves)} events")
    log(f"{args.mode}: write outage p50 {median(outages):.1f} s, max {max(outages):.1f} s;"
        f" the cluster's own (psql through HAProxy) p50 {median(cluster_outages):.1f} s, max {max(cluster_outages):.1f} s")
    log(f"{args.mode}: ledger log verify: {'OK' if verify.returncode == 0 else 'FAILED: ' + (verify.stdout + verify.stderr)[-500:]}")
    failures = list(s.failures)
    if not signed_final:
        failures.append("no checkpoint of the final log")
    if forks:
        failures.append(f"{forks} checkpoints forked")
    if verify.returncode != 0:
        failures.append("log verify failed")
    if args.mode == "sync":
        for what, n in [("lost", lost), ("stored twice", twice), ("at another position", moved), ("stale reads", s.stale),
                        ("unresolved", s.unresolved)]:
            if n:
                failures.append(f"{n} {what}")
    if failures:
        log(f"{args.mode}: FAILED: {', '.join(failures)}; the server's log: {work}/serve.log")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
