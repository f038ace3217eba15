"""Time-bound access made through the API, for the console to show (SPEC "Time-bound access"):
the owner starts a collaboration and adds an identity whose window ends WINDOW_SECONDS from now,
a device of it proves access (a real ECDSA proof, device.py), and later the test waits, polling
with a deadline, until the ledger's expiry service has expired it: the members read `expired`
and the history holds the AccessExpired.

setup_window() runs first, so the window runs out while the other checks go on;
wait_for_expiry() is called when the console is to show it.
"""

import base64
import json
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from device import Device, b64
from console_env import AUDITOR_TOKEN, LEDGER_URL, OWNER_TOKEN, TIMEOUT, WINDOW_SECONDS, WINDOW_TOKEN


def call(method, path, token, body=None, headers=None):
    """An API call with a bearer token: (status, JSON body or None)."""
    data = json.dumps(body).encode("utf-8") if body is not None else None
    request = urllib.request.Request(LEDGER_URL + path, data=data, method=method, headers={
        "Authorization": "Bearer " + token, "Accept": "application/json",
        **({"Content-Type": "application/json"} if data is not None else {}), **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as res:
            text = res.read().decode("utf-8")
            return res.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, {"error": {"code": f"http_{e.code}", "message": text[:300]}}


def expect(status, answer, wanted, what):
    assert status in wanted, f"{what}: HTTP {status} {json.dumps(answer)[:400]}"
    return answer


def rfc3339(moment):
    """An RFC 3339 UTC time to the millisecond, as the API writes them."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_time(text):
    """A datetime from an RFC 3339 text (Z or an offset, any fraction)."""
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))


def same_moment(a, b):
    """Two RFC 3339 texts naming the same millisecond (events keep microseconds, the API milliseconds)."""
    return abs((parse_time(a) - parse_time(b)).total_seconds()) < 0.001


@dataclass
class Window:
    collaboration_id: str
    root_hash: str          # base64, as the API and the console's data-root-hash give it
    account: str            # the account granted through the identity
    not_after: str          # RFC 3339, as sent
    grant_position: int


def setup_window():
    """A collaboration with one identity whose window ends WINDOW_SECONDS from now, granted."""
    status, started = call("POST", "/v1/collaborations", OWNER_TOKEN, {
        "localIdentifier": "window.doc", "title": "Shared for a few seconds", "initiatorHandle": "devin@example.com",
        "initiatorName": "Devin"}, {"Idempotency-Key": str(uuid.uuid4())})
    collaboration = expect(status, started, (200, 201), "starting the collaboration with a window")["collaborationId"]
    device = Device()
    root = b64(device.root_hash)
    # Added with a long window, proved, then given a short one (AccessWindowChanged): a proof on a
    # loaded machine may take longer than WINDOW_SECONDS.
    first_end = rfc3339(datetime.now(timezone.utc) + timedelta(seconds=600))
    status, added = call("POST", f"/v1/collaborations/{collaboration}/participants", OWNER_TOKEN,
                         {"added": [{"rootHash": root, "notAfter": first_end}]})
    added = expect(status, added, (200,), f"adding an identity with notAfter {first_end}")
    assert root in added.get("added", []), f"the identity with a window was not added: {added}"
    # The device proves access: a challenge for the account, signed; granted at once or (202) later.
    status, challenge = call("POST", "/v1/challenges", WINDOW_TOKEN, {"collaborationId": collaboration})
    challenge = expect(status, challenge, (200, 201), "a challenge for the identity with a window")
    body = {"challengeId": challenge["challengeId"], **device.proof(base64.b64decode(challenge["challenge"]))}
    status, answer = call("POST", f"/v1/collaborations/{collaboration}/proofs", WINDOW_TOKEN, body)
    deadline = time.monotonic() + TIMEOUT
    while status == 202 and time.monotonic() < deadline:
        time.sleep(0.2)
        status, answer = call("GET", answer["statusUrl"], WINDOW_TOKEN)
        if status == 200 and answer.get("status") == "pending":
            status = 202
    answer = expect(status, answer, (200,), f"the proof inside the window (ends {first_end})")
    assert answer.get("status") == "granted" and answer.get("rootHash") == root, f"the proof was not granted: {answer}"
    # The short window; sent again with a fresh end should the request outlast it (400 invalid_window).
    for _ in range(5):
        not_after = rfc3339(datetime.now(timezone.utc) + timedelta(seconds=WINDOW_SECONDS))
        status, changed = call("POST", f"/v1/collaborations/{collaboration}/participants", OWNER_TOKEN,
                               {"windows": [{"rootHash": root, "notAfter": not_after}]})
        if status != 400:
            break
    changed = expect(status, changed, (200,), f"setting the identity's window to end at {not_after}")
    assert root in changed.get("windowsChanged", []), f"the window was not changed: {changed}"
    return Window(collaboration, root, answer["accountId"], not_after, int(answer["position"]))


def member(window):
    """The identity's row of the members now (the owner reads them), or None."""
    status, page = call("GET", f"/v1/collaborations/{window.collaboration_id}/members?limit=100", OWNER_TOKEN)
    page = expect(status, page, (200,), "the members of the collaboration with a window")
    return next((m for m in page.get("members", []) if m.get("rootHash") == window.root_hash), None)


def expiry_event(window):
    """The identity's AccessExpired in the history (the auditor reads it), or None."""
    status, page = call("GET", f"/v1/collaborations/{window.collaboration_id}/history?limit=1000", AUDITOR_TOKEN)
    page = expect(status, page, (200,), "the history of the collaboration with a window")
    return next((e for e in page.get("events", [])
                 if e.get("type") == "AccessExpired" and (e.get("data") or {}).get("rootHash") == window.root_hash), None)


def wait_for_expiry(window):
    """Polls (no fixed sleep) until the members read the identity as expired and the history holds
    its AccessExpired, at most TIMEOUT seconds past notAfter or past this call, whichever is later
    (the console's other steps may outlast the window on a loaded machine). Answers (member row,
    the event)."""
    deadline = max(parse_time(window.not_after), datetime.now(timezone.utc)) + timedelta(seconds=TIMEOUT)
    row = event = None
    while datetime.now(timezone.utc) < deadline:
        row = member(window)
        if row and row.get("state") == "expired":
            event = expiry_event(window)
            if event:
                break
        time.sleep(0.2)
    assert row and row.get("state") == "expired", \
        f"{TIMEOUT:g}s after notAfter {window.not_after} the members still read the identity as {row and row.get('state')!r}: {row}"
    assert event, f"{TIMEOUT:g}s after notAfter {window.not_after} the members read expired but the history holds no AccessExpired"
    assert same_moment(row.get("notAfter"), window.not_after), f"the member's notAfter is {row.get('notAfter')!r}, sent {window.not_after}"
    data = event.get("data") or {}
    assert same_moment(data.get("dueAt"), window.not_after), f"the AccessExpired's dueAt is {data.get('dueAt')!r}, notAfter {window.not_after}"
    assert data.get("account") == window.account, f"the AccessExpired names {data.get('account')!r}, not {window.account!r}"
    assert (parse_time(event["time"]) - parse_time(window.not_after)).total_seconds() > -0.001, \
        f"AccessExpired recorded at {event['time']}, before its dueAt {window.not_after}"
    return row, event
