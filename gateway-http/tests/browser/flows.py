"""The everyday flows of the web inbox in every way a person may meet them:
at 1280 px and 390 px wide, in English and in Russian, with JavaScript on
and off (eight runs). Each run adds an event, marks it Done and takes that
back with Undo, opens its page, deletes it (a dialog asks with JavaScript,
a page without), finds it in the archive, reopens it from its page, and
opens a page that does not exist. Every page is checked for its language, one <h1>, navigation back
and no sideways scrolling, audited by axe-core (the file HADO_AXE names,
when set) and kept as a screenshot.

Usage: flows.py BASE_URL SCREENSHOT_DIR. Exits non-zero on the first thing
that is not as it should be, saying what.
"""

import os
import sys

os.environ["SE_OFFLINE"] = "true"

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from steps import AXE, chromium, load, violations

BASE, SHOTS = sys.argv[1], sys.argv[2]
os.makedirs(SHOTS, exist_ok=True)
shots = audited = 0


def check(condition, what):
    if not condition:
        raise SystemExit(f"flows: {what}")


def browser(javascript):
    driver = chromium("1280,900")
    # The page's own scripts stop; WebDriver (and axe-core through it) still runs.
    driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": not javascript})
    return driver


def run(driver, javascript, language, width):
    name = f"{width}px-{language}-js-{'on' if javascript else 'off'}"

    def body():
        return driver.find_element(By.TAG_NAME, "body").text

    def page(step, speaks=None):
        """What every page owes its reader, then a screenshot and the audit.
        A page for someone unknown speaks both languages (`speaks`)."""
        global shots, audited
        lang = driver.find_element(By.TAG_NAME, "html").get_attribute("lang")
        check(lang == (speaks or language), f"{name} {step}: the page is in {lang}, not {speaks or language}")
        check(len(driver.find_elements(By.TAG_NAME, "h1")) == 1, f"{name} {step}: not exactly one <h1>")
        check(driver.find_elements(By.CSS_SELECTOR, "nav a[href='/'], .back a[href='/']"), f"{name} {step}: no way back to the inbox")
        overflow = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        check(overflow <= 0, f"{name} {step}: the page is {overflow} px wider than the window")
        shots += 1
        driver.save_screenshot(os.path.join(SHOTS, f"{name}-{shots:02d}-{step}.png"))
        if AXE is not None:
            # axe-core needs scripts to run; turning them on after the page
            # loaded leaves the page as it was built without them.
            driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
            found = violations(driver)
            driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": not javascript})
            check(not found, f"{name} {step}: axe-core finds violations: {found}")
            audited += 1

    def go(act):
        load(driver, act)

    driver.set_window_size(width, 900)
    # The language, from Settings (a plain form, with or without JavaScript).
    driver.get(BASE + "/settings")
    Select(driver.find_element(By.NAME, "locale")).select_by_value(language)
    go(driver.find_element(By.CSS_SELECTOR, "form.settings button.primary").click)
    page("settings")

    # Add an event: back in the inbox, its card below the message.
    title = f"Flow {name}"
    driver.get(BASE + "/new")
    driver.find_element(By.NAME, "title").send_keys(title)
    driver.execute_script("arguments[0].value = '2026-12-14'", driver.find_element(By.NAME, "due_date"))
    page("add")
    go(driver.find_element(By.CSS_SELECTOR, "form.event-form button.primary").click)
    check("#event-" in driver.current_url, f"{name}: after adding, the inbox shows the new card, not {driver.current_url}")
    event_id = driver.current_url.rsplit("#event-", 1)[1]
    card = f"article#event-{event_id}"
    check(title in driver.find_element(By.CSS_SELECTOR, card).text, f"{name}: the new card is in the inbox")
    check(title in driver.find_element(By.CSS_SELECTOR, ".feedback").text, f"{name}: the inbox says it was added")
    page("added")

    # Done, then Undo: the card leaves and comes back.
    go(driver.find_element(By.CSS_SELECTOR, f"{card} button.done").click)
    check(not driver.find_elements(By.CSS_SELECTOR, card), f"{name}: Done takes the card out of the inbox")
    check(title in driver.find_element(By.CSS_SELECTOR, ".feedback").text, f"{name}: the message names the event")
    page("done")
    go(driver.find_element(By.CSS_SELECTOR, ".feedback button").click)
    check(driver.find_elements(By.CSS_SELECTOR, card), f"{name}: Undo brings the card back")
    page("undone")

    # The event's own page.
    go(driver.find_element(By.CSS_SELECTOR, f"{card} a.details").click)
    check(title in body(), f"{name}: the event's page names it")
    page("event")

    # Delete asks first: a dialog with JavaScript, a page without.
    driver.get(f"{BASE}/events/{event_id}/edit")
    page("edit")
    delete = driver.find_element(By.CSS_SELECTOR, "a.danger")
    if javascript:
        delete.click()
        driver.switch_to.alert.dismiss()
        check(driver.current_url.endswith("/edit"), f"{name}: Cancel in the dialog keeps the event")
        delete = driver.find_element(By.CSS_SELECTOR, "a.danger")

        def yes():
            delete.click()
            driver.switch_to.alert.accept()

        go(yes)
    else:
        go(delete.click)
        check(driver.find_elements(By.CSS_SELECTOR, "section.confirm"), f"{name}: without JavaScript a page asks before deleting")
        page("delete-question")
        go(driver.find_element(By.CSS_SELECTOR, "section.confirm button.danger").click)
    check(not driver.find_elements(By.CSS_SELECTOR, card), f"{name}: the deleted event left the inbox")
    page("deleted")

    # The archive keeps it; its page says it is closed and offers Reopen.
    driver.get(BASE + "/archive")
    check(driver.find_elements(By.CSS_SELECTOR, card), f"{name}: the archive shows the deleted event")
    page("archive")
    go(driver.find_element(By.CSS_SELECTOR, f"{card} a").click)
    check(driver.find_elements(By.CSS_SELECTOR, "button.reopen"), f"{name}: a deleted event's page offers Reopen")
    page("closed-event")
    go(driver.find_element(By.CSS_SELECTOR, "button.reopen").click)
    driver.get(BASE + "/")
    check(driver.find_elements(By.CSS_SELECTOR, card), f"{name}: Reopen brings the event back to the inbox")
    page("reopened")

    # A page that does not exist is a page, with the way back, in both
    # languages (an unknown address names no person).
    driver.get(BASE + "/no-such-page")
    check("There is no page at this address." in body() and "По этому адресу страницы нет." in body(), f"{name}: the 404 page says so")
    page("not-found", speaks="en")


for javascript in (True, False):
    driver = browser(javascript)
    try:
        for language in ("en", "ru"):
            for width in (1280, 390):
                run(driver, javascript, language, width)
    finally:
        driver.quit()
print(f"flows: {shots} screenshots in {SHOTS}, {audited} pages audited by axe-core; 8 runs (1280 and 390 px, en and ru, JavaScript on and off) all as expected")
