"""The offer to set the time zone, on every page while a person's zone is
still the deployment's default, in Debian's headless Chromium:

- anna, with JavaScript, in New York: every page offers America/New_York in
  one press (and Settings preselects it); the press saves it and comes back
  to the page it was made on, and the offer is gone;
- boris, without JavaScript: the page cannot know the browser's zone, so it
  offers to keep the default or to choose in Settings; Keep is one press;
- carla, with JavaScript, in the default zone itself: nothing to offer.

axe-core (HADO_AXE, when set) audits each page with the offer.

Usage: zone.py ANNA_BASE BORIS_BASE CARLA_BASE SCREENSHOT_DIR. Exits
non-zero on the first thing that is not as it should be, saying what.
"""

import os
import sys

os.environ["SE_OFFLINE"] = "true"

from selenium.webdriver.common.by import By

from steps import AXE, chromium, load, violations

ANNA, BORIS, CARLA, SHOTS = sys.argv[1:5]
os.makedirs(SHOTS, exist_ok=True)
shots = 0
audited = 0


def check(condition, what):
    if not condition:
        raise SystemExit(f"zone offer: {what}")


def browser(zone, javascript):
    driver = chromium("420,900")
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": zone})
    if not javascript:
        driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    return driver


def shot(driver, name, javascript=True):
    global shots, audited
    shots += 1
    driver.save_screenshot(os.path.join(SHOTS, f"{shots:02d}-{name}.png"))
    if AXE is not None:
        # axe-core needs scripts; turned on after the page loaded, they leave
        # it as it was built without them.
        driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
        found = violations(driver)
        driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": not javascript})
        check(not found, f"axe-core finds violations on {name}: {found}")
        audited += 1


def offer(driver):
    found = driver.find_elements(By.CSS_SELECTOR, ".zone-offer")
    return found[0] if found and found[0].is_displayed() else None


# anna: JavaScript on, New York.
driver = browser("America/New_York", True)
try:
    driver.get(ANNA + "/")
    shown = offer(driver)
    check(shown is not None, "the inbox makes no offer")
    text = shown.text
    check("Times here are in UTC, this Hado's default time zone." in text, f"the offer says {text!r}")
    check("This device is in America/New_York." in text, f"the offer names the device's zone: {text!r}")
    use = shown.find_element(By.CSS_SELECTOR, "button.use-zone")
    check(use.is_displayed() and use.text == "Use America/New_York", f"the press reads {use.text!r}")
    check(shown.find_element(By.CSS_SELECTOR, "button.keep-zone").text == "Keep UTC", "Keep names the default")
    shot(driver, "offer-inbox")
    driver.get(ANNA + "/settings")
    check(offer(driver) is not None, "Settings makes the offer too")
    preselected = driver.find_element(By.NAME, "tz").get_attribute("value")
    check(preselected == "America/New_York", f"Settings preselects the browser's zone, not {preselected}")
    driver.get(ANNA + "/archive?q=rent")
    check(offer(driver) is not None, "the archive makes the offer too")
    back = driver.find_element(By.CSS_SELECTOR, ".zone-offer input[name=back]").get_attribute("value")
    check(back == "/archive?q=rent", f"the offer comes back to {back!r}")
    shot(driver, "offer-archive")
    load(driver, offer(driver).find_element(By.CSS_SELECTOR, "button.use-zone").click)
    check(driver.current_url == ANNA + "/archive?q=rent", f"back at {driver.current_url}")
    check(offer(driver) is None, "the offer is gone once answered")
    driver.get(ANNA + "/settings")
    saved = driver.find_element(By.NAME, "tz").get_attribute("value")
    check(saved == "America/New_York", f"the zone saved is {saved}")
    check(offer(driver) is None, "no page offers it again")
finally:
    driver.quit()

# boris: JavaScript off.
driver = browser("America/New_York", False)
try:
    driver.get(BORIS + "/")
    shown = offer(driver)
    check(shown is not None, "without JavaScript the inbox still makes the offer")
    check(not shown.find_element(By.CSS_SELECTOR, "button.use-zone").is_displayed(), "without JavaScript no zone is guessed")
    check(shown.find_element(By.LINK_TEXT, "Choose in Settings").get_attribute("href").endswith("/settings"), "a way to Settings")
    shot(driver, "offer-without-javascript", javascript=False)
    load(driver, shown.find_element(By.CSS_SELECTOR, "button.keep-zone").click)
    check(driver.current_url == BORIS + "/", f"back at {driver.current_url}")
    check(offer(driver) is None, "keeping the default answers the offer")
finally:
    driver.quit()

# carla: JavaScript on, in the default zone itself.
driver = browser("UTC", True)
try:
    driver.get(CARLA + "/")
    check(offer(driver) is None, "no offer when the browser is in the default zone")
finally:
    driver.quit()

print(f"zone offer: {shots} screenshots in {SHOTS}, {audited} pages audited by axe-core; one press with and without JavaScript, on every page, all as expected")
