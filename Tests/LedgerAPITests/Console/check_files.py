"""The console's files: its icon and every module the page loaded, served with their types and the
security headers; nothing else under /console/ (or outside it) is served.
"""

from selenium.webdriver.common.by import By

from browser import fetch, passed
from console_env import CONSOLE_URL, LEDGER_URL

# The policy without an identity provider (a pasted token): this ledger alone, no <base>, forms
# sent to the ledger only, never framed.
POLICY = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"


def check_files(driver):
    """The page's icon and every module it loaded: served with their types and the policy; other
    names under /console/ are 404s."""
    icon = driver.find_element(By.CSS_SELECTOR, 'link[rel="icon"]')
    assert icon.get_attribute("href") == CONSOLE_URL + "/favicon.svg" and icon.get_attribute("type") == "image/svg+xml", \
        f"the page's icon link is {icon.get_attribute('outerHTML')}"
    for path in ("/console/favicon.svg", "/favicon.ico"):
        status, headers, body = fetch(path)
        assert status == 200 and headers.get("Content-Type", "").startswith("image/svg+xml") and "<svg" in body, \
            f"GET {path}: {status} {headers.get('Content-Type')} {body[:120]!r}"
    scripts = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.endsWith('.js'));")
    modules = sorted({s[len(LEDGER_URL):] for s in scripts if s.startswith(CONSOLE_URL + "/")})
    assert "/console/console.js" in modules and len(modules) > 3, f"the page loaded these modules: {modules}"
    for path in modules:
        status, headers, body = fetch(path)
        assert status == 200 and headers.get("Content-Type", "").startswith("text/javascript"), \
            f"GET {path}: {status} {headers.get('Content-Type')}"
        assert headers.get("Content-Security-Policy") == POLICY and headers.get("X-Content-Type-Options") == "nosniff", \
            f"GET {path} lacks the console's security headers: {dict(headers)}"
    # Only the folder's files by name: the page only at /console, nothing else, nothing outside.
    for path in ("/console/console.html", "/console/no-such-module.js", "/console/.hidden"):
        status, _, _ = fetch(path)
        assert status == 404, f"GET {path} answered {status}, not 404"
    for path in ("/console/..%2F..%2FPackage.swift", "/console/..%2Fopenapi.yaml", "/console/%2E%2E"):
        status, _, body = fetch(path)
        assert status in (400, 404) and "openapi:" not in body and "PackageDescription" not in body, \
            f"GET {path} answered {status}: {body[:120]!r}"
    passed(f"the icon is served at /console/favicon.svg and /favicon.ico; {len(modules)} modules as text/javascript: "
           + ", ".join(p.rsplit("/", 1)[1] for p in modules))
