"""The members proven in the browser (proven.js, verified.js): the lookup checked with the log's
verifier key and folded, for a picked mark and for a typed time, marked verified with the
checkpoint's size; refused, naming the link, with another key, with an answer the test tampers
with in the page (a listed event dropped) and with the server's members changed (one dropped).
On shards the same, through the top log and its partition map, the mark naming the shard.
"""

import base64
import hashlib
import os
import time
from contextlib import contextmanager

from selenium.webdriver.common.by import By

from browser import checkpoint_size, error_text, passed, screenshot, show_members, wait
from console_env import BEFORE_REMOVAL, LOG_KEY, SHARDS, TIMEOUT, WITNESS_KEYS

# Refusals the log moving on mends: no revision recorded under the checkpoint yet (the lookup's
# 503 not_checkpointed), or one that does not yet cover the moment (links revision and at).
def pending(link, mark):
    return link in ("revision", "at") or link == "lookup" and "not_checkpointed" in mark


def proof_state(driver):
    box = driver.find_element(By.ID, "proof")
    return box.get_attribute("data-state"), box.get_attribute("data-verified"), box.get_attribute("data-link")


def run_proof(driver, key, what, settle=True):
    """Types the key, presses the button and waits for the mark; with settle, presses again while
    the refusal is one the log moving on mends (pending), within the deadline. (state, link, mark)."""
    field = driver.find_element(By.ID, "proof-key")
    field.clear()
    field.send_keys(key)
    deadline = time.monotonic() + 4 * TIMEOUT
    while True:
        seen = checkpoint_size()
        driver.find_element(By.ID, "proof-run").click()
        wait(driver, lambda d: proof_state(d)[0] in ("ready", "error"), what)
        state, verified, link = proof_state(driver)
        mark = driver.find_element(By.ID, "proof-mark").text
        if not settle or state == "ready" or not pending(link, mark) or time.monotonic() > deadline:
            return state, verified, link, mark
        # Each of those is mended by an append (the revision's record) and a checkpoint over it.
        wait(driver, lambda d: checkpoint_size() > seen, f"{what}: the log to move past {seen} ({link}: {mark})")


def expect_verified(driver, what):
    witnesses = driver.find_element(By.ID, "proof-witnesses")
    witnesses.clear()
    witnesses.send_keys("\n".join(WITNESS_KEYS))
    state, verified, link, mark = run_proof(driver, LOG_KEY, what)
    assert state == "ready" and verified == "true", f"{what}: not verified ({link}): {mark} | {error_text(driver)}"
    size = driver.find_element(By.ID, "proof-size").text
    assert size.isdigit() and int(size) > 0, f"{what}: the checkpoint's size reads {size!r}"
    shard = driver.find_element(By.ID, "proof-shard").text
    assert shard.split(" ")[0].isdigit() if SHARDS else shard == "one database", f"{what}: the proof's shard reads {shard!r}"
    cosigners = driver.find_element(By.ID, "proof-cosigners").text
    checked = cosigners.split(" (")[0].split(", ")
    for key in WITNESS_KEYS:
        name = key.split("+")[0]
        assert name in checked, f"{what}: the witness {name} is not among the cosigners checked: {cosigners!r}"
    return mark, int(size), int(driver.find_element(By.ID, "proof-through").text)


def other_key():
    """A well-formed verifier key of another Ed25519 key, under the same name."""
    name = LOG_KEY.split("+")[0]
    public = bytes([0x01]) + os.urandom(32)
    key_id = hashlib.sha256(name.encode() + b"\n" + public).digest()[:4]
    return f"{name}+{key_id.hex()}+{base64.b64encode(public).decode()}"


# Wraps fetch so that answers of paths starting with `prefix` are changed by `kind`: "event" drops
# a lookup's last event and position, "bound" its firstAfter, "split" makes it a first page of one
# event (its next page is the server's), "split-drop" the same with the next page's last event
# dropped; "member" drops a members page's last member, "state"
# changes a state, "twice" lists an identity twice (no code from a string: the page's policy
# forbids eval). UNTAMPER restores the browser's own fetch.
TAMPER = """
const [prefix, kind] = arguments;
window.__fetch = window.__fetch || window.fetch;
window.fetch = async (input, init) => {
  const res = await window.__fetch(input, init);
  const asked = new URL(String(input), location.href);
  if (!asked.pathname.startsWith(prefix)) return res;
  const body = await res.json();
  // A refusal (503 not_checkpointed while the index catches up) passes as it came.
  if (!res.ok) return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  if (kind === 'event') { body.events.pop(); body.positions.pop(); }
  if (kind === 'bound') delete body.firstAfter;
  // A first page of one event: the rest is the server's own next page, asked after it.
  if ((kind === 'split' || kind === 'split-drop') && !asked.searchParams.has('after')) {
    body.events = body.events.slice(0, 1); body.positions = body.positions.slice(0, 1); body.next = body.positions[0];
  } else if (kind === 'split-drop') {
    body.events.pop(); body.positions.pop();   // the server's next page, its last event dropped
  }
  if (kind === 'member' && body.members) body.members.pop();
  if (kind === 'state' && body.members) body.members[0].state = body.members[0].state === 'granted' ? 'invited' : 'granted';
  if (kind === 'twice' && body.members) body.members.push(body.members[0]);
  return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
};
"""
UNTAMPER = "if (window.__fetch) { window.fetch = window.__fetch; delete window.__fetch; }"


@contextmanager
def tampered(driver, prefix, kind):
    """The page's fetch changed by TAMPER(prefix, kind) within the block, its own again after."""
    driver.execute_script(TAMPER, prefix, kind)
    try:
        yield
    finally:
        driver.execute_script(UNTAMPER)


def refused(driver, key, what, link):
    state, verified, got, mark = run_proof(driver, key, what, settle=False)
    assert state == "error" and verified == "false" and got == link, \
        f"{what}: expected a refusal of link {link!r}, the console shows {state}/{verified}/{got!r}: {mark}"
    return mark


def members_refused(driver, kind, what):
    """The members answer tampered with (`kind`, TAMPER's) and shown again: the proof refuses it."""
    with tampered(driver, "/v1/collaborations/", kind):
        show_members(driver, BEFORE_REMOVAL, f"the members as of {BEFORE_REMOVAL}, {what}")
        return refused(driver, LOG_KEY, f"the proof against members with {what}", "members")


def check_proof(driver):
    """The picked mark's members (check_keyboard_pick left one picked), then BEFORE_REMOVAL's."""
    position = int(driver.find_element(By.CSS_SELECTOR, "#timeline-svg .mark.selected").get_attribute("data-position"))
    picked, size, through = expect_verified(driver, "the proof of the picked mark's members")
    assert through == position, f"the picked mark is at position {position}, the proof folded through {through}"
    passed(f"9 the picked mark's members verified in the browser (checkpoint of {size}, through {through}): {picked}")
    show_members(driver, None, "the members now")
    mark, size, through = expect_verified(driver, "the proof of the members now")
    passed(f"9a the members now verified (checkpoint of {size}, through position {through}): {mark}")
    show_members(driver, BEFORE_REMOVAL, f"the members as of {BEFORE_REMOVAL}")
    mark, size, through = expect_verified(driver, f"the proof of the members as of {BEFORE_REMOVAL}")
    driver.execute_script("document.getElementById('proof').scrollIntoView({block: 'center'});")
    screenshot(driver, "proof-verified.png")
    passed(f"9b the members as of {BEFORE_REMOVAL} verified (checkpoint of {size}, through position {through})")
    mark = refused(driver, other_key(), "the proof with another key", "top checkpoint" if SHARDS else "checkpoint")
    passed(f"9c another key is refused: {mark}")
    for kind, what, link in (("event", "an event dropped", "listing"), ("bound", "no bound in time", "at"),
                             ("split-drop", "a next page that lost an event", "listing")):
        with tampered(driver, "/v1/audit/lookup", kind):
            mark = refused(driver, LOG_KEY, f"the proof of an answer with {what}", link)
        passed(f"9d an answer with {what} is refused: {mark}")
    # Resource timings hold at most 250 entries: emptied, so the next page's request is among them.
    driver.execute_script("performance.clearResourceTimings();")
    with tampered(driver, "/v1/audit/lookup", "split"):
        expect_verified(driver, "the proof of an answer in two pages, merged")
        asked = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/v1/audit/lookup?'));")
        assert any("after=" in n and "size=" in n for n in asked), f"no next page was asked: {asked}"
    passed("9d a lookup answered in pages (a first page of one event, the server's next page after it) merges and verifies")
    for kind, what in (("member", "one dropped"), ("state", "a state changed"), ("twice", "an identity listed twice")):
        mark = members_refused(driver, kind, what)
        passed(f"9e the server's members with {what} differ from the proof: {mark}")
    screenshot(driver, "proof-refused.png")
    show_members(driver, BEFORE_REMOVAL, f"the members as of {BEFORE_REMOVAL}, untampered")
    expect_verified(driver, "the proof once the page's fetch is its own again")
