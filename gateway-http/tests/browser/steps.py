"""What both browser scenarios share: the browser, waiting for a new page to
load, and axe-core on the page as it stands."""

import os

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

# axe-core's source, when HADO_AXE names it (CI installs it).
AXE = open(os.environ["HADO_AXE"], encoding="utf-8").read() if os.environ.get("HADO_AXE") else None


def chromium(window):
    """Debian's Chromium, headless, in English, with a window of `window` ("420,900")."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={window}", "--lang=en-US"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.implicitly_wait(5)
    # axe-core on a busy machine (CI runs both backends' browsers at once).
    driver.set_script_timeout(90)
    return driver


def load(driver, act):
    """Does `act` (a click, a key) that loads a new page, and waits until it has."""
    page = driver.find_element(By.TAG_NAME, "html")
    act()

    def left(_):
        try:
            page.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            # A busy Chromium may say the old page's node "does not belong to
            # the document" instead of calling it stale: the page has gone.
            if "does not belong to the document" in str(error):
                return True
            raise

    WebDriverWait(driver, 10).until(left)


def violations(driver):
    """axe-core's violations on the page as it stands, of any impact."""
    driver.execute_script(AXE)
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then((result) => done(result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)))"
        ".catch((error) => done([`axe failed: ${error}`]));"
    )
