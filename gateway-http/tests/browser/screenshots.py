"""The pictures of README.md and docs/, taken in Debian's headless Chromium
from an inbox the test seeded: the inbox at 1280x800 and at 390x844, each
light and dark, and Settings at 1280x1200 from its reminder channels down.

Each is the window as it stands (not the whole page), so its size is the
window's whatever the page holds. The pointer rests outside the page and
nothing has the focus, so no card shows what it shows on hover.

Usage: screenshots.py BASE_URL FOLDER. Prints the file of each picture and
"all as expected"; exits non-zero on the first thing that is not as it
should be, saying what.
"""

import os
import sys

os.environ["SE_OFFLINE"] = "true"

from selenium.webdriver.common.by import By

from steps import chromium

BASE, FOLDER = sys.argv[1], sys.argv[2]
os.makedirs(FOLDER, exist_ok=True)

# name, width, height, colour scheme, page, what must be on it
SHOTS = [
    ("inbox-wide-light", 1280, 800, "light", "/", "Visa renewal"),
    ("inbox-wide-dark", 1280, 800, "dark", "/", "Visa renewal"),
    ("inbox-phone-light", 390, 844, "light", "/", "Renew the domain"),
    ("inbox-phone-dark", 390, 844, "dark", "/", "Renew the domain"),
    ("settings-light", 1280, 1200, "light", "/settings", "Chrome on Android"),
]


def check(condition, what):
    if not condition:
        raise SystemExit(f"screenshots: {what}")


driver = chromium("1280,1000")
try:
    for name, width, height, scheme, page, expected in SHOTS:
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )
        driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
        )
        driver.get(BASE + page)
        text = driver.find_element(By.TAG_NAME, "body").text
        check(expected in text, f"{name}: the page shows {expected!r}:\n{text}")
        dark = driver.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches")
        check(dark == (scheme == "dark"), f"{name}: the page is {scheme}")
        # No focus ring, no caret, no hover: the page as it first shows.
        driver.execute_script("document.activeElement && document.activeElement.blur()")
        if page == "/settings":
            # From the heading of the reminder channels down, below the
            # header that stays at the top.
            driver.execute_script(
                "const top = document.getElementById('reminders').getBoundingClientRect().top;"
                "const header = document.querySelector('header');"
                "window.scrollTo(0, scrollY + top - (header ? header.offsetHeight : 0) - 16)"
            )
        path = os.path.join(FOLDER, f"{name}.png")
        check(driver.save_screenshot(path), f"{name}: the screenshot is saved")
        print(path)
finally:
    driver.quit()
print("all as expected")
