#!/usr/bin/env python3
"""End-to-end test of the auditor's console (GET /console) in headless Chromium.

Run by the Swift test that starts a ledger and creates the data through the API. Needs
Selenium 4 (PyPI) and Debian's chromium + chromium-driver. Exit 0 when every check passes;
otherwise an assertion message, a failure screenshot and the browser's console log, exit 1.
The browser's console must stay clean: no error (a script error, a policy violation, a file
that failed to load, a favicon 404) except the API refusals the checks provoke on purpose.

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
  LOG_KEY               the log's verifier key (the proof is checked against it)
  SCREENSHOT_DIR        PNGs of each page are saved there (created)
  DOWNLOAD_DIR          Chromium's download directory (created)
Optional: CHROMIUM_BINARY (/usr/bin/chromium), CHROMEDRIVER (/usr/bin/chromedriver),
          CONSOLE_TIMEOUT (seconds per wait, 20), WINDOW_TOKEN (the account granted for a few
          seconds; the owner's when absent), WINDOW_SECONDS (how long that window lasts, 8),
          SHARDS (1: a ledger on shards, whose proof goes through the top log and names a shard),
          WITNESS_KEYS (the keys of the witnesses cosigning the checkpoints, a line each).
console_env.py reads them. The checks live beside this script (Python puts its folder on sys.path):
  browser.py             the browser and the helpers every check uses
  check_files.py         the icon and the modules served, nothing else under /console/
  check_collaboration.py search by title, the timeline, the history, the members, phone width
  check_proof.py         the members proven in the browser, and its refusals
  check_audit_health.py  the access audit and its CSV, the log health page (the expiry service too)
  window_setup.py        through the API: a collaboration whose identity is granted for
                         WINDOW_SECONDS (a real device proof, device.py), then the wait for its expiry
  check_windows.py       that window on the timeline, in the members, history and audit
  check_access.py        signing in, the XSS page, the browser's console, another account

The console's DOM contract (console.js and the modules it imports build it; keep them in step):
  /console loads /console/console.js as an ES module, which imports the others from /console/;
      each is served as text/javascript with the Content-Security-Policy. The page links its icon,
      <link rel="icon" href="/console/favicon.svg" type="image/svg+xml">; /favicon.ico is the same SVG.
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
      picked mark's data-time); tr.member-row[data-account][data-state=invited|granted|removed|expired]
      [data-not-before][data-not-after] > td.member-window ("until <time>", "ended <time>", a start
      only while ahead); #collab-counts "… removed, N expired";
      form#proof-form > input#proof-key, textarea#proof-witnesses, button#proof-run;
      #proof[data-state=idle|loading|ready|error][data-verified=true|false][data-link] > p#proof-mark,
      and once verified #proof-size (the checkpoint's size), #proof-shard ("one database" or the
      shard's index), #proof-cosigners, #proof-through;
      tr.history-row[data-type][data-position] > td.event-what holding p.event-sentence (the event
      as a sentence, e.g. "… started the collaboration …", "bob's device (key 0 of identity +Dnkn…)
      proved access at …") and details.raw-event > summary "raw event" + pre (the event as the
      API returned it, JSON; hidden until the summary is clicked). An expiry reads "bob's access
      through identity +Dnkn… expired at 11:47:15 UTC (due 11:47:15)".
  Access windows (windows.js), in svg#timeline-svg below the lanes: one
      rect.window-bar[data-root-hash][data-start][data-end][data-end-reason=expired|removed|due|open]
      [data-not-before][data-not-after][data-account][data-granted][data-changes] per stay of an
      identity with a window, from its grant (else notBefore or invitation) to its end; one
      rect.expiry-mark[data-root-hash][data-due-at][data-position][data-time][data-account] per
      AccessExpired, at its dueAt (the bar's end).
  Access audit (#/audit): inputs #audit-account #audit-collaboration #audit-from #audit-to,
      button#audit-apply, button#audit-csv (saves access-audit.csv), button#audit-ndjson (saves
      access-audit.ndjson); tr.audit-row[data-account][data-change] > td.audit-account (an expiry's
      reason cell holds its due time).
  Log health (#/health): #health-size (tree size, digits only), #health-root, #health-signed,
      #health-cosigners, #health-signers, #health-head, #health-lag-events, #health-lag-seconds,
      tr.projection-row[data-name], button#health-refresh, pre#health-note; section#expiry
      [data-running=true|false][data-overdue] > #health-expiry-running ("running" | "not running"),
      #health-expiry-next (a <time> or "none"), #health-expiry-overdue (a count).
  Erased values: span.erased "(erased)"; accounts "erased:psn-…" are shown as given, followed by it.
"""

import os
import sys
import traceback

from selenium.common.exceptions import TimeoutException

from browser import BROWSER_LOG, error_text, passed, start_browser
from check_access import check_browser_console, check_other_account, check_xss_page, open_sign_in, sign_in_auditor
from check_audit_health import check_audit, check_health
from check_collaboration import (check_history, check_keyboard_pick, check_members_as_of, check_phone_width,
                                 check_timeline, search_by_title)
from check_files import check_files
from check_proof import check_proof
from check_windows import check_windows
from console_env import SCREENSHOT_DIR
from window_setup import setup_window, wait_for_expiry


def run(driver):
    # 0. Through the API: an identity granted for WINDOW_SECONDS; it runs out while steps 1-5 go on.
    window = setup_window()
    passed(f"0 identity {window.root_hash[:5]}… granted to {window.account} until {window.not_after} "
           f"in collaboration {window.collaboration_id}")
    # 1. Sign in with the auditor's token through the form (the page's files checked first).
    open_sign_in(driver)
    check_files(driver)
    sign_in_auditor(driver)
    search_by_title(driver)
    # 2. The timeline's marks; 2b the history as sentences.
    grants = check_timeline(driver)
    check_history(driver)
    # 3. Members as of BEFORE_REMOVAL, then now; 3b a mark picked with Enter; the page at phone width.
    check_members_as_of(driver)
    check_keyboard_pick(driver, grants)
    # 3c. Those members proven in the browser with the log's key, and the proof's refusals.
    check_proof(driver)
    check_phone_width(driver)
    # 4. Access audit filtered by AUDIT_ACCOUNT, and its CSV.
    check_audit(driver)
    # 5. Log health: the size shown lies between two reads of the published checkpoint; the expiry service.
    check_health(driver)
    # 5b. Once the ledger has expired the window (polled, with a deadline): timeline, members, history, audit.
    member, event = wait_for_expiry(window)
    passed(f"5b the ledger expired the window: the members read {member['state']}, AccessExpired at position "
           f"{event['position']} recorded {event['time']} (due {event['data']['dueAt']})")
    check_windows(driver, window, event)
    # 6. The XSS collaboration's page; 6b the browser's console clean so far.
    check_xss_page(driver)
    check_browser_console(driver)
    # 7. Sign out; an unrelated account sees neither the collaboration nor its members.
    check_other_account(driver)
    # 8. Screenshots.
    check_screenshots()


def check_screenshots():
    """Every page's screenshot saved, none empty."""
    expected = ["sign-in.png", "collaborations.png", "collaboration.png", "history.png", "collaboration-phone.png", "audit.png",
                "health.png", "window.png", "window-phone.png"]
    missing = [n for n in expected if not os.path.getsize(os.path.join(SCREENSHOT_DIR, n))]
    assert not missing, f"empty screenshots: {missing}"
    passed(f"8 {len(expected) + 1} screenshots saved in {SCREENSHOT_DIR}: {', '.join(expected)}, no-access.png")


def main():
    driver = start_browser()
    try:
        run(driver)
    except (AssertionError, TimeoutException) as e:
        message = e.msg if isinstance(e, TimeoutException) else str(e)
        print(f"FAIL: {message}", file=sys.stderr)
        traceback.print_exc(limit=4)   # main, run, the check, the helper it called
        try:
            print("page: " + driver.current_url + "; shown errors: " + error_text(driver), file=sys.stderr)
            driver.save_screenshot(os.path.join(SCREENSHOT_DIR, "failure.png"))
            for entry in BROWSER_LOG + driver.get_log("browser"):
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
