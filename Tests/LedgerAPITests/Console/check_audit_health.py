"""The access audit filtered by an account and saved as CSV (step 4), and the log health page's
checkpoint size against the published checkpoint and its expiry service against the API (step 5).
"""

import os

from selenium.webdriver.common.by import By

from browser import checkpoint_size, expect_ready, navigate, passed, rows, screenshot, settled, wait
from console_env import AUDIT_ACCOUNT, AUDITOR_TOKEN, DOWNLOAD_DIR
from window_setup import call, expect, parse_time


def check_audit(driver):
    """4. Access audit filtered by AUDIT_ACCOUNT, and its CSV."""
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


def check_health(driver):
    """5. Log health: the size shown lies between two reads of the published checkpoint."""
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
    expiry = check_expiry_health(driver)
    screenshot(driver, "health.png")
    passed(f"5 the health page shows checkpoint size {shown_size} (published: {before} before, {after} after); "
           f"the expiry service: {expiry}")


def check_expiry_health(driver):
    """The expiry service as /v1/log/status reports it: running (the test's ledger runs the
    services of `ledger serve`), its next dueAt (a time or none) and the overdue count."""
    expect_ready(driver, "expiry", "the expiry service's state")
    status, answer = call("GET", "/v1/log/status", AUDITOR_TOKEN)
    reported = expect(status, answer, (200,), "the log's status").get("expiry")
    assert isinstance(reported, dict) and reported.get("running") is True, \
        f"/v1/log/status reports the expiry service as {reported!r}, not running"
    section = driver.find_element(By.ID, "expiry")
    running = driver.find_element(By.ID, "health-expiry-running").text.strip()
    assert running == "running" and section.get_attribute("data-running") == "true", \
        f"the health page shows the expiry service as {running!r} (data-running={section.get_attribute('data-running')!r})"
    following = driver.find_element(By.ID, "health-expiry-next")
    times = following.find_elements(By.TAG_NAME, "time")
    if times:
        parse_time(times[0].get_attribute("datetime"))   # a real RFC 3339 time
    else:
        assert following.text.strip() == "none", f"the next window due reads {following.text!r}, neither a time nor 'none'"
    overdue = driver.find_element(By.ID, "health-expiry-overdue").text.strip()
    assert overdue.isdigit(), f"the overdue windows read {overdue!r}, not a count"
    return f"{running}, next due {following.text.strip()}, {overdue} overdue"
