"""The disaster drill (scripts/disaster; SPEC "Backups and recovery"): a real `ledger serve`
through HAProxy on the Patroni cluster of scripts/ha-cluster with Barman's backup server, 8
writers and minPosition reads; a base backup, more writes, an erasure, more writes; then every
database node lost at once (kill -9 of each Patroni and PostgreSQL, their data folders and the
ledger's checkpoint file deleted); a single node restored from Barman, and the ledger started on it.

- sync (Barman alone acknowledges synchronously): no acknowledged write lost.
- async (Barman's receiver stalled for 2 s before the loss): lost writes are counted, and each
  must lie past the last published checkpoint.
Both: nothing stored twice, every checkpoint seen before the loss extended by the restored log,
`ledger log verify --checkpoint` against the last one OK, the erased account's values nowhere in
`pg_dump`, and the restore's wall time.

Standard library only; psql, pg_ctl and pg_dump for the restored node.
"""
import argparse, json, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak import DB, NO_ANSWER, READ_DB, Soak, psql, request, roots_at, wait_for  # noqa: E402

HA = os.environ.get("LEDGER_HA_DIR", "/tmp/ledger-ha")
ORIGIN = "disaster.test/ledger"
RESTORED_PORT = 15450
RESTORED_DB = f"postgres://ledger:ha-ledger@127.0.0.1:{RESTORED_PORT}/ledger?sslmode=disable"


def log(*parts):
    print("disaster:", *parts, flush=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_postgres(argv):
    return (["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []) + argv


def pg_bin():
    versions = sorted(os.listdir("/usr/lib/postgresql"), key=lambda v: [int(x) for x in v.split(".")])
    return f"/usr/lib/postgresql/{versions[-1]}/bin"


def serve(ledger, work, url, port, log_name):
    env = dict(os.environ, LEDGER_DATABASE_URL=url, LEDGER_READ_DATABASE_URL=READ_DB if url == DB else url,
               LEDGER_DATA_DIR=work, LEDGER_LOG_ORIGIN=ORIGIN, LEDGER_LOG_LEVEL="warning",
               LEDGER_SIGNING_KEY_FILE=os.path.join(work, "log.key"), LEDGER_WITNESS_POLICY=os.path.join(work, "witnesses.policy"))
    out = open(os.path.join(work, log_name), "w")
    server = subprocess.Popen([ledger, "serve", "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for("ledger serve ready", 120, lambda: request(port, "GET", "/ready", timeout=2)[0] == 200)
    except BaseException:
        server.kill()
        raise
    return server


def witness(ledger, work):
    """The log's signing key, and one witness (`ledger witness serve`) whose cosignature the
    policy requires: it keeps the size of the last checkpoint it cosigned, outside the cluster."""
    def keygen(argv, name):
        out = subprocess.run([ledger] + argv, capture_output=True, text=True, check=True)
        with open(os.path.join(work, name), "w") as f:
            f.write(out.stdout)
        return out.stderr.strip().split(": ", 1)[1]
    log_key = keygen(["log", "keygen", "--origin", ORIGIN], "log.key")
    witness_key = keygen(["witness", "keygen", "--name", "w1.disaster.test/witness"], "witness.key")
    port = free_port()
    with open(os.path.join(work, "witnesses.policy"), "w") as f:
        f.write(f"log {log_key}\nwitness W1 {witness_key} http://127.0.0.1:{port}\nquorum W1\n")
    process = subprocess.Popen([ledger, "witness", "serve", "--port", str(port), "--key", os.path.join(work, "witness.key"),
                                "--log", log_key, "--data-dir", os.path.join(work, "witness")],
                               stdout=open(os.path.join(work, "witness.log"), "w"), stderr=subprocess.STDOUT)
    try:
        wait_for("the witness listening", 60, lambda: request(port, "GET", "/health", timeout=2)[0] == 200)
    except BaseException:
        process.kill()
        raise
    return process


def ledger_env(work):
    return dict(os.environ, LEDGER_DATA_DIR=work, LEDGER_LOG_ORIGIN=ORIGIN, LEDGER_LOG_LEVEL="warning",
                LEDGER_SIGNING_KEY_FILE=os.path.join(work, "log.key"))


def seal_secrets(ledger, work):
    """Barman backs up the database, not the ledger's secrets: they are sealed with age to the
    operator's recipient (`ledger backup --secrets-only`, docs/OPERATIONS.md "Backups of the Patroni cluster") and kept apart
    from the cluster. Returns the folder and the identity that opens it."""
    identity, sealed = os.path.join(work, "operator.agekey"), os.path.join(work, "sealed-secrets")
    subprocess.run(["age-keygen", "-o", identity], check=True, capture_output=True)
    with open(identity) as f:
        recipient = next(l.split(": ", 1)[1].strip() for l in f if l.startswith("# public key: "))
    subprocess.run([ledger, "backup", "--secrets-only", "--to", sealed, "--recipient", recipient], env=ledger_env(work),
                   check=True, capture_output=True, timeout=60)
    return sealed, identity


def open_secrets(ledger, work, sealed, identity):
    """The lost secrets laid again from the sealed folder (never over a file that is there)."""
    out = subprocess.run([ledger, "restore", "--secrets-only", "--from", sealed, "--data-dir", work, "--identity", identity],
                         env=ledger_env(work), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"ledger restore --secrets-only failed: {out.stdout}{out.stderr}"
    for name in ("log.key", "jwt-secret"):
        assert os.path.exists(os.path.join(work, name)), f"the restore did not lay {name}: {out.stdout}"


def token(ledger, work, account, role=None):
    argv = [ledger, "token", "--account", account, "--data-dir", work] + (["--role", role] if role else [])
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


class LastCheckpoint:
    """The largest checkpoint note seen on /tlog/checkpoint (the watcher of Soak keeps only roots)."""

    def __init__(self, port):
        self.port, self.note, self.size, self.stopping = port, None, -1, threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                status, note = request(self.port, "GET", "/tlog/checkpoint", timeout=2)
                size = int(note.split(b"\n")[1]) if status == 200 else -1
                if size > self.size:
                    self.note, self.size = note, size
            except NO_ANSWER + (ValueError, IndexError):
                pass
            time.sleep(0.05)


def lose_everything(server, work):
    """Every database node lost at once, with the ledger in front of them."""
    server.send_signal(signal.SIGKILL)
    server.wait()
    for node in ("node1", "node2", "node3"):
        subprocess.run(["scripts/ha-cluster", "node-kill", node], check=True, timeout=60)
    subprocess.run(["scripts/ha-cluster", "stop"], check=True, stdout=subprocess.DEVNULL, timeout=300)
    for node in ("node1", "node2", "node3"):
        shutil.rmtree(os.path.join(HA, node), ignore_errors=True)
    # The ledger's host too: its checkpoint file and its secrets (the sealed copy survives apart).
    for name in ("published-checkpoint", "log.key", "jwt-secret"):
        os.remove(os.path.join(work, name))


def restore(target, older=False):
    """A single node from Barman: the latest base backup and the archive to its end, the segment
    being written (`.partial`) included; started, and waited for until it accepts writes. older:
    the base backup alone (`--target-immediate`), as a restore of an older backup would be."""
    barman = ["scripts/ha-cluster", "barman"]
    subprocess.run(barman + ["archive-wal", "ledger"], check=True, stdout=subprocess.DEVNULL, timeout=120)
    shutil.rmtree(target, ignore_errors=True)
    options = ["--target-immediate", "--target-action", "promote"] if older else []
    subprocess.run(barman + ["recover", "ledger", "latest", target] + options, check=True, stdout=subprocess.DEVNULL, timeout=600)
    streaming = os.path.join(HA, "barman", "ledger", "streaming")
    for name in os.listdir(streaming) if not older else []:
        if name.endswith(".partial"):
            shutil.copy(os.path.join(streaming, name), os.path.join(target, "pg_wal", name[: -len(".partial")]))
    if os.getuid() == 0:
        subprocess.run(["chown", "-R", "postgres:", target], check=True)
    # The node's own configuration, not the lost cluster's (Patroni's files name its folders).
    options = (f"-c port={RESTORED_PORT} -c listen_addresses=127.0.0.1 -c unix_socket_directories={HA}"
               f" -c hba_file={target}/pg_hba.conf -c ident_file={target}/pg_ident.conf -c synchronous_standby_names=''"
               f" -c cluster_name=restored")
    subprocess.run(as_postgres([f"{pg_bin()}/pg_ctl", "-D", target, "-o", options, "-l", f"{HA}/restored.log", "-w", "-t", "600", "start"]),
                   check=True, stdout=subprocess.DEVNULL, timeout=660)
    wait_for("the restored node out of recovery", 600,
             lambda: psql("SELECT NOT pg_is_in_recovery()", RESTORED_DB).strip() == "t", every=0.2)


def retire_backup(ledger):
    """The restored database remembers how far the lost cluster's Barman had flushed
    (`ledger_backup_positions`) and would hold checkpoints for it until a receiver streams through
    that slot again: the drill runs the restored node without one, so it retires that backup, as
    an operator would (docs/OPERATIONS.md, "Restore")."""
    subprocess.run([ledger, "backup", "--drop-slot", "--slot", "ledger_backup_barman", "--database-url", RESTORED_DB],
                   check=True, capture_output=True, timeout=120)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["sync", "async"], required=True)
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--steady", type=float, default=3.0, help="seconds of writes between the drill's steps")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="ledger-disaster-")
    target = os.path.join(HA, "restored")
    witness_process = witness(args.ledger, work)
    server = None
    try:
        port = free_port()
        server = serve(args.ledger, work, DB, port, "serve.log")
        return drill(args, work, port, server, target)
    finally:
        for process in (server, witness_process):
            if process is not None and process.poll() is None:
                process.kill()
        subprocess.run(as_postgres([f"{pg_bin()}/pg_ctl", "-D", target, "-m", "fast", "-w", "stop"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


def drill(args, work, port, server, target):
    sealed, identity = seal_secrets(args.ledger, work)
    s = Soak(port, token(args.ledger, work, "drill"), args.mode)
    last = LastCheckpoint(port)
    threads = [threading.Thread(target=s.writer, daemon=True) for _ in range(args.writers)]
    threads += [threading.Thread(target=s.watcher, daemon=True), threading.Thread(target=last.run, daemon=True)]
    for t in threads:
        t.start()
    time.sleep(args.steady)
    started = time.monotonic()
    subprocess.run(["scripts/ha-cluster", "barman", "backup", "ledger", "--wait", "--wait-timeout", "120"], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    log(f"{args.mode}: base backup in {time.monotonic() - started:.1f} s, {len(s.acked)} writes acknowledged so far")
    time.sleep(args.steady)

    # An account's personal data, then its erasure.
    subject, secret = f"drill-subject-{uuid.uuid4().hex[:8]}", f"drill-secret-{uuid.uuid4().hex}"
    status, _ = request(port, "POST", "/v1/collaborations", token(args.ledger, work, subject),
                        {"localIdentifier": "erased-doc", "title": secret, "initiatorHandle": "erased@example.com"})
    assert status == 201, f"the subject's start answered {status}"
    status, answer = request(port, "POST", "/v1/privacy/erasures", token(args.ledger, work, "drill-officer", "privacy"),
                             {"account": subject, "reason": "DRILL-38"})
    assert status == 200, f"the erasure answered {status}: {answer[:200]!r}"
    time.sleep(args.steady)

    stalled = []
    if args.mode == "async":
        # Barman's receiver stopped (SIGSTOP) for 2 s while writes go on: it flushes nothing more.
        stalled = [int(p) for p in subprocess.run(["pgrep", "-f", "pg_receivewal.*barman_receive_wal"], capture_output=True, text=True).stdout.split()]
        assert stalled, "no pg_receivewal of Barman's to stall"
        for pid in stalled:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(2)
    lose_everything(server, work)
    for pid in stalled:
        os.kill(pid, signal.SIGCONT)
    s.stopping.set()
    last.stopping.set()
    for t in threads:
        t.join(90)
    with s.lock:
        acked, observed = dict(s.acked), dict(s.checkpoints)
    log(f"{args.mode}: every node lost after {len(acked)} acknowledged writes; the last checkpoint seen covers {last.size}")
    # Barman's receiver ends with the leader; the cron job would restart it, the drill has none.
    subprocess.run(["pkill", "-f", f"barman -c {HA}/barman.conf receive-wal"], capture_output=True)

    started = time.monotonic()
    restore(target)
    restore_time = time.monotonic() - started
    retire_backup(args.ledger)
    open_secrets(args.ledger, work, sealed, identity)
    # The same ledger (its signing key and secrets, opened from their sealed copy), on the restored
    # node, without its checkpoint file.
    port = free_port()
    server = serve(args.ledger, work, RESTORED_DB, port, "serve-restored.log")
    try:
        status, leaves = report(args, work, port, s, acked, observed, last, restore_time, (subject, secret))
    finally:
        stop(server)
    if args.mode == "sync":
        status |= older_backup(args, work, target, leaves)
    return status


def stop(server):
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()


def prometheus(work, ledger_port):
    """A real Prometheus with the shipped alert rules, scraping the ledger every second."""
    folder, port = os.path.join(work, "prometheus"), free_port()
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "prometheus.yml"), "w") as f:
        f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                f"rule_files: [\"{os.path.abspath('deploy/prometheus/alerts.yml')}\"]\n"
                f"scrape_configs: [{{job_name: ledger, static_configs: [{{targets: [\"127.0.0.1:{ledger_port}\"]}}]}}]\n")
    process = subprocess.Popen(["prometheus", f"--config.file={folder}/prometheus.yml", f"--storage.tsdb.path={folder}/data",
                                f"--web.listen-address=127.0.0.1:{port}"], stdout=open(f"{folder}/prometheus.log", "w"), stderr=subprocess.STDOUT)
    return process, port


def firing(port, name):
    status, body = request(port, "GET", "/api/v1/alerts", timeout=2)
    return status == 200 and any(a["labels"]["alertname"] == name and a["state"] == "firing" for a in json.loads(body)["data"]["alerts"])


def older_backup(args, work, target, leaves):
    """The base backup alone restored (everything since it lost) with the checkpoint file gone: the
    witness has cosigned more, so the ledger refuses to publish, names the missing range and counts
    the refusal (LedgerCheckpointForkRefused); what it serves is no contradiction of the true log
    (`leaves`, the full restore's)."""
    subprocess.run(as_postgres([f"{pg_bin()}/pg_ctl", "-D", target, "-m", "fast", "-w", "stop"]), check=True, stdout=subprocess.DEVNULL,
                   timeout=120)
    restore(target, older=True)
    retire_backup(args.ledger)
    os.remove(os.path.join(work, "published-checkpoint"))
    head = int(psql("SELECT position FROM ledger_head", RESTORED_DB))
    port = free_port()
    server = serve(args.ledger, work, RESTORED_DB, port, "serve-older.log")
    monitor, monitor_port = prometheus(work, port)
    try:
        refusals = lambda: sum(float(l.split()[-1]) for l in request(port, "GET", "/metrics")[1].decode().splitlines()
                               if l.startswith("ledger_checkpoint_fork_refusals_total"))
        counted = wait_for("a fork refusal counted", 60, lambda: refusals() or None)
        wait_for("LedgerCheckpointForkRefused firing in Prometheus", 90, lambda: firing(monitor_port, "LedgerCheckpointForkRefused"), every=0.5)
        with open(os.path.join(work, "serve-older.log")) as f:
            named = next((l.strip() for l in f if "are missing" in l), None)
        status, note = request(port, "GET", "/tlog/checkpoint")
        served = None
        if status == 200:
            lines = note.decode().split("\n")
            served = (int(lines[1]), lines[2])
        contradicting = served is not None and (served[0] > len(leaves) or roots_at(leaves, [served[0]]).get(served[0]) != served[1])
    finally:
        monitor.kill()
        stop(server)
    log(f"older backup: LedgerCheckpointForkRefused fired in Prometheus")
    log(f"older backup: restored log {head} events (of {len(leaves)}); fork refusals counted {counted:.0f};"
        f" the refusal names: {named!r}")
    log(f"older backup: /tlog/checkpoint serves {served[0] if served else 'nothing'} ({'CONTRADICTING' if contradicting else 'no contradiction'})")
    if contradicting or not named or not head < len(leaves):
        log("older backup: FAILED")
        return 1
    return 0


def report(args, work, port, s, acked, observed, last, restore_time, erased):
    head = int(psql("SELECT position FROM ledger_head", RESTORED_DB))
    ids = os.path.join(work, "acked.csv")
    with open(ids, "w") as f:
        f.writelines(f"collaboration-{cid},{pos},{key}\n" for cid, (pos, key) in acked.items())
    rows = psql(
        "CREATE TEMP TABLE acked (stream_id text, position int8, key text);\n"
        f"\\copy acked FROM '{ids}' WITH (FORMAT csv)\n"
        "WITH keyed AS (SELECT metadata->>'correlationId' AS key, count(*) AS k FROM ledger_events GROUP BY 1),"
        " c AS (SELECT a.stream_id, min(a.position) AS acked_at, count(e.position) AS n, max(coalesce(keyed.k, 0)) AS k"
        " FROM acked a LEFT JOIN keyed ON keyed.key = a.key"
        " LEFT JOIN ledger_events e ON e.stream_id = a.stream_id AND e.event_type = 'CollaborationStarted' GROUP BY a.stream_id)"
        f" SELECT count(*) FILTER (WHERE n = 0), count(*) FILTER (WHERE n > 1 OR k > 1),"
        f" count(*) FILTER (WHERE n = 0 AND acked_at <= {last.size}) FROM c", RESTORED_DB)
    lost, twice, lost_under_checkpoint = (int(x) for x in rows.strip().split("\n")[-1].split("|"))
    leaves = [bytes.fromhex(h) for h in psql(
        "SELECT encode(sha256('\\x00'::bytea || ledger_leaf(position, stream_id, version, event_id, event_type, data::text,"
        " metadata::text, recorded_at)), 'hex') FROM ledger_events ORDER BY position", RESTORED_DB).split()]
    final = roots_at(leaves, [n for n in observed if 0 < n <= len(leaves)])
    forks = sum(1 for n, root in observed.items() if n > 0 and final.get(n) != root)
    key = request(port, "GET", "/v1/log/key", token(args.ledger, work, "drill"))[1].decode().strip()
    note = os.path.join(work, "last-seen.note")
    with open(note, "wb") as f:
        f.write(last.note or b"")
    verify = subprocess.run([args.ledger, "log", "verify", "--database-url", RESTORED_DB, "--checkpoint", note, "--key", key],
                            capture_output=True, text=True, timeout=300)
    try:
        # Covering it, not equal to it: the index recorder may append a revision record past it.
        signed = wait_for(f"a checkpoint covering the restored head {head}", 60,
                          lambda: int(request(port, "GET", "/tlog/checkpoint")[1].split(b"\n")[1]) >= head)
    except SystemExit as timeout:
        # Why not, in the output: the restored ledger's warnings (a refusal names its floor).
        with open(os.path.join(work, "serve-restored.log"), errors="replace") as f:
            warnings = [line.rstrip() for line in f if " critical " in line or " error " in line or " warning " in line]
        log(f"{args.mode}: {timeout}; the restored ledger's last warnings:" + "".join("\n  " + w for w in warnings[-3:]))
        signed = False
    dump = subprocess.run(as_postgres([f"{pg_bin()}/pg_dump", "-h", "127.0.0.1", "-p", str(RESTORED_PORT), "-U", "postgres", "ledger"]),
                          capture_output=True, text=True, env=dict(os.environ, PGPASSWORD="ha-superuser"), timeout=300)
    erased_in_dump = sum(dump.stdout.count(value) for value in erased)

    log(f"{args.mode}: acknowledged writes {len(acked)}: lost {lost} (under a published checkpoint: {lost_under_checkpoint}),"
        f" stored twice {twice}")
    log(f"{args.mode}: minPosition reads {s.reads}, stale {s.stale}")
    log(f"{args.mode}: checkpoints seen before the loss {len(observed)}, not extended by the restored log {forks}")
    log(f"{args.mode}: ledger log verify --checkpoint (size {last.size}): "
        f"{'OK' if verify.returncode == 0 else 'FAILED: ' + (verify.stdout + verify.stderr)[-400:]}")
    log(f"{args.mode}: the erased account's values in pg_dump: {erased_in_dump}")
    log(f"{args.mode}: restore wall time {restore_time:.1f} s (barman recover, WAL replay to the archive's end,"
        f" {len(leaves)} events); the restored ledger signed its head {head}: {'yes' if signed else 'no'}")
    failures = []
    if forks:
        failures.append(f"{forks} checkpoints not extended")
    if lost_under_checkpoint:
        failures.append(f"{lost_under_checkpoint} lost writes under a published checkpoint")
    if twice:
        failures.append(f"{twice} stored twice")
    if not signed:
        failures.append(f"the restored head {head} not signed")
    if verify.returncode != 0 or last.note is None:
        failures.append("log verify failed")
    if erased_in_dump != 0 or "CREATE TABLE" not in dump.stdout:
        failures.append("the erased values are in pg_dump (or pg_dump failed)")
    if args.mode == "sync" and lost:
        failures.append(f"{lost} acknowledged writes lost")
    if s.stale:
        failures.append(f"{s.stale} stale minPosition reads")
    if failures:
        log(f"{args.mode}: FAILED: {', '.join(failures)}; the server's logs: {work}")
        return 1, leaves
    return 0, leaves


if __name__ == "__main__":
    sys.exit(main())
