"""One collaboration's page as the auditor sees it: the collaboration found by its title, the
timeline's marks, the history as sentences, the members as of a time and now, a mark picked with
the keyboard, and the page at phone width.
"""

import json

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import error_text, expect_ready, member_states, navigate, passed, rows, screenshot, settled, show_members, wait
from console_env import (BEFORE_REMOVAL, COLLABORATION_ID, EXPECTED_GRANTS, EXPECTED_REVOCATIONS, REMOVED_ACCOUNT,
                         XSS_COLLABORATION_ID, XSS_TITLE)


def search_by_title(driver):
    """The XSS collaboration found by searching its title (the search is a substring of the title)."""
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


def check_timeline(driver):
    """2. The timeline's marks: as many as the history's grants and revocations, each keyboard
    focusable. Answers the AccessGranted marks."""
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
    return grants


def check_history(driver):
    """2b. History rows read as sentences; each one's raw event opens behind its disclosure."""
    started = rows(driver, '#history-table tr.history-row[data-type="CollaborationStarted"]')
    assert len(started) == 1, f"the history shows {len(started)} CollaborationStarted rows, expected 1"
    row = started[0]
    sentence = row.find_element(By.CSS_SELECTOR, ".event-sentence").text
    assert "started the collaboration" in sentence, f"the start's history row reads {sentence!r}, not as a sentence"
    summary = row.find_element(By.CSS_SELECTOR, "details.raw-event > summary")
    pre = row.find_element(By.CSS_SELECTOR, "details.raw-event pre")
    assert summary.text.strip() == "raw event", f"the disclosure's summary reads {summary.text!r}"
    assert not pre.is_displayed(), "the raw event shows before its disclosure is opened"
    summary.click()
    wait(driver, lambda d: pre.is_displayed(), "the raw event to open")
    raw = json.loads(pre.get_attribute("textContent"))
    assert raw.get("type") == "CollaborationStarted" and str(raw.get("collaborationId")).lower() == COLLABORATION_ID.lower() and \
        str(raw.get("position")) == row.get_attribute("data-position") and isinstance(raw.get("data"), dict), \
        f"the raw event is not the start's JSON: {raw}"
    assert str(raw["data"].get("collaborationId")).lower() == COLLABORATION_ID.lower(), f"the raw event's data: {raw['data']}"
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", row)
    screenshot(driver, "history.png")
    # The grants' proofs (base64 challenges, signatures, keys) are in the raw events, not the sentences.
    grants = rows(driver, '#history-table tr.history-row[data-type="AccessGranted"]')
    assert len(grants) == EXPECTED_GRANTS, f"the history shows {len(grants)} AccessGranted rows, expected {EXPECTED_GRANTS}"
    for grant in grants:
        text = grant.find_element(By.CSS_SELECTOR, ".event-sentence").text
        data = json.loads(grant.find_element(By.CSS_SELECTOR, "details.raw-event pre").get_attribute("textContent"))["data"]
        assert "proved access" in text and data.get("account", "\0") in text, f"a grant's history row reads {text!r}"
        shown = grant.text
        for field in ("challenge", "signature", "publicKey"):
            assert not data.get(field) or data[field] not in shown, f"a grant's row shows its {field} outside the raw event"
    passed(f"2b the history reads as sentences ({sentence!r}; a grant: {text!r}); the raw event opens as the event's JSON")


def check_members_as_of(driver):
    """3. Members as of BEFORE_REMOVAL, then now."""
    show_members(driver, BEFORE_REMOVAL, f"the members as of {BEFORE_REMOVAL}")
    states = member_states(driver, REMOVED_ACCOUNT)
    assert "granted" in states, \
        f"as of {BEFORE_REMOVAL} REMOVED_ACCOUNT {REMOVED_ACCOUNT!r} is not listed as granted (its rows' states: {states})"
    show_members(driver, None, "the members now")
    states = member_states(driver, REMOVED_ACCOUNT)
    assert "granted" not in states, f"now REMOVED_ACCOUNT {REMOVED_ACCOUNT!r} is still listed as granted (states: {states})"
    passed(f"3 {REMOVED_ACCOUNT} is granted as of {BEFORE_REMOVAL} and not granted now ({states or 'not listed'})")


def check_keyboard_pick(driver, grants):
    """The keyboard path: Enter on the first AccessGranted mark picks its moment (grants: the
    marks check_timeline found; nothing to pick without one)."""
    if not grants:
        return
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


def check_phone_width(driver):
    """Phone-sized screenshot of the collaboration page (a 390x844 mobile viewport: a window that
    small may be clamped by the browser, the emulated viewport is not)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    wait(driver, lambda d: d.execute_script("return window.innerWidth") == 390, "the phone-sized viewport")
    page_width = driver.execute_script("return document.documentElement.scrollWidth")
    screenshot(driver, "collaboration-phone.png")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert page_width <= 390, f"at phone width the page is {page_width}px wide: something does not wrap or scroll inside"
    passed("the collaboration page fits a 390px-wide phone (tables and timeline scroll inside)")
