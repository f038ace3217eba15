#!/usr/bin/env python3
"""The console's sign-in through a real identity provider (issue 69), in headless Chromium: glewlwyd,
set up by scripts/oidc-provider, and a ledger whose LEDGER_OIDC_* settings name it. Run by
ConsoleSignInTests (Swift), which starts both and makes the data. Exit 0 when every check passes;
otherwise the failure, a screenshot (failure.png) and the browser's console log, exit 1.

Inputs (environment):
  LEDGER_URL          the ledger, e.g. http://127.0.0.1:43123 (the provider redirects to its /console)
  PROVIDER_ISSUER     the provider's issuer (LEDGER_OIDC_ISSUER)
  PROVIDER_AUDIENCE   the `aud` its access tokens carry for this ledger (LEDGER_JWT_AUDIENCE)
  PROVIDER_LOG        glewlwyd's log file: each access token it issues is a line there
  AUDITOR_PASSWORD    the provider's user `auditor` (role auditor)
  READER_PASSWORD     the provider's user `reader` (no role)
  READER_TOKEN        an access token of reader's: the ledger's own refusal of it is the sentence
                      the page must show
  COLLABORATION_ID    a collaboration the auditor's list must show
  SCREENSHOT_DIR      PNGs are saved there (created)
Optional: CHROMIUM_BINARY, CHROMEDRIVER, CONSOLE_TIMEOUT (seconds per wait, 20), TOKEN_LIFETIME
(the provider's access token lifetime in seconds, 40: the expiry step waits it out).
"""

import base64
import json
import os
import sys
import traceback
import urllib.error
import urllib.parse
import urllib.request

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from chromium import start_chromium, wait_for
from provider_pages import log_in, log_out, on_provider, wait_login_form


def env(name, default=None):
    value = os.environ.get(name, default)
    if not value:
        sys.exit(f"test_signin.py: the environment variable {name} is required")
    return value


LEDGER_URL = env("LEDGER_URL").rstrip("/")
CONSOLE_URL = LEDGER_URL + "/console"
ISSUER = env("PROVIDER_ISSUER")
ORIGIN = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(ISSUER))
AUDIENCE = env("PROVIDER_AUDIENCE")
PROVIDER_LOG = env("PROVIDER_LOG")
PASSWORDS = {"auditor": env("AUDITOR_PASSWORD"), "reader": env("READER_PASSWORD")}
READER_TOKEN = env("READER_TOKEN")
COLLABORATION_ID = env("COLLABORATION_ID")
SHOTS = os.path.abspath(env("SCREENSHOT_DIR"))
TIMEOUT = float(env("CONSOLE_TIMEOUT", "20"))
LIFETIME = float(env("TOKEN_LIFETIME", "40"))
TOKEN_KEY = "participant-ledger.console.token"
EXPIRES_KEY = "participant-ledger.console.expires"
BROWSER_LOG = []


def passed(message):
    print(f"ok - {message}", flush=True)


def wait(driver, condition, what, timeout=TIMEOUT):
    return wait_for(driver, condition, what, timeout)


def shoot(driver, name):
    path = os.path.join(SHOTS, name)
    assert driver.save_screenshot(path) and os.path.getsize(path) > 0, f"could not save the screenshot {path}"


def storage(driver):
    return driver.execute_script("return Object.fromEntries(Object.entries(sessionStorage));")


def claims(jwt):
    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def issued(user):
    """How many access tokens the provider has issued the console for user (its log's count)."""
    with open(PROVIDER_LOG, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if "Access token generated for client 'ledger-console'" in line and f"by user '{user}'" in line)


def error_shown(driver):
    return " | ".join(p.text for p in driver.find_elements(By.CSS_SELECTOR, "#error p") if p.text.strip())


def view(driver, name):
    return lambda d: d.find_element(By.ID, "main").get_attribute("data-view") == name


def ready(section):
    return lambda d: d.find_element(By.ID, section).get_attribute("data-state") in ("ready", "error")


def check_policy():
    """0. The ledger names the provider; the page's policy lets it fetch from that origin alone."""
    with urllib.request.urlopen(CONSOLE_URL + "/provider.json", timeout=TIMEOUT) as res:
        provider = json.load(res)["provider"]
    assert provider and provider["issuer"] == ISSUER and provider["clientId"], f"provider.json: {provider}"
    with urllib.request.urlopen(CONSOLE_URL, timeout=TIMEOUT) as res:
        policy = res.headers.get("Content-Security-Policy")
    assert policy == f"default-src 'self'; connect-src 'self' {ORIGIN}; frame-ancestors 'none'", f"the policy: {policy}"
    passed(f"0 the console names {ISSUER}; its policy: {policy}")


def sign_in_auditor(driver):
    """1. Only the provider's sign-in offered; its login page; back with the auditor's session."""
    driver.get(CONSOLE_URL + "#/collaborations")
    go = wait(driver, EC.element_to_be_clickable((By.ID, "signin-provider")), "the provider's sign-in button")
    assert not driver.find_elements(By.ID, "token-input"), "a token field is offered beside the provider"
    shoot(driver, "signin.png")
    go.click()
    wait_login_form(driver, ORIGIN, TIMEOUT)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
    sent = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(query.get("callback_url", "")).query))
    assert sent.get("code_challenge_method") == "S256" and len(sent.get("code_challenge", "")) == 43 and sent.get("nonce") \
        and sent.get("state") and sent.get("redirect_uri") == CONSOLE_URL and sent.get("resource") == AUDIENCE, \
        f"the authorization request: {sent}"
    shoot(driver, "provider-login.png")
    log_in(driver, "auditor", PASSWORDS["auditor"], TIMEOUT)
    wait(driver, lambda d: d.current_url.startswith(CONSOLE_URL) and view(d, "collaborations")(d), "the console's list after signing in")
    wait(driver, ready("collabs"), "the collaborations list")
    ids = [r.get_attribute("data-id") for r in driver.find_elements(By.CSS_SELECTOR, "#collab-table tr.collab-row")]
    assert COLLABORATION_ID in ids, f"the auditor's list lacks {COLLABORATION_ID}: {ids}; shown: {error_shown(driver)}"
    kept = storage(driver)
    token = kept.get(TOKEN_KEY, "")
    assert driver.current_url == CONSOLE_URL + "#/collaborations", f"the address after the redirect: {driver.current_url}"
    assert token and token not in driver.current_url, "no token kept, or the token in the address"
    assert driver.execute_script("return localStorage.length") == 0, "the console wrote to localStorage"
    assert not any("refresh" in k for k in kept) and all(k.startswith("participant-ledger.console.") for k in kept), \
        f"sessionStorage holds: {sorted(kept)}"
    at = claims(token)
    assert at["aud"] == AUDIENCE and "auditor" in at["roles"].split(",") and at["iss"] == ISSUER, f"the access token: {at}"
    shoot(driver, "console-signed-in.png")
    passed(f"1 signed in at {ORIGIN} as auditor (PKCE S256, state, nonce, resource {AUDIENCE}); the list shows "
           f"{len(ids)} collaboration(s); the address is {driver.current_url}; kept in sessionStorage only: {sorted(kept)}")
    return token


def expire_and_renew(driver, before):
    """2. Once the token has expired, the next call goes back through the provider (no error)."""
    count = issued("auditor")
    driver.execute_script("window.__sameDocument = true;")
    wait(driver, lambda d: d.execute_script(f"return Date.now() >= Number(sessionStorage.getItem('{EXPIRES_KEY}'))"),
         "the session's expiry", LIFETIME + TIMEOUT)
    driver.execute_script("location.hash = '#/audit';")
    wait(driver, lambda d: d.current_url.startswith(CONSOLE_URL) and view(d, "audit")(d)
         and storage(d).get(TOKEN_KEY) not in (None, before), "the audit view with a renewed token", 2 * TIMEOUT)
    wait(driver, ready("audit"), "the access audit")
    assert driver.find_element(By.ID, "audit").get_attribute("data-state") == "ready", f"the audit: {error_shown(driver)}"
    assert driver.execute_script("return window.__sameDocument") is None, "the page never left for the provider"
    assert issued("auditor") == count + 1, f"the provider issued {issued('auditor') - count} token(s) meanwhile, not 1"
    assert driver.current_url == CONSOLE_URL + "#/audit" and not error_shown(driver), \
        f"after the renewal: {driver.current_url}, shown: {error_shown(driver)}"
    shoot(driver, "renewed.png")
    passed("2 the expired session went back through the provider, which issued one new token; the audit view loaded, "
           "no error shown")


def sign_out(driver):
    """3. Sign-out ends the session at the provider's end-session endpoint, then back here."""
    driver.find_element(By.ID, "signout").click()
    log_out(driver, ORIGIN, TIMEOUT, lambda name: shoot(driver, name))
    wait(driver, lambda d: d.current_url.startswith(CONSOLE_URL) and view(d, "signin")(d), "the console after signing out")
    assert storage(driver) == {}, f"sessionStorage after signing out: {sorted(storage(driver))}"
    assert "?" not in driver.current_url, f"the address after signing out: {driver.current_url}"
    passed(f"3 signed out at the provider's end-session page and back at {driver.current_url}, nothing kept")


def refused_reader(driver):
    """4. An account without the auditor role: refused in the page with the API's own sentence."""
    try:
        urllib.request.urlopen(urllib.request.Request(LEDGER_URL + "/v1/audit/access?limit=1",
                                                      headers={"Authorization": "Bearer " + READER_TOKEN}), timeout=TIMEOUT)
        raise AssertionError("the ledger answered the reader's access audit")
    except urllib.error.HTTPError as e:
        refusal = json.load(e)["error"]
        assert e.code == 403, f"the reader's access audit: {e.code} {refusal}"
    driver.find_element(By.ID, "signin-provider").click()
    wait_login_form(driver, ORIGIN, TIMEOUT)
    log_in(driver, "reader", PASSWORDS["reader"], TIMEOUT)
    wait(driver, lambda d: d.current_url.startswith(CONSOLE_URL) and error_shown(d), "the console's refusal of reader")
    shown = error_shown(driver)
    expected = f"{refusal['message']} ({refusal['code']}, HTTP 403)"
    assert view(driver, "signin")(driver) and expected in shown and "auditor role" in shown, f"shown: {shown!r}; expected {expected!r}"
    assert TOKEN_KEY not in storage(driver), "the refused token was kept"
    assert driver.find_element(By.ID, "signout-provider").is_displayed(), "no way offered to sign out at the provider"
    shoot(driver, "refused.png")
    passed(f"4 reader refused in the page: {shown}")


def check_browser_console(driver):
    """5. No error in the browser's console but the reader's 403 and the provider's own pages'."""
    BROWSER_LOG.extend(driver.get_log("browser"))
    errors = [e["message"] for e in BROWSER_LOG if e.get("level") == "SEVERE" and not e["message"].startswith(ORIGIN)
              and not (e["message"].startswith(LEDGER_URL + "/v1/audit/access") and "status of 403" in e["message"])]
    assert not errors, f"the browser's console shows errors: {errors}"
    assert not any("Content Security Policy" in e.get("message", "") for e in BROWSER_LOG), "a policy violation"
    passed(f"5 the browser's console shows no error of the console's and no policy violation ({len(BROWSER_LOG)} entries)")


def main():
    os.makedirs(SHOTS, exist_ok=True)
    for name in os.listdir(SHOTS):   # a failure.png left by an earlier run would mislead
        if name.endswith(".png"):
            os.remove(os.path.join(SHOTS, name))
    check_policy()
    driver = start_chromium(env("CHROMIUM_BINARY", "/usr/bin/chromium"), env("CHROMEDRIVER", "/usr/bin/chromedriver"))
    try:
        token = sign_in_auditor(driver)
        expire_and_renew(driver, token)
        sign_out(driver)
        refused_reader(driver)
        check_browser_console(driver)
    except (AssertionError, TimeoutException) as e:
        print(f"FAIL: {e.msg if isinstance(e, TimeoutException) else e}", file=sys.stderr)
        traceback.print_exc(limit=3)
        try:
            print(f"page: {driver.current_url}; shown: {error_shown(driver)}", file=sys.stderr)
            driver.save_screenshot(os.path.join(SHOTS, "failure.png"))
            for entry in BROWSER_LOG + driver.get_log("browser"):
                print(f"browser console: {entry.get('level')} {entry.get('message')}", file=sys.stderr)
        except Exception:
            pass
        return 1
    finally:
        driver.quit()
    print(f"sign-in: all checks passed; screenshots in {SHOTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
