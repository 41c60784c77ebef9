"""The everyday flows of the web inbox in every way a person may meet them:
at 1280 px and 390 px wide, in English and in Russian, with JavaScript on
and off (eight runs). Each run:

- adds an event, marks it Done and takes that back with Undo, opens its
  page, deletes it (a dialog asks with JavaScript, a page without), finds it
  in the archive and reopens it from its page (its page from the card's menu);
- remembers it until tomorrow morning from its page, and takes that back;
- searches for it, switches to the compact density and filters by state
  (and, with JavaScript, uses every keyboard shortcut: ? j k r n /);
- adds a far-off event and reads its date (with the year);
- in Settings: picks a time zone by its city, adds a webhook (a refused
  address first), turns it off and on and removes it, issues and revokes a
  calendar link and an agent token (each destructive step asked first), and
  checks that Telegram is not offered without a bot;
- opens a page that does not exist: a whole page in the person's language.

Every page is checked for its language, one <h1>, navigation back and no
sideways scrolling, audited by axe-core (the file HADO_AXE names, when set)
and kept as a screenshot.

Usage: flows.py BASE_URL SCREENSHOT_DIR. Exits non-zero on the first thing
that is not as it should be, saying what.
"""

import os
import sys

os.environ["SE_OFFLINE"] = "true"

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
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


# The few words the checks look for, in each language.
WORDS = {
    "en": {"quiet": "quiet until", "tomorrow": "quiet until tomorrow, 08:00", "no_matches": "Nothing matches.", "months": "13 months"},
    "ru": {"quiet": "тихо до", "tomorrow": "тихо до завтра в 08:00", "no_matches": "Ничего не найдено.", "months": "13 месяцев"},
}


def run(driver, javascript, language, width):
    name = f"{width}px-{language}-js-{'on' if javascript else 'off'}"
    words = WORDS[language]

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

    def confirmed(selector, step):
        """A destructive link: a dialog asks with JavaScript (Cancel keeps
        things as they are, OK goes on), a page without."""
        if javascript:
            before = driver.current_url
            driver.find_element(By.CSS_SELECTOR, selector).click()
            dialog = driver.find_element(By.ID, "confirm")
            check(dialog.is_displayed() and dialog.find_element(By.TAG_NAME, "h2").text, f"{name} {step}: a dialog asks")
            page(f"{step}-dialog")
            dialog.find_element(By.CSS_SELECTOR, "button.cancel").click()
            check(driver.current_url == before, f"{name} {step}: Cancel in the dialog keeps the page, not {driver.current_url}")
            check(driver.find_elements(By.CSS_SELECTOR, selector), f"{name} {step}: Cancel in the dialog changes nothing")

            def yes():
                driver.find_element(By.CSS_SELECTOR, selector).click()
                driver.find_element(By.CSS_SELECTOR, "#confirm button.danger").click()

            go(yes)
        else:
            go(driver.find_element(By.CSS_SELECTOR, selector).click)
            check(driver.find_elements(By.CSS_SELECTOR, "section.confirm"), f"{name} {step}: without JavaScript a page asks first")
            page(f"{step}-question")
            go(driver.find_element(By.CSS_SELECTOR, "section.confirm button.danger").click)

    def search(text):
        field = driver.find_element(By.ID, "q")
        field.clear()
        field.send_keys(text)
        go(lambda: field.send_keys(Keys.ENTER))

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

    # The event's own page, from the card's menu.
    driver.find_element(By.CSS_SELECTOR, f"{card} summary").click()
    page("card-menu")
    go(driver.find_element(By.CSS_SELECTOR, f"{card} a.details").click)
    check(title in body(), f"{name}: the event's page names it")
    page("event")

    # Delete asks first: a dialog with JavaScript, a page without.
    driver.get(f"{BASE}/events/{event_id}/edit")
    page("edit")
    confirmed("a.danger", "delete")
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

    # Remember, with a choice, from the event's page: until tomorrow
    # morning. The card says until when; Undo takes Remember back.
    driver.get(f"{BASE}/events/{event_id}")
    go(driver.find_element(By.CSS_SELECTOR, "button[name=until][value=tomorrow]").click)
    text = driver.find_element(By.CSS_SELECTOR, card).get_attribute("textContent")
    check(words["tomorrow"] in text, f"{name}: the card says it is quiet until tomorrow 08:00: {text}")
    check(title in driver.find_element(By.CSS_SELECTOR, ".feedback").text, f"{name}: the inbox says it was remembered")
    page("remembered-until-tomorrow")
    go(driver.find_element(By.CSS_SELECTOR, ".feedback button").click)
    check(words["quiet"] not in driver.find_element(By.CSS_SELECTOR, card).get_attribute("textContent"), f"{name}: Undo takes Remember back")
    page("remember-taken-back")

    # Finding things: the search and the filters live in the URL, and the
    # compact density keeps them.
    search(title)
    found = [element.get_attribute("id") for element in driver.find_elements(By.CSS_SELECTOR, "article.card")]
    check("q=" in driver.current_url and found == [f"event-{event_id}"], f"{name}: the search finds just the event, not {found}")
    page("search")
    if javascript:
        # The keyboard: ? lists the shortcuts, j moves to the event, / back to the search.
        driver.execute_script("document.activeElement.blur()")
        ActionChains(driver).send_keys("?").perform()
        check(driver.find_element(By.ID, "shortcuts").is_displayed(), f"{name}: ? lists the shortcuts")
        page("shortcuts")
        ActionChains(driver).send_keys("?").send_keys("j").perform()
        check(driver.switch_to.active_element.get_attribute("id") == f"event-{event_id}", f"{name}: j moves to the event")
        ActionChains(driver).send_keys("/").perform()
        check(driver.switch_to.active_element.get_attribute("id") == "q", f"{name}: / goes to the search")
        # k stays on the first event; r is Remember (Undo takes it back); n
        # opens the form for a new event.
        driver.execute_script("document.activeElement.blur()")
        ActionChains(driver).send_keys("j").send_keys("k").perform()
        check(driver.switch_to.active_element.get_attribute("id") == f"event-{event_id}", f"{name}: k stays on the first event")
        go(lambda: ActionChains(driver).send_keys("r").perform())
        check(words["quiet"] in driver.find_element(By.CSS_SELECTOR, card).get_attribute("textContent"), f"{name}: r is Remember")
        page("remembered-by-key")
        go(driver.find_element(By.CSS_SELECTOR, ".feedback button").click)
        check(words["quiet"] not in driver.find_element(By.CSS_SELECTOR, card).get_attribute("textContent"), f"{name}: Undo takes Remember back")
        driver.execute_script("document.activeElement.blur()")
        go(lambda: ActionChains(driver).send_keys("n").perform())
        check(driver.current_url.endswith("/new"), f"{name}: n opens a new event's form, not {driver.current_url}")
        driver.get(BASE + "/")
        search(title)
    go(driver.find_element(By.CSS_SELECTOR, "a.density").click)
    check("density=compact" in driver.current_url and "q=" in driver.current_url, f"{name}: compact keeps the search: {driver.current_url}")
    check(driver.find_elements(By.CSS_SELECTOR, f".groups.compact {card}"), f"{name}: the event in the compact density")
    page("compact")
    Select(driver.find_element(By.ID, "state")).select_by_value("overdue")
    search(title)
    check("state=overdue" in driver.current_url and words["no_matches"] in body(), f"{name}: the event is not overdue: {driver.current_url}")
    page("filtered")

    # A far-off event: its card, in Scheduled unfolded, gives the year.
    driver.get(BASE + "/new")
    driver.find_element(By.NAME, "title").send_keys(f"Far {name}")
    driver.execute_script("arguments[0].value = '2028-01-04'", driver.find_element(By.NAME, "due_date"))
    go(driver.find_element(By.CSS_SELECTOR, "form.event-form button.primary").click)
    far = driver.find_element(By.CSS_SELECTOR, "article#event-" + driver.current_url.rsplit("#event-", 1)[1]).text
    check(words["months"] in far and "2028" in far, f"{name}: a far date reads in months, with its year: {far}")
    page("far-off")

    # Settings. Telegram is not offered without a bot.
    driver.get(BASE + "/settings")
    check(not driver.find_elements(By.CSS_SELECTOR, "form[action^='/settings/telegram']"), f"{name}: no Telegram button without a bot")
    # A time zone by its city, in any letter case; then back to UTC.
    for zone, saved in (("tokyo", "Asia/Tokyo"), ("UTC", "UTC")):
        field = driver.find_element(By.NAME, "tz")
        field.clear()
        field.send_keys(zone)
        go(driver.find_element(By.CSS_SELECTOR, "form.settings button.primary").click)
        check(driver.find_element(By.NAME, "tz").get_attribute("value") == saved, f"{name}: {zone} is saved as {saved}")
        if saved != "UTC":
            page("time-zone-by-city")

    # A webhook: a refused address says why at its field, in its section.
    field = driver.find_element(By.NAME, "url")
    field.send_keys("ftp://example.com/hado")
    go(driver.find_element(By.CSS_SELECTOR, "form.add-webhook button").click)
    check(driver.current_url.endswith("#reminders"), f"{name}: the webhook form comes back to its section, not {driver.current_url}")
    field = driver.find_element(By.NAME, "url")
    check(field.get_attribute("aria-invalid") == "true" and driver.find_element(By.ID, "url-error").text, f"{name}: the refusal is at the field")
    page("webhook-refused")
    field.clear()
    field.send_keys(f"http://127.0.0.1:9/{name}")
    go(driver.find_element(By.CSS_SELECTOR, "form.add-webhook button").click)
    check(driver.find_elements(By.ID, "webhook-secret"), f"{name}: the webhook's secret is shown once")
    page("webhook-added")
    channel = "#" + driver.find_element(By.CSS_SELECTOR, "article.channel").get_attribute("id")
    confirmed(f"{channel} a[href$='/off']", "webhook-off")
    check(driver.current_url.endswith("#reminders"), f"{name}: Turn off comes back to its section")
    check(driver.find_elements(By.CSS_SELECTOR, f"{channel} form[action$='/on#reminders']"), f"{name}: the webhook is off and can be turned on")
    page("webhook-off")
    go(driver.find_element(By.CSS_SELECTOR, f"{channel} form[action$='/on#reminders'] button").click)
    confirmed(f"{channel} a[href$='/remove']", "webhook-remove")
    check(not driver.find_elements(By.CSS_SELECTOR, channel), f"{name}: the webhook is removed")
    page("webhook-removed")

    # A calendar link and an agent token: issued, shown once in their own
    # sections, and revoked after asking.
    for section, issued, revoke in (("calendar", "calendar-url", "/settings/calendar/revoke"), ("agent", "connect-line", "/settings/agent-token/revoke")):
        go(driver.find_element(By.CSS_SELECTOR, f"#{section} form button").click)
        check(driver.current_url.endswith(f"#{section}") and driver.find_elements(By.ID, issued), f"{name}: {section} issued and shown in its section")
        page(f"{section}-issued")
        confirmed(f"a[href='{revoke}']", f"{section}-revoke")
        check(driver.current_url.endswith(f"#{section}") and not driver.find_elements(By.CSS_SELECTOR, f"a[href='{revoke}']"), f"{name}: {section} revoked")
        page(f"{section}-revoked")

    # A page that does not exist is a whole page, with the way back, in the
    # person's language.
    driver.get(BASE + "/no-such-page")
    said = {"en": "There is no page at this address.", "ru": "По этому адресу страницы нет."}
    check(said[language] in body() and driver.find_elements(By.TAG_NAME, "nav"), f"{name}: the 404 page says so: {body()}")
    page("not-found")


for javascript in (True, False):
    driver = browser(javascript)
    try:
        for language in ("en", "ru"):
            for width in (1280, 390):
                run(driver, javascript, language, width)
    finally:
        driver.quit()
print(f"flows: {shots} screenshots in {SHOTS}, {audited} pages audited by axe-core; 8 runs (1280 and 390 px, en and ru, JavaScript on and off) all as expected")
