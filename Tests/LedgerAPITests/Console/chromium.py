"""Headless Chromium under Selenium, as every browser test here starts it, and the wait they all use.

Needs Selenium 4 (PyPI) and Debian's chromium + chromium-driver (scripts/setup-system.sh).
"""

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait


def start_chromium(binary, chromedriver, download_dir=None):
    """Headless Chromium at 1280×900 with the browser's console log and network events kept
    (get_log("browser"), get_log("performance")); downloads into download_dir when one is given."""
    options = Options()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--window-size=1280,900", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    if download_dir:
        options.add_experimental_option("prefs", {
            "download.default_directory": download_dir,
            "download.prompt_for_download": False,
            "download.directory_upgrade": True,
            "safebrowsing.enabled": True,
        })
    # The browser's console log, and its network events (the sign-in test reads which requests the
    # tab sent the identity provider).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    if download_dir:
        # Headless downloads into download_dir: the prefs suffice on recent versions; the CDP call
        # covers older ones.
        for command in ("Browser.setDownloadBehavior", "Page.setDownloadBehavior"):
            try:
                driver.execute_cdp_cmd(command, {"behavior": "allow", "downloadPath": download_dir})
                break
            except Exception:
                continue
    return driver


def wait_for(driver, condition, what, timeout):
    """condition(driver), polled every 0.2 s until truthy (answered) or timeout seconds pass."""
    return WebDriverWait(driver, timeout, poll_frequency=0.2,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(
        condition, message=f"timed out after {timeout:g}s waiting for {what}")
