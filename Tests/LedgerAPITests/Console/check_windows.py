"""Time-bound access in the console (step 5b): once the ledger has expired the identity that
window_setup.py granted for a few seconds, its collaboration's page draws the window as a bar
ending at an expiry mark, the members read it as expired with its end, the history tells the
expiry as a sentence, and the access audit records the change `expired`; at laptop and phone width.
"""

import re

from selenium.webdriver.common.by import By

from browser import expect_ready, navigate, passed, rows, screenshot, wait
from window_setup import same_moment


def attr(element, name):
    return element.get_attribute(name) or ""


def check_window_timeline(driver, window, event):
    """The timeline: one window bar for the identity, granted, ending where its expiry mark is."""
    navigate(driver, "#/collaborations/" + window.collaboration_id, "collaboration")
    expect_ready(driver, "timeline", "the timeline of the collaboration with a window")
    selector = f'[data-root-hash="{window.root_hash}"]'
    bars = rows(driver, "#timeline-svg rect.window-bar" + selector)
    assert len(bars) == 1, f"the timeline has {len(bars)} window bars for the identity, expected 1"
    bar = bars[0]
    assert attr(bar, "data-end-reason") == "expired" and attr(bar, "data-granted") == "true", \
        f"the window bar is not a granted, expired window: {bar.get_attribute('outerHTML')[:400]}"
    assert attr(bar, "data-account") == window.account, f"the window bar names {attr(bar, 'data-account')!r}"
    assert same_moment(attr(bar, "data-not-after"), window.not_after) and same_moment(attr(bar, "data-end"), window.not_after), \
        f"the window bar ends at {attr(bar, 'data-end')!r} (notAfter {attr(bar, 'data-not-after')!r}), not at {window.not_after}"
    marks = rows(driver, "#timeline-svg rect.expiry-mark" + selector)
    assert len(marks) == 1, f"the timeline has {len(marks)} expiry marks for the identity, expected 1"
    mark = marks[0]
    assert attr(mark, "data-position") == str(event["position"]) and same_moment(attr(mark, "data-due-at"), window.not_after), \
        f"the expiry mark is not the AccessExpired at position {event['position']}: {mark.get_attribute('outerHTML')[:400]}"
    # The bar ends where the mark is (both drawn at dueAt), and the event has its own mark in its lane.
    end = float(attr(bar, "x")) + float(attr(bar, "width"))
    middle = float(attr(mark, "x")) + float(attr(mark, "width")) / 2
    assert abs(end - middle) < 1.5, f"the window bar ends at x={end:.1f}, its expiry mark is at x={middle:.1f}"
    lane = rows(driver, f'#timeline-svg .mark-AccessExpired[data-position="{event["position"]}"]')
    assert len(lane) == 1 and attr(lane[0], "tabindex") == "0", "the AccessExpired has no keyboard-focusable mark in its lane"
    assert "Access window of identity" in (bar.get_attribute("aria-label") or ""), "the window bar has no aria-label"
    passed(f"5b the timeline draws the window of {window.root_hash[:5]}… as a bar ending at its expiry mark "
           f"(due {attr(mark, 'data-due-at')}, recorded {attr(mark, 'data-time')})")


def check_window_members_history(driver, window, event):
    """The overview counts the expired member; the members and the history say it in words."""
    expect_ready(driver, "overview", "the overview of the collaboration with a window")
    counts = driver.find_element(By.ID, "collab-counts").text
    assert "1 expired" in counts, f"the overview's member counts read {counts!r}, without '1 expired'"
    expect_ready(driver, "members", "the members of the collaboration with a window")
    members = [r for r in rows(driver, "#members-table tr.member-row") if attr(r, "data-account") == window.account]
    assert [attr(r, "data-state") for r in members] == ["expired"], \
        f"the members list {window.account!r} as {[attr(r, 'data-state') for r in members]}, not once as expired"
    cell = members[0].find_element(By.CSS_SELECTOR, "td.member-window")
    shown = cell.find_element(By.TAG_NAME, "time").get_attribute("datetime")
    assert cell.text.startswith("ended ") and same_moment(shown, window.not_after), \
        f"the expired member's window reads {cell.text!r} ({shown}), not 'ended' at {window.not_after}"
    expect_ready(driver, "history", "the history of the collaboration with a window")
    expired = rows(driver, '#history-table tr.history-row[data-type="AccessExpired"]')
    assert len(expired) == 1, f"the history shows {len(expired)} AccessExpired rows, expected 1"
    sentence = expired[0].find_element(By.CSS_SELECTOR, ".event-sentence").text
    pattern = re.escape(window.account) + r"'s access through identity \S+… expired at \d\d:\d\d:\d\d UTC \(due [^)]+\)"
    assert re.fullmatch(pattern, sentence), f"the AccessExpired's history row reads {sentence!r}, not as a sentence"
    added = rows(driver, '#history-table tr.history-row[data-type="IdentityAdded"] .event-sentence')
    assert any("; access until " in a.text for a in added), f"no IdentityAdded row names its window: {[a.text for a in added]}"
    timeline = driver.find_element(By.ID, "timeline")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'});", timeline)
    screenshot(driver, "window.png")
    passed(f"5b {window.account} is expired in the members ({cell.text!r}); the history reads {sentence!r}")
    return sentence


def check_window_phone(driver):
    """The same page at a 390px phone width: the timeline, windows included, scrolls inside."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    try:
        wait(driver, lambda d: d.execute_script("return window.innerWidth") == 390, "the phone-sized viewport")
        driver.execute_script("document.getElementById('timeline').scrollIntoView({block: 'start'});")
        page_width = driver.execute_script("return document.documentElement.scrollWidth")
        screenshot(driver, "window-phone.png")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert page_width <= 390, f"at phone width the page with a window is {page_width}px wide"


def check_window_audit(driver, window, event):
    """The access audit of the collaboration: the grant, then the change `expired` when it was due."""
    navigate(driver, "#/audit", "audit")
    expect_ready(driver, "audit", "the access audit")
    driver.find_element(By.ID, "audit-collaboration").send_keys(window.collaboration_id)
    driver.find_element(By.ID, "audit-apply").click()
    expect_ready(driver, "audit", f"the access audit of {window.collaboration_id}")
    records = rows(driver, "#audit-table tr.audit-row")
    changes = [(attr(r, "data-account"), attr(r, "data-change")) for r in records]
    assert changes.count((window.account, "expired")) == 1, f"the audit of the collaboration with a window shows {changes}"
    expired = next(r for r in records if attr(r, "data-change") == "expired")
    due = [t.get_attribute("datetime") for t in expired.find_elements(By.CSS_SELECTOR, "td time")]
    assert any(same_moment(t, window.not_after) for t in due if t), \
        f"the audit's expiry row does not show its due time {window.not_after}: {expired.text!r}"
    passed(f"5b the access audit of the collaboration shows {changes}, the expiry with its due time")


def check_windows(driver, window, event):
    check_window_timeline(driver, window, event)
    check_window_members_history(driver, window, event)
    check_window_phone(driver)
    check_window_audit(driver, window, event)
