"""Drives the web inbox in Debian's headless Chromium through WebDriver
(Selenium + chromedriver): add an event (the form also on a 320 px
screen), Remember, Done from the keyboard, find it in the archive, revoke a
token through the confirmation dialog, choose a time zone, switch the
language, and dark mode. Saves a
screenshot after each step.

At every step axe-core (the file HADO_AXE names, when set) audits the page
as it stands: any violation, of any impact, fails the run.

Usage: inbox.py BASE_URL SCREENSHOT_DIR. Exits non-zero on the first thing
that is not as it should be, saying what.
"""

import os
import sys

# The browser's own zone, which the settings page should offer.
os.environ["TZ"] = "America/New_York"
os.environ["SE_OFFLINE"] = "true"

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from steps import AXE, chromium, load, violations

BASE, SHOTS = sys.argv[1], sys.argv[2]
os.makedirs(SHOTS, exist_ok=True)
audited = 0


def check(condition, what):
    if not condition:
        raise SystemExit(f"browser: {what}")


driver = chromium("420,900")
step = 0


def audit(name):
    """axe-core on the page as it stands: every violation, whatever its impact."""
    global audited
    if AXE is None:
        return
    found = violations(driver)
    check(not found, f"axe-core finds violations on {name}: {found}")
    audited += 1


def shot(name):
    global step
    step += 1
    driver.save_screenshot(os.path.join(SHOTS, f"{step:02d}-{name}.png"))
    audit(name)


def body():
    return driver.find_element(By.TAG_NAME, "body").text


def keys(text):
    ActionChains(driver).send_keys(text).perform()


def go(element, act=None):
    """Clicks something (or does `act`) that loads a new page, and waits until it has."""
    load(driver, act or element.click)


try:
    driver.get(BASE + "/")
    check("Nothing needs you right now." in body(), "the empty inbox says so")
    shot("empty-inbox")

    # Add an event through the form (date and time inputs are set as a picker would).
    go(driver.find_element(By.LINK_TEXT, "Add"))
    driver.find_element(By.NAME, "title").send_keys("Renew passport")
    driver.find_element(By.NAME, "subtitle").send_keys("Bring two photos")
    driver.execute_script("arguments[0].value = '2026-12-14'", driver.find_element(By.NAME, "due_date"))
    driver.execute_script("arguments[0].value = '09:30'", driver.find_element(By.NAME, "due_time"))
    shot("add-form")
    # On a 320 px screen the form fits without sideways scrolling.
    driver.set_window_size(320, 900)
    overflow = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    shot("add-form-320px")
    check(overflow <= 0, f"the form is {overflow} px wider than a 320 px screen")
    driver.set_window_size(420, 900)
    go(driver.find_element(By.CSS_SELECTOR, "form.event-form button.primary"))
    check(driver.current_url.startswith(BASE + "/#event-"), f"back in the inbox at the card after adding, not {driver.current_url}")
    check("Added: Renew passport." in driver.find_element(By.CSS_SELECTOR, ".feedback").text, "the inbox says what was added")
    driver.refresh()
    check(not driver.find_elements(By.CSS_SELECTOR, ".feedback"), "a reload does not say it again")
    card = driver.find_element(By.CSS_SELECTOR, "article.card")
    details = card.get_attribute("textContent")
    check("Renew passport" in card.text and "Bring two photos" in details, f"the card shows the event: {details}")
    check("in 3 days, Mon 14 Dec 09:30" in card.text, f"the due moment in words: {card.text}")
    shot("inbox-with-event")

    # Remember: still in the inbox, quiet until the next checkpoint.
    go(card.find_element(By.CSS_SELECTOR, "button.remember"))
    card = driver.find_element(By.CSS_SELECTOR, "article.card")
    check("quiet until" in card.get_attribute("textContent"), f"Remember quiets the event: {card.get_attribute('textContent')}")
    shot("remembered")

    # The keyboard: nothing fires while typing in the search field; ? lists
    # the shortcuts; j moves to the event and d presses its Done.
    search = driver.find_element(By.ID, "q")
    search.send_keys("j")
    check(driver.switch_to.active_element == search and search.get_attribute("value") == "j", "a shortcut does not fire while typing")
    search.clear()
    driver.execute_script("document.activeElement.blur()")
    keys("?")
    check(driver.find_element(By.ID, "shortcuts").is_displayed(), "? shows the shortcuts")
    shot("shortcuts")
    listed = driver.find_element(By.ID, "shortcuts").text
    for key in ["j", "d", "r", "z", "o", "e", "x", "n", "/", "?", "Esc"]:
        check(key in listed.split(), f"the help lists {key}: {listed}")
    keys(Keys.ESCAPE)
    check(not driver.find_element(By.ID, "shortcuts").is_displayed(), "Esc closes the help")
    keys("j")
    check(driver.switch_to.active_element.get_attribute("id") == card.get_attribute("id"), "j moves to the first event")
    # Done: it leaves the inbox for the archive, and the inbox says so, with Undo.
    go(None, lambda: keys("d"))
    check(not driver.find_elements(By.CSS_SELECTOR, "article.card"), "done events leave the inbox")
    feedback = driver.find_element(By.CSS_SELECTOR, ".feedback")
    check("Done: Renew passport." in feedback.text and feedback.find_elements(By.TAG_NAME, "button"), f"the inbox says what happened and offers Undo: {feedback.text}")
    shot("done-with-undo")
    # z undoes it, and says so; then Done again.
    go(None, lambda: keys("z"))
    feedback = driver.find_element(By.CSS_SELECTOR, ".feedback")
    check("Back in the inbox: Renew passport." in feedback.text, f"Undo says what it did: {feedback.text}")
    shot("undone")
    keys("j")
    go(None, lambda: keys("d"))
    check(not driver.find_elements(By.CSS_SELECTOR, "article.card"), "done again")
    go(driver.find_element(By.LINK_TEXT, "Archive"))
    archived = driver.find_element(By.CSS_SELECTOR, "article.card")
    check("Renew passport" in archived.text and "Done" in archived.text, f"the archive shows how it closed: {archived.text}")
    shot("archive")

    # Settings. Revoking asks in a dialog when JavaScript runs: Cancel keeps
    # the agent token, OK revokes it (without JavaScript a page asks).
    go(driver.find_element(By.LINK_TEXT, "Settings"))
    go(driver.find_element(By.CSS_SELECTOR, "form[action^='/settings/agent-token'] button"))
    driver.find_element(By.CSS_SELECTOR, "a[href='/settings/agent-token/revoke']").click()
    dialog = driver.find_element(By.ID, "confirm")
    check(dialog.is_displayed() and "Revoke the agent token?" in dialog.text, f"a dialog asks: {dialog.text}")
    shot("revoke-dialog")
    dialog.find_element(By.CSS_SELECTOR, "button.cancel").click()
    check(not dialog.is_displayed(), "Cancel closes the dialog")
    check(driver.find_elements(By.CSS_SELECTOR, "a[href='/settings/agent-token/revoke']"), "Cancel keeps the token")

    def revoke():
        driver.find_element(By.CSS_SELECTOR, "a[href='/settings/agent-token/revoke']").click()
        driver.find_element(By.CSS_SELECTOR, "#confirm button.danger").click()

    go(None, revoke)
    check("No agent token yet." in body(), f"OK revokes it: {body()}")
    shot("revoked-after-dialog")

    # The person chose UTC, so Settings shows it, not the browser's zone
    # (zone.py tests the offer while the zone is the default); a zone typed
    # in is saved, and Russian switches the whole interface.
    zone = driver.find_element(By.NAME, "tz")
    check(zone.get_attribute("value") == "UTC", f"the chosen zone is shown, not {zone.get_attribute('value')}")
    zone.clear()
    zone.send_keys("America/New_York")
    Select(driver.find_element(By.NAME, "locale")).select_by_value("ru")
    shot("settings")
    go(driver.find_element(By.CSS_SELECTOR, "form.settings button.primary"))
    check("Сохранено." in body(), "the settings are saved")
    check(driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ru", "the page is in Russian")
    check(driver.find_element(By.NAME, "tz").get_attribute("value") == "America/New_York", "the zone was saved")
    go(driver.find_element(By.LINK_TEXT, "Архив"))
    check("Архив" in body() and "Сделано" in body(), f"the archive speaks Russian: {body()}")
    go(driver.find_element(By.LINK_TEXT, "Входящие"))
    check("Сейчас ничего не требует внимания." in body(), "the inbox speaks Russian")
    shot("russian-inbox")

    # Dark mode, when the system asks for it.
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    driver.get(BASE + "/archive")
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    check(background == "rgb(22, 22, 26)", f"the page is dark when the system is, not {background}")
    shot("dark-archive")
    print(f"browser: {step} screenshots in {SHOTS}, {audited} pages audited by axe-core; add, remember, shortcuts, done, archive, dialog, zone, language, a 320 px screen and dark mode all as expected")
finally:
    driver.quit()
