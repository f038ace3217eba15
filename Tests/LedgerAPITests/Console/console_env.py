"""The console test's inputs, read once from the environment (test_console.py lists them).

A missing or empty required variable stops the script before the browser starts.
"""

import os
import sys


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
LOG_KEY = env("LOG_KEY")
SHARDS = env("SHARDS", "0") == "1"
# The keys of the witnesses that cosign the log's checkpoints, a line each (optional).
WITNESS_KEYS = [k for k in os.environ.get("WITNESS_KEYS", "").split("\n") if k.strip()]
SCREENSHOT_DIR = os.path.abspath(env("SCREENSHOT_DIR"))
DOWNLOAD_DIR = os.path.abspath(env("DOWNLOAD_DIR"))
CHROMIUM = env("CHROMIUM_BINARY", "/usr/bin/chromium")
CHROMEDRIVER = env("CHROMEDRIVER", "/usr/bin/chromedriver")
TIMEOUT = float(env("CONSOLE_TIMEOUT", "20"))
# The account a device proves access for inside a short window (window_setup.py); without one the
# owner's own account proves it. The window ends WINDOW_SECONDS after it is set up.
WINDOW_TOKEN = os.environ.get("WINDOW_TOKEN") or OWNER_TOKEN
WINDOW_SECONDS = float(env("WINDOW_SECONDS", "8"))
CONSOLE_URL = LEDGER_URL + "/console"
