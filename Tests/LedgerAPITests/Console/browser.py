"""The browser and the helpers every check uses: waiting on the console's data-state contract,
navigating its hash routes, screenshots, the API read without a token, and the browser's console log.
"""

import os
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from chromium import start_chromium, wait_for
from console_env import AUDITOR_TOKEN, CHROMEDRIVER, CHROMIUM, DOWNLOAD_DIR, LEDGER_URL, SCREENSHOT_DIR, TIMEOUT


def start_browser():
    os.makedirs(SCREENSHOT_DIR, exist_ok=True)
    os.makedirs(DOWNLOAD_DIR, exist_ok=True)
    return start_chromium(CHROMIUM, CHROMEDRIVER, DOWNLOAD_DIR)


def wait(driver, condition, what, timeout=None):
    return wait_for(driver, condition, what, timeout or TIMEOUT)


def error_text(driver):
    texts = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#error p, .section-error") if e.text.strip()]
    return " | ".join(texts) or "(no error shown)"


def settled(section_id):
    """Condition: the section's data-state is ready or error (answers it)."""
    def check(driver):
        state = driver.find_element(By.ID, section_id).get_attribute("data-state")
        return state if state in ("ready", "error") else False
    return check


def expect_ready(driver, section_id, what):
    state = wait(driver, settled(section_id), what)
    assert state == "ready", f"{what}: the console shows an error instead: {error_text(driver)}"


def navigate(driver, hash_route, view):
    """Changes the hash route and waits until the old view is gone and the new one is drawn."""
    old = driver.find_element(By.CSS_SELECTOR, "#main > *")
    driver.execute_script("location.hash = arguments[0];", hash_route)
    wait(driver, EC.staleness_of(old), f"the console to leave its view for {hash_route}")
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, f'#main[data-view="{view}"]')), f"the {view} view")


def screenshot(driver, name):
    path = os.path.join(SCREENSHOT_DIR, name)
    assert driver.save_screenshot(path), f"could not save the screenshot {path}"


def sign_in(driver, token, who):
    field = wait(driver, EC.element_to_be_clickable((By.ID, "token-input")), "the sign-in form")
    field.clear()
    field.send_keys(token)
    driver.find_element(By.ID, "signin-submit").click()
    wait(driver, lambda d: d.find_element(By.ID, "main").get_attribute("data-view") != "signin" or
         (d.find_element(By.CSS_SELECTOR, "#error p") and "error"),
         f"signing in as {who}")
    view = driver.find_element(By.ID, "main").get_attribute("data-view")
    assert view != "signin", f"signing in as {who} failed: {error_text(driver)}"


def rows(driver, selector):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def member_states(driver, account):
    return [r.get_attribute("data-state") for r in rows(driver, "#members-table tr.member-row")
            if r.get_attribute("data-account") == account]


def show_members(driver, moment, what):
    """Types a moment (or presses Now for None) and waits for the members of that moment."""
    if moment is None:
        driver.find_element(By.ID, "asof-now").click()
    else:
        field = driver.find_element(By.ID, "asof-input")
        field.clear()
        field.send_keys(moment)
        driver.find_element(By.ID, "asof-apply").click()
    expected = moment or "now"
    wait(driver, lambda d: settled("members")(d) and d.find_element(By.ID, "members").get_attribute("data-moment") == expected
         or settled("members")(d) == "error", what)
    assert driver.find_element(By.ID, "members").get_attribute("data-state") == "ready", \
        f"{what}: the console shows an error instead: {error_text(driver)}"


def checkpoint_size():
    """The latest checkpoint's tree size: /tlog/checkpoint, or /v1/log/checkpoint where that 404s."""
    def read(url, headers):
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT) as res:
            return res.read().decode("utf-8")
    try:
        note = read(LEDGER_URL + "/tlog/checkpoint", {})
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise
        note = read(LEDGER_URL + "/v1/log/checkpoint", {"Authorization": "Bearer " + AUDITOR_TOKEN})
    lines = note.split("\n")
    assert len(lines) > 2 and lines[1].isdigit(), f"the checkpoint is not a signed note: {note[:200]!r}"
    return int(lines[1])


def passed(message):
    print(f"ok - {message}", flush=True)


def fetch(path):
    """GET LEDGER_URL + path without a token: (status, headers, body text)."""
    try:
        with urllib.request.urlopen(LEDGER_URL + path, timeout=TIMEOUT) as res:
            return res.status, res.headers, res.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode("utf-8", "replace")


# Every browser console entry read so far (reading the log empties it; a failure prints them all).
BROWSER_LOG = []


def browser_errors(driver, allowed=lambda message: False):
    """The browser's SEVERE console entries since the last call that allowed() does not excuse."""
    entries = driver.get_log("browser")
    BROWSER_LOG.extend(entries)
    return [e.get("message", "") for e in entries if e.get("level") == "SEVERE" and not allowed(e.get("message", ""))]


def api_refusal(message, statuses, prefix="/v1/"):
    """Whether a console entry is the browser's note of an API answer with one of statuses (the
    console handles those: it shows them, or retries a 503 view_behind), for a URL under prefix."""
    return message.startswith(LEDGER_URL + prefix) and "Failed to load resource" in message and \
        any(f"status of {status} " in message for status in statuses)
