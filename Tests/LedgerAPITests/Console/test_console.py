#!/usr/bin/env python3
"""End-to-end test of the auditor's console (GET /console) in headless Chromium.

Run by the Swift test that starts a ledger and creates the data through the API. Needs
Selenium 4 (PyPI) and Debian's chromium + chromium-driver. Exit 0 when every check passes;
otherwise an assertion message, a failure screenshot and the browser's console log, exit 1.

Inputs (environment):
  LEDGER_URL            e.g. http://127.0.0.1:43123
  OWNER_TOKEN           owner of COLLABORATION_ID and XSS_COLLABORATION_ID (not used by the checks
                        themselves; read so a missing variable is caught early)
  AUDITOR_TOKEN         role auditor
  OTHER_TOKEN           an account that owns nothing and was granted nothing
  COLLABORATION_ID      the collaboration under test
  EXPECTED_GRANTS       number of AccessGranted events in its history
  EXPECTED_REVOCATIONS  number of AccessRevoked events in its history
  REMOVED_ACCOUNT       the account whose identity was removed
  BEFORE_REMOVAL        an RFC 3339 time between that account's grant and the removal
  AUDIT_ACCOUNT         the account to filter the access audit by
  XSS_COLLABORATION_ID  a collaboration whose title is XSS_TITLE
  XSS_TITLE             <script>window.__xss=1</script><img src=x onerror="window.__xss=2">
  SCREENSHOT_DIR        PNGs of each page are saved there (created)
  DOWNLOAD_DIR          Chromium's download directory (created)
Optional: CHROMIUM_BINARY (/usr/bin/chromium), CHROMEDRIVER (/usr/bin/chromedriver),
          CONSOLE_TIMEOUT (seconds per wait, 20).

The console's DOM contract (console.js builds it; keep the two in step):
  <main id="main" data-view="signin|collaborations|collaboration|audit|health">; each view
      replaces main's children, so an element of the old view goes stale on a route change.
  #error (role=alert): one <p> per API error, "<message> (<code>, HTTP <status>)", 403s led by
      "No access: "; #status (aria-live): progress and confirmations.
  Sections carry data-state="loading|ready|error" (and aria-busy): #collabs, #overview, #timeline,
      #members, #history, #audit, #audit-downloads, #checkpoint, #lag, #projections. A failed
      section also shows the message in its .section-error.
  Sign-in: form#signin-form, textarea#token-input, button#signin-submit. Header: nav#nav
      (hidden when signed out) with a#nav-collaborations, a#nav-audit, a#nav-health, button#signout.
  Paged tables (name = collab|members|history|audit): table#<name>-table, button#<name>-next,
      button#<name>-first, #<name>-page, caption#<name>-caption.
  Collaborations (#/collaborations): input#collab-search, button#collab-search-submit,
      tr.collab-row[data-id] > td.collab-title.
  One collaboration (#/collaborations/<id>): #collab-title (the title, or "(erased)"),
      svg#timeline-svg with one .mark.mark-<EventType>[data-position][data-time] per event
      (tabindex=0, role=button, aria-label "<type> at <time>, log position <n>"; Enter/click picks
      that position); input#asof-input (RFC 3339), button#asof-apply, button#asof-now;
      #members[data-moment] = the moment the shown rows are for ("now", the typed time, or the
      picked mark's data-time); tr.member-row[data-account][data-state=invited|granted|removed];
      tr.history-row[data-type].
  Access audit (#/audit): inputs #audit-account #audit-collaboration #audit-from #audit-to,
      button#audit-apply, button#audit-csv (saves access-audit.csv), button#audit-ndjson (saves
      access-audit.ndjson); tr.audit-row[data-account] > td.audit-account.
  Log health (#/health): #health-size (tree size, digits only), #health-root, #health-signed,
      #health-cosigners, #health-signers, #health-head, #health-lag-events, #health-lag-seconds,
      tr.projection-row[data-name], button#health-refresh, pre#health-note.
  Erased values: span.erased "(erased)"; accounts "erased:psn-…" are shown as given, followed by it.
"""

import os
import sys
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None or value == "":
        sys.exit(f"test_console.py: the environment variable {name} is required")
    return value


LEDGER_URL = env("LEDGER_URL").rstrip("/")
OWNER_TOKEN = env("OWNER_TOKEN")
AUDITOR_TOKEN = env("AUDITOR_TOKEN")
OTHER_TOKEN = env("OTHER_TOKEN")
COLLABORATION_ID = env("COLLABORATION_ID")
EXPECTED_GRANTS = int(env("EXPECTED_GRANTS"))
EXPECTED_REVOCATIONS = int(env("EXPECTED_REVOCATIONS"))
REMOVED_ACCOUNT = env("REMOVED_ACCOUNT")
BEFORE_REMOVAL = env("BEFORE_REMOVAL")
AUDIT_ACCOUNT = env("AUDIT_ACCOUNT")
XSS_COLLABORATION_ID = env("XSS_COLLABORATION_ID")
XSS_TITLE = env("XSS_TITLE")
SCREENSHOT_DIR = os.path.abspath(env("SCREENSHOT_DIR"))
DOWNLOAD_DIR = os.path.abspath(env("DOWNLOAD_DIR"))
CHROMIUM = env("CHROMIUM_BINARY", "/usr/bin/chromium")
CHROMEDRIVER = env("CHROMEDRIVER", "/usr/bin/chromedriver")
TIMEOUT = float(env("CONSOLE_TIMEOUT", "20"))
CONSOLE_URL = LEDGER_URL + "/console"


# ------------------------------------------------------------------ browser and helpers

def start_browser():
    os.makedirs(SCREENSHOT_DIR, exist_ok=True)
    os.makedirs(DOWNLOAD_DIR, exist_ok=True)
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--window-size=1280,900", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {
        "download.default_directory": DOWNLOAD_DIR,
        "download.prompt_for_download": False,
        "download.directory_upgrade": True,
        "safebrowsing.enabled": True,
    })
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    # Headless downloads into DOWNLOAD_DIR: the prefs suffice on recent versions; the CDP call
    # covers older ones.
    for command in ("Browser.setDownloadBehavior", "Page.setDownloadBehavior"):
        try:
            driver.execute_cdp_cmd(command, {"behavior": "allow", "downloadPath": DOWNLOAD_DIR})
            break
        except Exception:
            continue
    return driver


def wait(driver, condition, what, timeout=None):
    return WebDriverWait(driver, timeout or TIMEOUT, poll_frequency=0.2,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(
        condition, message=f"timed out after {timeout or TIMEOUT:g}s waiting for {what}")


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


# ------------------------------------------------------------------ the checks

def run(driver):
    # 1. Sign in with the auditor's token through the form.
    driver.get(CONSOLE_URL)
    wait(driver, EC.visibility_of_element_located((By.ID, "signin-form")), "the sign-in view")
    assert not driver.find_element(By.ID, "nav").is_displayed(), "the navigation shows before signing in"
    screenshot(driver, "sign-in.png")
    sign_in(driver, AUDITOR_TOKEN, "the auditor")
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, '#main[data-view="collaborations"]')), "the collaborations list")
    expect_ready(driver, "collabs", "the collaborations list")
    assert rows(driver, "#collab-table tr.collab-row"), "the auditor's collaborations list is empty"
    screenshot(driver, "collaborations.png")
    passed("1 signed in as the auditor through the sign-in form; the collaborations list loaded")

    # The XSS collaboration found by searching its title (the search is a substring of the title).
    search = driver.find_element(By.ID, "collab-search")
    search.send_keys("window.__xss")
    driver.find_element(By.ID, "collab-search-submit").click()
    expect_ready(driver, "collabs", "the search for window.__xss")
    found = [r for r in rows(driver, "#collab-table tr.collab-row") if r.get_attribute("data-id") == XSS_COLLABORATION_ID]
    assert found, "searching the collaborations for 'window.__xss' did not list XSS_COLLABORATION_ID"
    title = found[0].find_element(By.CSS_SELECTOR, "td.collab-title").text
    assert title == XSS_TITLE, f"the list shows the XSS title as {title!r}, not as literal text"
    assert driver.execute_script("return window.__xss") is None, "window.__xss is set: the list ran the title"
    passed("search by title finds the XSS collaboration; its title is literal text in the list")

    # 2. The timeline's marks.
    navigate(driver, "#/collaborations/" + COLLABORATION_ID, "collaboration")
    expect_ready(driver, "timeline", "the timeline")
    grants = rows(driver, "#timeline-svg .mark-AccessGranted")
    revocations = rows(driver, "#timeline-svg .mark-AccessRevoked")
    assert len(grants) == EXPECTED_GRANTS, f"the timeline has {len(grants)} AccessGranted marks, expected {EXPECTED_GRANTS}"
    assert len(revocations) == EXPECTED_REVOCATIONS, \
        f"the timeline has {len(revocations)} AccessRevoked marks, expected {EXPECTED_REVOCATIONS}"
    for mark in grants + revocations:
        assert mark.get_attribute("tabindex") == "0" and mark.get_attribute("role") == "button", \
            "a timeline mark is not keyboard focusable (tabindex=0, role=button)"
        assert mark.get_attribute("aria-label"), "a timeline mark has no aria-label"
    expect_ready(driver, "members", "the members now")
    expect_ready(driver, "history", "the history")
    screenshot(driver, "collaboration.png")
    passed(f"2 the timeline has {EXPECTED_GRANTS} AccessGranted and {EXPECTED_REVOCATIONS} AccessRevoked marks")

    # 3. Members as of BEFORE_REMOVAL, then now.
    show_members(driver, BEFORE_REMOVAL, f"the members as of {BEFORE_REMOVAL}")
    states = member_states(driver, REMOVED_ACCOUNT)
    assert "granted" in states, \
        f"as of {BEFORE_REMOVAL} REMOVED_ACCOUNT {REMOVED_ACCOUNT!r} is not listed as granted (its rows' states: {states})"
    show_members(driver, None, "the members now")
    states = member_states(driver, REMOVED_ACCOUNT)
    assert "granted" not in states, f"now REMOVED_ACCOUNT {REMOVED_ACCOUNT!r} is still listed as granted (states: {states})"
    passed(f"3 {REMOVED_ACCOUNT} is granted as of {BEFORE_REMOVAL} and not granted now ({states or 'not listed'})")

    # The keyboard path: Enter on the first AccessGranted mark picks its moment.
    if grants:
        mark = rows(driver, "#timeline-svg .mark-AccessGranted")[0]
        picked = mark.get_attribute("data-time")
        driver.execute_script("arguments[0].focus();", mark)
        assert driver.switch_to.active_element == mark, "a timeline mark cannot take the keyboard focus"
        ActionChains(driver).send_keys(Keys.ENTER).perform()
        wait(driver, lambda d: settled("members")(d) and d.find_element(By.ID, "members").get_attribute("data-moment") == picked
             or settled("members")(d) == "error", "the members at the picked mark")
        assert driver.find_element(By.ID, "members").get_attribute("data-state") == "ready", \
            f"picking a mark with Enter failed: {error_text(driver)}"
        assert driver.find_element(By.ID, "asof-input").get_attribute("value") == picked, "the picked time is not in the time input"
        passed(f"3b Enter on an AccessGranted mark shows the members at {picked}")

    # Phone-sized screenshot of the collaboration page (a 390x844 mobile viewport: a window that
    # small may be clamped by the browser, the emulated viewport is not).
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    wait(driver, lambda d: d.execute_script("return window.innerWidth") == 390, "the phone-sized viewport")
    page_width = driver.execute_script("return document.documentElement.scrollWidth")
    screenshot(driver, "collaboration-phone.png")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert page_width <= 390, f"at phone width the page is {page_width}px wide: something does not wrap or scroll inside"
    passed("the collaboration page fits a 390px-wide phone (tables and timeline scroll inside)")

    # 4. Access audit filtered by AUDIT_ACCOUNT, and its CSV.
    navigate(driver, "#/audit", "audit")
    expect_ready(driver, "audit", "the access audit")
    driver.find_element(By.ID, "audit-account").send_keys(AUDIT_ACCOUNT)
    driver.find_element(By.ID, "audit-apply").click()
    expect_ready(driver, "audit", f"the access audit filtered by {AUDIT_ACCOUNT}")
    audit_rows = rows(driver, "#audit-table tr.audit-row")
    assert audit_rows, f"the access audit filtered by {AUDIT_ACCOUNT!r} shows no record"
    shown = {r.find_element(By.CSS_SELECTOR, "td.audit-account").text for r in audit_rows}
    assert shown == {AUDIT_ACCOUNT}, f"the audit filtered by {AUDIT_ACCOUNT!r} shows other accounts: {sorted(shown)}"
    screenshot(driver, "audit.png")
    csv_path = os.path.join(DOWNLOAD_DIR, "access-audit.csv")
    for name in os.listdir(DOWNLOAD_DIR):
        if name.startswith("access-audit"):
            os.remove(os.path.join(DOWNLOAD_DIR, name))
    driver.find_element(By.ID, "audit-csv").click()
    expect_ready(driver, "audit-downloads", "the CSV download")
    wait(driver, lambda d: os.path.exists(csv_path) and not any(n.endswith(".crdownload") for n in os.listdir(DOWNLOAD_DIR)),
         f"{csv_path} to be saved")
    with open(csv_path, encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line]
    assert lines and "position" in lines[0] and "accountId" in lines[0], f"the CSV has no header line: {lines[:1]}"
    assert any(AUDIT_ACCOUNT in line for line in lines[1:]), f"no line of the CSV names {AUDIT_ACCOUNT!r} ({len(lines) - 1} records)"
    passed(f"4 the audit filtered by {AUDIT_ACCOUNT} shows only that account ({len(audit_rows)} rows); "
           f"access-audit.csv saved with a header and {len(lines) - 1} records")

    # 5. Log health: the size shown lies between two reads of the published checkpoint.
    before = checkpoint_size()
    navigate(driver, "#/health", "health")
    expect_ready(driver, "checkpoint", "the latest checkpoint")
    shown_size = driver.find_element(By.ID, "health-size").text.strip()
    after = checkpoint_size()
    assert shown_size.isdigit(), f"the health page shows the checkpoint size as {shown_size!r}"
    assert before <= int(shown_size) <= after, \
        f"the health page shows checkpoint size {shown_size}; the published checkpoint was {before} before and {after} after"
    wait(driver, settled("lag"), "the checkpoint lag")
    wait(driver, settled("projections"), "the projections")
    screenshot(driver, "health.png")
    passed(f"5 the health page shows checkpoint size {shown_size} (published: {before} before, {after} after)")

    # 6. The XSS collaboration's page.
    navigate(driver, "#/collaborations/" + XSS_COLLABORATION_ID, "collaboration")
    expect_ready(driver, "overview", "the XSS collaboration's overview")
    heading = driver.find_element(By.ID, "collab-title").text
    assert heading == XSS_TITLE, f"the XSS collaboration's title shows as {heading!r}, not as the literal {XSS_TITLE!r}"
    assert XSS_TITLE in driver.find_element(By.TAG_NAME, "body").text, "the page text does not contain the literal XSS title"
    wait(driver, settled("timeline"), "the XSS collaboration's timeline")
    assert driver.execute_script("return window.__xss") is None, "window.__xss is set: the console ran the title as HTML"
    assert not rows(driver, "#main img"), "the title became an <img> element"
    passed("6 the XSS title shows as literal text and window.__xss stays undefined")

    # 7. Sign out; an unrelated account sees neither the collaboration nor its members.
    driver.find_element(By.ID, "signout").click()
    wait(driver, EC.visibility_of_element_located((By.ID, "signin-form")), "the sign-in view after signing out")
    assert driver.execute_script("return sessionStorage.length") == 0, "signing out left something in sessionStorage"
    sign_in(driver, OTHER_TOKEN, "the unrelated account")
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, '#main[data-view="collaborations"]')), "the collaborations list")
    expect_ready(driver, "collabs", "the unrelated account's collaborations list")
    ids = [r.get_attribute("data-id") for r in rows(driver, "#collab-table tr.collab-row")]
    assert COLLABORATION_ID not in ids, "the unrelated account's list contains COLLABORATION_ID"
    navigate(driver, "#/collaborations/" + COLLABORATION_ID, "collaboration")
    for section in ("overview", "members"):
        wait(driver, settled(section), f"the {section} section for the unrelated account")
    shown_error = driver.find_element(By.ID, "error").text.strip()
    assert shown_error, "opening the collaboration as the unrelated account shows no error"
    assert driver.find_element(By.ID, "overview").get_attribute("data-state") == "error", \
        "the unrelated account sees the collaboration's overview"
    assert driver.find_element(By.ID, "members").get_attribute("data-state") == "error", \
        "the unrelated account's members request did not fail"
    assert not rows(driver, "tr.member-row"), "the unrelated account sees member rows"
    screenshot(driver, "no-access.png")
    passed(f"7 the unrelated account's list lacks the collaboration; opening it shows: {shown_error.splitlines()[0]}")

    # 8. Screenshots.
    expected = ["sign-in.png", "collaborations.png", "collaboration.png", "collaboration-phone.png", "audit.png", "health.png"]
    missing = [n for n in expected if not os.path.getsize(os.path.join(SCREENSHOT_DIR, n))]
    assert not missing, f"empty screenshots: {missing}"
    passed(f"8 screenshots saved in {SCREENSHOT_DIR}: {', '.join(expected)}, no-access.png")


def main():
    driver = start_browser()
    try:
        run(driver)
    except (AssertionError, TimeoutException) as e:
        message = e.msg if isinstance(e, TimeoutException) else str(e)
        print(f"FAIL: {message}", file=sys.stderr)
        traceback.print_exc(limit=3)
        try:
            print("page: " + driver.current_url + "; shown errors: " + error_text(driver), file=sys.stderr)
            driver.save_screenshot(os.path.join(SCREENSHOT_DIR, "failure.png"))
            for entry in driver.get_log("browser"):
                print(f"browser console: {entry.get('level')} {entry.get('message')}", file=sys.stderr)
        except Exception:
            pass
        return 1
    finally:
        driver.quit()
    print("console: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
