"""Who sees what, and what the page runs: signing in through the form, a title that is a script
shown as text, the browser's console clean, signing out, and an unrelated account refused.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser import BROWSER_LOG, api_refusal, browser_errors, expect_ready, navigate, passed, rows, screenshot, settled, \
    sign_in, wait
from console_env import AUDITOR_TOKEN, COLLABORATION_ID, CONSOLE_URL, OTHER_TOKEN, XSS_COLLABORATION_ID, XSS_TITLE


def open_sign_in(driver):
    """1. The console's sign-in view, the navigation hidden before signing in."""
    driver.get(CONSOLE_URL)
    wait(driver, EC.visibility_of_element_located((By.ID, "signin-form")), "the sign-in view")
    assert not driver.find_element(By.ID, "nav").is_displayed(), "the navigation shows before signing in"
    screenshot(driver, "sign-in.png")


def sign_in_auditor(driver):
    """1. Sign in with the auditor's token through the form; the collaborations list loads."""
    sign_in(driver, AUDITOR_TOKEN, "the auditor")
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, '#main[data-view="collaborations"]')), "the collaborations list")
    expect_ready(driver, "collabs", "the collaborations list")
    assert rows(driver, "#collab-table tr.collab-row"), "the auditor's collaborations list is empty"
    screenshot(driver, "collaborations.png")
    passed("1 signed in as the auditor through the sign-in form; the collaborations list loaded")


def check_xss_page(driver):
    """6. The XSS collaboration's page."""
    navigate(driver, "#/collaborations/" + XSS_COLLABORATION_ID, "collaboration")
    expect_ready(driver, "overview", "the XSS collaboration's overview")
    heading = driver.find_element(By.ID, "collab-title").text
    assert heading == XSS_TITLE, f"the XSS collaboration's title shows as {heading!r}, not as the literal {XSS_TITLE!r}"
    assert XSS_TITLE in driver.find_element(By.TAG_NAME, "body").text, "the page text does not contain the literal XSS title"
    wait(driver, settled("timeline"), "the XSS collaboration's timeline")
    assert driver.execute_script("return window.__xss") is None, "window.__xss is set: the console ran the title as HTML"
    assert not rows(driver, "#main img"), "the title became an <img> element"
    passed("6 the XSS title shows as literal text and window.__xss stays undefined")


def check_browser_console(driver):
    """6b. The browser's console so far: no error at all, but a 503 view_behind the console retried."""
    errors = browser_errors(driver, lambda m: api_refusal(m, (503,)))
    assert not errors, f"the browser's console shows errors: {errors}"
    assert not any("favicon" in (e.get("message") or "") for e in BROWSER_LOG), \
        f"the browser's console mentions the favicon: {[e for e in BROWSER_LOG if 'favicon' in (e.get('message') or '')]}"
    passed(f"6b the browser's console shows no error and no favicon 404 ({len(BROWSER_LOG)} entries read)")


def check_other_account(driver):
    """7. Sign out; an unrelated account sees neither the collaboration nor its members."""
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
    # The only errors now are the API's refusals of this collaboration, which the page shows.
    errors = browser_errors(driver, lambda m: api_refusal(m, (503,)) or
                            api_refusal(m, (403, 404), "/v1/collaborations/" + COLLABORATION_ID))
    assert not errors, f"the browser's console shows errors besides the refusals of {COLLABORATION_ID}: {errors}"
    passed(f"7 the unrelated account's list lacks the collaboration; opening it shows: {shown_error.splitlines()[0]}")
