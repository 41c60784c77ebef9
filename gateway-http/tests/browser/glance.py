"""The inbox of a real week, at a glance, in Debian's headless Chromium: 8
overdue events, 5 due today and a dozen later, at 1280x800 and 390x844, in
English and Russian. Each run checks:

- the attention count in the title and the badge, and overdue in the first
  screen (its group, or the line that counts it), above today's;
- at least 6 whole cards in the first screen at 1280x800; at 390 px every
  card keeps its due date and at least 24 characters of its title, the
  navigation keeps one line, nothing scrolls sideways and the filters are
  not clipped;
- the keyboard: after Done by keyboard the next card has the focus, below
  the sticky header; z undoes it; ? lists every key and Esc closes it; x
  asks in a dialog that names the event;
- the toast names the event and a reload does not repeat it;
- quick add fills the form from one line, whose fields stay editable;
- no raw timestamp on the archive, Settings or an event's page.

Every state is kept as a screenshot and audited by axe-core (the file
HADO_AXE names, when set).

Usage: glance.py BASE_URL SCREENSHOT_DIR. Exits non-zero on the first thing
that is not as it should be, saying what.
"""

import os
import re
import sys
import time

os.environ["SE_OFFLINE"] = "true"

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from steps import AXE, chromium, load, violations

BASE, SHOTS = sys.argv[1], sys.argv[2]
os.makedirs(SHOTS, exist_ok=True)
shots = audited = 0

WORDS = {
    "en": {
        "done": "Done:",
        "back": "Back in the inbox:",
        "line": "Passport renewal by 14 Mar, start 1 Mar",
        "title": "Passport renewal",
        "due": "14 Mar 2027",
        "fire": "1 Mar 2027",
        "nothing": "There is no page at this address.",
    },
    "ru": {
        "done": "Сделано:",
        "back": "Снова во входящих:",
        "line": "Налоговая до 15 апреля, начать с 1 марта",
        "title": "Налоговая",
        "due": "15.04.2027",
        "fire": "01.03.2027",
        "nothing": "По этому адресу страницы нет.",
    },
}
# A date and a time as a machine writes them, which a person should never see.
RAW = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}")


def check(condition, what):
    if not condition:
        raise SystemExit(f"glance: {what}")


driver = chromium("1280,900")


def size(width, height):
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def run(language, width, height):
    name = f"{width}px-{language}"
    words = WORDS[language]
    size(width, height)

    def shot(step):
        global shots, audited
        shots += 1
        driver.save_screenshot(os.path.join(SHOTS, f"{name}-{shots:02d}-{step}.png"))
        if AXE is not None:
            found = violations(driver)
            check(not found, f"{name} {step}: axe-core finds violations: {found}")
            audited += 1

    def keys(*typed):
        ActionChains(driver).send_keys(*typed).perform()

    def active_card():
        return driver.execute_script("const card = document.activeElement.closest('article.card'); return card && card.id")

    driver.get(BASE + "/settings")
    Select(driver.find_element(By.NAME, "locale")).select_by_value(language)
    load(driver, driver.find_element(By.CSS_SELECTOR, "form.settings button.primary").click)
    driver.get(BASE + "/")
    shot("first-screen")

    # The attention count: every open overdue and today event not answered.
    badge = driver.find_element(By.ID, "badge").text
    check(badge == "14", f"{name}: the badge counts 8 overdue and 6 today, not {badge}")
    check(driver.title.startswith("(14) "), f"{name}: the title counts them too: {driver.title}")
    seen = driver.execute_script(
        """
        const inView = (element) => { const box = element.getBoundingClientRect(); return box.top >= 0 && box.bottom <= innerHeight && box.height > 0; };
        const cards = Array.from(document.querySelectorAll('.groups article.card')).filter(inView).length;
        const overdue = [document.querySelector('#overdue h2'), document.querySelector('.overdue-line')].some((element) => element && inView(element));
        const navTops = new Set(Array.from(document.querySelectorAll('nav a')).filter((link) => link.offsetParent).map((link) => link.getBoundingClientRect().top));
        const sideways = document.documentElement.scrollWidth - document.documentElement.clientWidth;
        return {cards, overdue, navLines: navTops.size, sideways};
        """
    )
    check(seen["overdue"], f"{name}: overdue shows in the first screen")
    # The groups in the order of their due moments: what is late leads.
    tops = driver.execute_script(
        "return ['overdue', 'today', 'preparing'].map((id) => document.getElementById(id).getBoundingClientRect().top)"
    )
    check(tops == sorted(tops), f"{name}: overdue above today above preparing, not at {tops}")
    if width >= 1280:
        check(seen["cards"] >= 6, f"{name}: {seen['cards']} whole cards in the first screen, not 6 or more")
    check(seen["navLines"] == 1, f"{name}: the navigation keeps one line, not {seen['navLines']}")
    check(seen["sideways"] <= 0, f"{name}: the page scrolls {seen['sideways']} px sideways")

    def phone_cards(density):
        """Every card keeps its due date and at least 24 characters of its title."""
        cards = driver.execute_script(
            """
            const canvas = document.createElement('canvas').getContext('2d');
            return Array.from(document.querySelectorAll('.groups article.card')).map((card) => {
              const title = card.querySelector('.title');
              const due = card.querySelector('.due');
              canvas.font = getComputedStyle(title).font;
              const wanted = canvas.measureText(title.textContent.trim().slice(0, 24)).width;
              const box = due.getBoundingClientRect(), inside = card.getBoundingClientRect();
              return {id: card.id, title: title.textContent.trim(), room: title.clientWidth, wanted,
                      due: due.offsetWidth > 0 && box.right <= inside.right + 1 && due.textContent.trim().length > 0};
            });
            """
        )
        check(len(cards) >= 14, f"{name} {density}: {len(cards)} cards")
        for card in cards:
            check(card["due"], f"{name} {density}: {card['title']} shows its due date")
            check(card["room"] + 1 >= card["wanted"], f"{name} {density}: {card['title']} shows fewer than 24 characters ({card['room']} px for {card['wanted']:.0f})")

    if width < 600:
        phone_cards("comfortable")
        driver.get(BASE + "/?density=compact")
        phone_cards("compact")
        shot("compact")
        driver.get(BASE + "/")
        # The filters show their whole choice.
        for select in driver.find_elements(By.CSS_SELECTOR, ".finder select"):
            fits = driver.execute_script(
                """
                const select = arguments[0], canvas = document.createElement('canvas').getContext('2d');
                canvas.font = getComputedStyle(select).font;
                return canvas.measureText(select.options[select.selectedIndex].text).width + 24 <= select.clientWidth;
                """,
                select,
            )
            check(fits, f"{name}: the filter {select.get_attribute('id')} is clipped")

    # Remember by keyboard: back at the card, the next one has the focus,
    # and the sticky header covers neither.
    driver.execute_script("document.activeElement.blur()")
    keys("j", "j", "j")
    remembered = active_card()
    after = driver.execute_script("const cards = Array.from(document.querySelectorAll('article.card')); return cards[cards.findIndex((card) => card.id === arguments[0]) + 1].id", remembered)
    load(driver, lambda: keys("r"))
    check(active_card() == after, f"{name}: after Remember the next card has the focus, not {active_card()}")
    covered = driver.execute_script(
        "const header = document.querySelector('header').getBoundingClientRect().bottom; return ['" + remembered + "', '" + after + "'].some((id) => { const box = document.getElementById(id).getBoundingClientRect(); return box.top < header && box.bottom > 0; })"
    )
    check(not covered, f"{name}: the sticky header covers the remembered card or the next one")
    shot("remembered")
    load(driver, lambda: keys("z"))

    # Done by keyboard: the next card has the focus, below the sticky header.
    driver.execute_script("document.activeElement.blur()")
    keys("j")
    first = active_card()
    second = driver.execute_script("const cards = Array.from(document.querySelectorAll('article.card')); return cards[1].id")
    title = driver.find_element(By.CSS_SELECTOR, f"#{first} .title").text
    load(driver, lambda: keys("d"))
    feedback = driver.find_element(By.CSS_SELECTOR, ".feedback").text
    check(f"{words['done']} {title}" in feedback, f"{name}: the toast names the event: {feedback}")
    check(active_card() == second, f"{name}: after Done the next card has the focus, not {active_card()}")
    covered = driver.execute_script(
        "return document.activeElement.getBoundingClientRect().top < document.querySelector('header').getBoundingClientRect().bottom"
    )
    check(not covered, f"{name}: the sticky header covers the card with the focus")
    shot("done-toast")
    # z undoes it, and says so.
    load(driver, lambda: keys("z"))
    feedback = driver.find_element(By.CSS_SELECTOR, ".feedback").text
    check(f"{words['back']} {title}" in feedback, f"{name}: Undo says what it did: {feedback}")
    check(driver.find_elements(By.ID, first), f"{name}: z brought the event back")
    shot("undone")
    driver.refresh()
    check(not driver.find_elements(By.CSS_SELECTOR, ".feedback"), f"{name}: a reload does not repeat the toast")

    # ? lists every key; Esc closes the list.
    driver.execute_script("document.activeElement.blur()")
    keys("?")
    listed = driver.find_element(By.ID, "shortcuts").text.split()
    for key in ["j", "k", "d", "r", "z", "o", "e", "x", "n", "/", "?", "Esc"]:
        check(key in listed, f"{name}: the help lists {key}")
    shot("help")
    keys(Keys.ESCAPE)
    check(not driver.find_element(By.ID, "shortcuts").is_displayed(), f"{name}: Esc closes the help")

    # x on the person's own event asks in a dialog that names it; Cancel keeps it.
    own = driver.find_element(By.XPATH, "//article[contains(@class,'card')][.//a[contains(@class,'delete')]]")
    driver.execute_script("arguments[0].focus()", own)
    keys("x")
    dialog = driver.find_element(By.ID, "confirm")
    named = own.find_element(By.CSS_SELECTOR, ".title").text
    check(dialog.is_displayed() and named in dialog.text, f"{name}: the delete dialog names {named}: {dialog.text}")
    shot("delete-dialog")
    dialog.find_element(By.CSS_SELECTOR, "button.cancel").click()
    check(not dialog.is_displayed(), f"{name}: Cancel closes the dialog")

    # Quick add: one line fills the form; its fields stay editable.
    driver.get(BASE + "/new")
    line = driver.find_element(By.ID, "line")
    line.send_keys(words["line"])
    form = driver.find_element(By.CSS_SELECTOR, "form.event-form")
    WebDriverWait(driver, 10).until(lambda _: form.find_element(By.NAME, "title").get_attribute("value") == words["title"])
    due = form.find_element(By.NAME, "due_date").get_attribute("value")
    fire = form.find_element(By.NAME, "fire_date").get_attribute("value")
    check((due, fire) == (words["due"], words["fire"]), f"{name}: the line fills the dates in the page's language: {due}, {fire}")
    shot("quick-add")
    form.find_element(By.NAME, "title").send_keys(f" {name}")
    load(driver, form.find_element(By.CSS_SELECTOR, "button.primary").click)
    added = f"{words['title']} {name}"
    check(added in driver.find_element(By.CSS_SELECTOR, ".feedback").text, f"{name}: the edited title is saved")

    # Dates in words everywhere.
    for path in ("/archive", "/settings", "/events/" + first.split("-")[1]):
        driver.get(BASE + path)
        text = driver.find_element(By.TAG_NAME, "body").text
        raw = RAW.search(text)
        check(raw is None, f"{name}: {path} shows a raw timestamp: {raw and raw.group(0)}")
        if path == "/settings":
            # Quiet hours in the page's 24-hour words, not the browser's AM/PM.
            start = driver.find_element(By.NAME, "quiet_start")
            shown = (start.get_attribute("type"), start.get_attribute("value"))
            check(shown == ("text", "22:00"), f"{name}: quiet hours start shows {shown}")
        shot(path.strip("/").split("/")[0])

    # A page that is not there, in the person's language.
    driver.get(BASE + "/no/such/page")
    check(words["nothing"] in driver.find_element(By.TAG_NAME, "body").text, f"{name}: the 404 page speaks {language}")
    shot("not-found")


try:
    for language in ("en", "ru"):
        for width, height in ((1280, 800), (390, 844)):
            run(language, width, height)
finally:
    driver.quit()
print(f"glance: {shots} screenshots in {SHOTS}, {audited} pages audited by axe-core; 4 runs (1280x800 and 390x844, en and ru) all as expected")
