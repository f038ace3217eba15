"""glewlwyd's own pages, as an auditor meets them when the console sends them there: the login
form, the "Continue" that confirms the console may have the session, and the end-session page.
Only what the sign-in test clicks; each wait has the test's deadline.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from chromium import wait_for


def button(driver, text):
    """The visible button whose text is text, or False."""
    for b in driver.find_elements(By.TAG_NAME, "button"):
        if b.text.strip() == text and b.is_displayed() and b.is_enabled():
            return b
    return False


def on_provider(driver, origin):
    return driver.current_url.startswith(origin + "/")


def wait_login_form(driver, origin, timeout):
    """The provider's login page with its form drawn (a React page: it draws after loading)."""
    wait_for(driver, lambda d: on_provider(d, origin) and "/login.html" in d.current_url, "the provider's login page", timeout)
    wait_for(driver, EC.visibility_of_element_located((By.ID, "username")), "the provider's login form", timeout)


def log_in(driver, user, password, timeout):
    """Types the user and password into the provider's form, then confirms with Continue."""
    name = driver.find_element(By.ID, "username")
    name.clear()
    name.send_keys(user)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "loginbut").click()
    wait_for(driver, lambda d: button(d, "Continue"), f"the provider's Continue after {user}'s password", timeout).click()


def log_out(driver, origin, timeout, shoot):
    """The provider's end-session page: shoot(name) takes its picture, then Logout."""
    wait_for(driver, lambda d: on_provider(d, origin) and button(d, "Logout"), "the provider's end-session page", timeout)
    shoot("provider-logout.png")
    button(driver, "Logout").click()
