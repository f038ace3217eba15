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
  PROVIDER_DIR        the provider's folder (scripts/oidc-provider start --dir): step 7 gets reader's
                      access token from it then (one got at the start would have expired), and the
                      ledger's own refusal of it is the sentence the page must show
  AUDITOR_PASSWORD    the provider's user `auditor` (role auditor)
  READER_PASSWORD     the provider's user `reader` (no role)
  COLLABORATION_ID    a collaboration the auditor's list must show
  SCREENSHOT_DIR      PNGs are saved there (created)
Optional: CHROMIUM_BINARY, CHROMEDRIVER, CONSOLE_TIMEOUT (seconds per wait, 20), TOKEN_LIFETIME
(the provider's access token lifetime in seconds, 40, under 75: the expiry steps wait it out, and
step 5 renews twice within a minute, as such short tokens must).
"""

import base64
import json
import os
import subprocess
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
PROVIDER_DIR = env("PROVIDER_DIR")
PROVIDER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts", "oidc-provider")
COLLABORATION_ID = env("COLLABORATION_ID")
SHOTS = os.path.abspath(env("SCREENSHOT_DIR"))
TIMEOUT = float(env("CONSOLE_TIMEOUT", "20"))
LIFETIME = float(env("TOKEN_LIFETIME", "40"))
TOKEN_KEY = "participant-ledger.console.token"
EXPIRES_KEY = "participant-ledger.console.expires"
ID_TOKEN_KEY = "participant-ledger.console.id-token"
RENEWED_KEY = "participant-ledger.console.renewed"    # the renewed token's expiry, ms (oidc.js)
PENDING_KEY = "participant-ledger.console.signin"
POLICY = f"default-src 'self'; connect-src 'self' {ORIGIN}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
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


def issued(user=None):
    """How many access tokens the provider has issued the console for user, or for anyone (its log's count)."""
    with open(PROVIDER_LOG, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if "Access token generated for client 'ledger-console'" in line
                   and (user is None or f"by user '{user}'" in line))


def access_token(user):
    """A fresh access token of user's from the provider, without a browser (scripts/oidc-provider token)."""
    run = subprocess.run([sys.executable, PROVIDER_SCRIPT, "token", "--dir", PROVIDER_DIR, "--user", user],
                         capture_output=True, text=True, timeout=TIMEOUT)
    lines = run.stdout.strip().splitlines()
    assert run.returncode == 0 and lines and lines[-1].startswith("ey"), f"oidc-provider token --user {user}: {run.stderr}"
    return lines[-1]


def authorization_requests(driver):
    """The query of each request the tab sent the provider's authorization endpoint since the last
    call (Chromium's network events; the call drains them)."""
    sent = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if url.startswith(ISSUER + "/auth?"):
                sent.append(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)))
    return sent


def one_silent_request(driver, hint):
    """The tab went to the provider once, with prompt=none and hint, the ID token it kept, as the
    id_token_hint (without one, glewlwyd refuses prompt=none, and the tab goes round again)."""
    sent = authorization_requests(driver)
    assert len(sent) == 1 and sent[0].get("prompt") == "none" and sent[0].get("id_token_hint") == hint, \
        "the renewal's requests to the provider: " + "; ".join(
            f"prompt={q.get('prompt')}, id_token_hint "
            + ("the kept one" if q.get("id_token_hint") == hint else "another" if q.get("id_token_hint") else "absent")
            for q in sent)


def ledger_refusal(token):
    """The ledger's 401 message for token on the access audit, or None while it accepts it."""
    request = urllib.request.Request(LEDGER_URL + "/v1/audit/access?limit=1", headers={"Authorization": "Bearer " + token})
    try:
        urllib.request.urlopen(request, timeout=TIMEOUT).close()
        return None
    except urllib.error.HTTPError as e:
        assert e.code == 401, f"the ledger answered {e.code} for the auditor's token"
        return json.load(e)["error"]["message"]


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
    assert policy == POLICY, f"the policy: {policy}"
    passed(f"0 the console names {ISSUER}; its policy: {policy}")
    return provider["clientId"]


def refuse_forged_returns(driver, client_id):
    """1. What reaches /console but is not this tab's sign-in coming back is refused, the address
    cleaned, nothing kept, no token asked of the provider: a code while the ledger does not say
    which provider; a forged state; this tab's state with another issuer (RFC 9207); and the ID
    token's checks (oidc.js idTokenProblem), claim by claim."""
    before = issued()
    # The ledger not saying which provider: the code leaves the address all the same.
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/console/provider.json"]})
    try:
        driver.get(CONSOLE_URL + "?code=leaked-code&state=leaked-state#/audit")
        wait(driver, error_shown, "the page's word that it cannot tell how to sign in")
        shown = error_shown(driver)
        assert "did not say how to sign in" in shown and "reload" in shown, f"shown: {shown!r}"
        assert driver.current_url == CONSOLE_URL + "#/audit", f"the address with provider.json unanswered: {driver.current_url}"
    finally:
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    # A state this tab never sent.
    driver.get(CONSOLE_URL + "?code=x&state=forged")
    wait(driver, lambda d: view(d, "signin")(d) and error_shown(d), "the refusal of a forged state")
    shown = error_shown(driver)
    assert "does not belong to a sign-in this tab started" in shown and "nothing was kept" in shown, f"shown: {shown!r}"
    assert "?" not in driver.current_url and TOKEN_KEY not in storage(driver), \
        f"after a forged state: {driver.current_url}, kept: {sorted(storage(driver))}"
    # This tab's own state, answered in another issuer's name: refused before the code goes anywhere.
    driver.find_element(By.ID, "signin-provider").click()
    wait_login_form(driver, ORIGIN, TIMEOUT)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
    state = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(query.get("callback_url", "")).query)).get("state")
    assert state, f"no state in the authorization request: {driver.current_url}"
    driver.get(CONSOLE_URL + "?" + urllib.parse.urlencode({"code": "mixed-up", "state": state, "iss": "http://127.0.0.1:9/other"}))
    wait(driver, lambda d: view(d, "signin")(d) and error_shown(d), "the refusal of another issuer's answer")
    shown = error_shown(driver)
    assert "comes from http://127.0.0.1:9/other, not from " + ISSUER in shown and "nothing was kept" in shown, f"shown: {shown!r}"
    kept = storage(driver)
    assert "?" not in driver.current_url and TOKEN_KEY not in kept and PENDING_KEY not in kept, \
        f"after another issuer's answer: {driver.current_url}, kept: {sorted(kept)}"
    assert issued() == before, f"the provider issued {issued() - before} token(s) for forged answers"
    # The ID token's claims, checked in the page's own module: each case changes one claim of a valid one.
    other = "another-client"
    cases = [
        ({}, None), ({"azp": client_id}, None), ({"aud": [client_id, other], "azp": client_id}, None),
        ({"exp": -10}, None),    # within the 30 s of skew tolerated
        ({"exp": -60}, "expired at"), ({"exp": None}, "no expiry (exp)"),
        ({"aud": [client_id, other]}, "authorized party (azp) is missing"),
        ({"aud": [client_id, other], "azp": other}, f"authorized party (azp) is {other}"), ({"azp": other}, "authorized party"),
        ({"nonce": "another"}, "nonce"), ({"iss": "http://127.0.0.1:9/other"}, "issuer"), ({"aud": other}, "without the console's client id"),
    ]
    answers = driver.execute_async_script("""
        const [cases, issuer, clientId, done] = arguments;
        import('/console/oidc.js').then((m) => {
          const now = Date.now(), exp = Math.floor(now / 1000);
          done(cases.map(([change]) => {
            const id = { iss: issuer, aud: clientId, nonce: 'the-nonce', exp: exp + 60, ...change };
            if (typeof change.exp === 'number') id.exp = exp + change.exp;
            return m.idTokenProblem(id, { issuer, clientId }, 'the-nonce', now);
          }));
        }).catch((e) => done('the module: ' + e.message));""", cases, ISSUER, client_id)
    assert isinstance(answers, list), f"oidc.js: {answers}"
    for (change, expected), answer in zip(cases, answers):
        assert (answer is None) if expected is None else (answer is not None and expected in answer), \
            f"the ID token with {change}: {answer!r}, expected {expected!r}"
    shoot(driver, "forged-refused.png")
    passed(f"1 refused, the address clean, nothing kept, no token issued: a code while provider.json failed, a forged "
           f"state, another issuer's answer; the ID token's checks: {len(cases)} cases")


def sign_in_auditor(driver):
    """2. Only the provider's sign-in offered; its login page; back with the auditor's session."""
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
    passed(f"2 signed in at {ORIGIN} as auditor (PKCE S256, state, nonce, resource {AUDIENCE}); the list shows "
           f"{len(ids)} collaboration(s); the address is {driver.current_url}; kept in sessionStorage only: {sorted(kept)}")
    return token


def expire_and_renew(driver, before, step):
    """3 (and 5). Once the token has expired, the next call goes back through the provider (no
    error). Answers the new token."""
    count = issued("auditor")
    driver.execute_script("window.__sameDocument = true;")
    wait(driver, lambda d: d.execute_script(f"return Date.now() >= Number(sessionStorage.getItem('{EXPIRES_KEY}'))"),
         "the session's expiry", LIFETIME + TIMEOUT)
    hint = storage(driver).get(ID_TOKEN_KEY)
    authorization_requests(driver)
    # Since the last renewal (if any): a token shorter than 75 s is renewed again within a minute.
    since = driver.execute_script(f"const r = Number(sessionStorage.getItem('{RENEWED_KEY}')); "
                                  f"return r ? Date.now() - (r - {LIFETIME * 1000}) : null;")
    driver.execute_script("location.hash = '#/audit';")
    wait(driver, lambda d: d.current_url.startswith(CONSOLE_URL) and view(d, "audit")(d)
         and storage(d).get(TOKEN_KEY) not in (None, before), "the audit view with a renewed token", 2 * TIMEOUT)
    wait(driver, ready("audit"), "the access audit")
    assert driver.find_element(By.ID, "audit").get_attribute("data-state") == "ready", f"the audit: {error_shown(driver)}"
    assert driver.execute_script("return window.__sameDocument") is None, "the page never left for the provider"
    assert issued("auditor") == count + 1, f"the provider issued {issued('auditor') - count} token(s) meanwhile, not 1"
    one_silent_request(driver, hint)
    assert driver.current_url == CONSOLE_URL + "#/audit" and not error_shown(driver), \
        f"after the renewal: {driver.current_url}, shown: {error_shown(driver)}"
    shoot(driver, f"renewed-{step}.png")
    after = "" if since is None else f", {since / 1000:.0f} s after the last renewal"
    passed(f"{step} the expired session went back through the provider{after}, once, prompt=none with the ID token as the "
           "hint; it issued one new token; the audit view loaded, no error shown")
    return since, storage(driver)[TOKEN_KEY]


def refused_expired_renews(driver, expired):
    """4. A token the ledger refuses as expired (here the first one, put back with a far expiry so
    the page does not renew it first): back through the provider with the ID token kept as the hint,
    so its session answers at once (no login page), and no word of disagreeing clocks, the last
    renewed token being past its expiry."""
    driver.execute_script(f"sessionStorage.setItem('{TOKEN_KEY}', arguments[0]); "
                          f"sessionStorage.setItem('{EXPIRES_KEY}', String(Date.now() + 3600000));", expired)
    wait(driver, lambda d: "expired" in (ledger_refusal(expired) or ""), "the ledger's refusal of the first token as expired",
         LIFETIME + 30 + TIMEOUT)
    wait(driver, lambda d: d.execute_script(f"return Date.now() >= Number(sessionStorage.getItem('{RENEWED_KEY}'))"),
         "the renewed token's expiry", LIFETIME + TIMEOUT)
    hint = storage(driver).get(ID_TOKEN_KEY)
    assert hint, f"no ID token kept before the refusal: {sorted(storage(driver))}"
    count = issued("auditor")
    authorization_requests(driver)
    driver.execute_script("window.__sameDocument = true; location.hash = '#/collaborations';")
    wait(driver, lambda d: d.current_url.startswith(CONSOLE_URL) and view(d, "collaborations")(d)
         and storage(d).get(TOKEN_KEY) not in (None, expired), "the list with a token renewed after the ledger's 401", 2 * TIMEOUT)
    wait(driver, ready("collabs"), "the collaborations list")
    assert driver.find_element(By.ID, "collabs").get_attribute("data-state") == "ready", f"the list: {error_shown(driver)}"
    assert driver.execute_script("return window.__sameDocument") is None, "the page never left for the provider"
    assert issued("auditor") == count + 1, f"the provider issued {issued('auditor') - count} token(s) meanwhile, not 1"
    one_silent_request(driver, hint)
    kept = storage(driver)
    assert kept.get(ID_TOKEN_KEY) and kept.get(RENEWED_KEY), f"after the renewal, kept: {sorted(kept)}"
    assert driver.current_url == CONSOLE_URL + "#/collaborations" and not error_shown(driver), \
        f"after the renewal: {driver.current_url}, shown: {error_shown(driver)}"
    passed("4 the ledger's 401 'expired' went back through the provider once, prompt=none with the ID token kept as "
           "the hint: one new token, the list loaded, no error shown")


def sign_out(driver):
    """6. Sign-out ends the session at the provider's end-session endpoint, then back here."""
    driver.find_element(By.ID, "signout").click()
    log_out(driver, ORIGIN, TIMEOUT, lambda name: shoot(driver, name))
    wait(driver, lambda d: d.current_url.startswith(CONSOLE_URL) and view(d, "signin")(d), "the console after signing out")
    assert storage(driver) == {}, f"sessionStorage after signing out: {sorted(storage(driver))}"
    assert "?" not in driver.current_url, f"the address after signing out: {driver.current_url}"
    passed(f"6 signed out at the provider's end-session page and back at {driver.current_url}, nothing kept")


def refused_reader(driver):
    """7. An account without the auditor role: refused in the page with the API's own sentence."""
    try:
        urllib.request.urlopen(urllib.request.Request(LEDGER_URL + "/v1/audit/access?limit=1",
                                                      headers={"Authorization": "Bearer " + access_token("reader")}),
                               timeout=TIMEOUT)
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
    passed(f"7 reader refused in the page: {shown}")


def check_browser_console(driver):
    """8. No error in the browser's console but those the test caused (the reader's 403, step 4's
    401, step 1's blocked provider.json) and the provider's own pages'; localStorage still empty."""
    BROWSER_LOG.extend(driver.get_log("browser"))
    caused = [(LEDGER_URL + "/v1/audit/access", "status of 403"), (LEDGER_URL + "/v1/collaborations", "status of 401"),
              (CONSOLE_URL + "/provider.json", "ERR_BLOCKED_BY_CLIENT")]
    errors = [e["message"] for e in BROWSER_LOG if e.get("level") == "SEVERE" and not e["message"].startswith(ORIGIN)
              and not any(e["message"].startswith(where) and what in e["message"] for where, what in caused)]
    assert not errors, f"the browser's console shows errors: {errors}"
    assert not any("Content Security Policy" in e.get("message", "") for e in BROWSER_LOG), "a policy violation"
    assert driver.execute_script("return localStorage.length") == 0, "the console wrote to localStorage"
    passed(f"8 the browser's console shows no error of the console's and no policy violation ({len(BROWSER_LOG)} entries); "
           "localStorage is empty")


def main():
    os.makedirs(SHOTS, exist_ok=True)
    for name in os.listdir(SHOTS):   # a failure.png left by an earlier run would mislead
        if name.endswith(".png"):
            os.remove(os.path.join(SHOTS, name))
    assert LIFETIME < 75, f"TOKEN_LIFETIME={LIFETIME:g}: step 5 needs a token shorter than 75 s"
    client_id = check_policy()
    driver = start_chromium(env("CHROMIUM_BINARY", "/usr/bin/chromium"), env("CHROMEDRIVER", "/usr/bin/chromedriver"))
    try:
        refuse_forged_returns(driver, client_id)
        first = sign_in_auditor(driver)
        _, renewed = expire_and_renew(driver, first, 3)
        refused_expired_renews(driver, first)
        since, _ = expire_and_renew(driver, storage(driver)[TOKEN_KEY], 5)
        assert since is not None and since < 60000, f"step 5 renewed {since} ms after the last renewal, not within a minute"
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
