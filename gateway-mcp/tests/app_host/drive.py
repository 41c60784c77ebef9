"""Drives the in-chat inbox in Debian's headless Chromium, hosted by the
official MCP Apps host side (AppBridge, in host.js) against the real
gateway: the view renders under MCP Apps' default Content-Security-Policy,
Done and Undo and Remember act (each checked on the server, through the
model's own session), a failed call reads in the person's words, the
time-zone offer takes one press, the theme follows the host from dark to
light, and a second load renders in Russian. A source's title full of markup
stays text. At the end, one deliberate request from inside the view proves
the policy holds and that violations are seen; no other violation, and no
request from the view, may appear. Screenshots of the view in both themes
are saved.

Usage: drive.py BASE_URL SCREENSHOT_DIR EXPECTED_JSON. Prints one line per
step, then "all as expected"; exits non-zero at the first thing that is not.
"""

import json
import os
import sys
import time

os.environ["SE_OFFLINE"] = "true"

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE, SHOTS, EXPECTED = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3], encoding="utf-8"))
EVENTS, WORDS = EXPECTED["events"], EXPECTED["words"]
os.makedirs(SHOTS, exist_ok=True)


def check(condition, what):
    if not condition:
        raise SystemExit(f"mcp app: {what}")


def step(what):
    print(f"mcp app: {what}", flush=True)


def chromium():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    # Every frame in one renderer, so that the browser's log and its network
    # events include the sandboxed frames' too.
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=520,1400",
                     "--lang=en-US", "--disable-site-isolation-trials",
                     "--disable-features=IsolateOrigins,site-per-process"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.implicitly_wait(0)
    driver.set_script_timeout(30)
    return driver


driver = chromium()
wait = WebDriverWait(driver, 20, poll_frequency=0.1)
browser_log, network_log = [], []


def collect_logs():
    browser_log.extend(driver.get_log("browser"))
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] in ("Network.requestWillBeSent", "Network.loadingFailed"):
            network_log.append(message)


def host():
    driver.switch_to.default_content()
    return driver.execute_script("return window.hostTest || null")


def open_host(query):
    driver.get(f"{BASE}/host.html?{query}")
    try:
        wait.until(lambda _: (host() or {}).get("ready") or (host() or {}).get("failures"))
    finally:
        failures = (host() or {}).get("failures")
        check(not failures, f"the host failed: {failures}")


def in_view(script, *args):
    """Runs `script` inside the view's frame (the sandbox proxy's inner frame)."""
    driver.switch_to.default_content()
    driver.switch_to.frame(driver.find_element(By.ID, "view"))
    driver.switch_to.frame(driver.find_element(By.TAG_NAME, "iframe"))
    try:
        return driver.execute_script(script, *args)
    finally:
        driver.switch_to.default_content()


def until_view(script, what, *args):
    try:
        wait.until(lambda _: in_view(script, *args))
    except Exception:
        raise SystemExit(f"mcp app: waited in vain for {what}; the view shows: {in_view('return document.body.innerText')!r}")


def press(selector):
    in_view("document.querySelector(arguments[0]).click()", selector)


def server(tool, arguments):
    """A tool call on the model's own session: what the server says now."""
    driver.switch_to.default_content()
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.hostTest.callTool(arguments[0], arguments[1]).then(done, (e) => done({failed: String(e)}));",
        tool, arguments)
    check(result and not result.get("failed") and not result.get("isError"), f"{tool} {arguments}: {result}")
    return result["structuredContent"]


def headings():
    return in_view("return [...document.querySelectorAll('#groups h2')].map((h) => h.firstChild.textContent)")


def row(name):
    return f"li[data-id='{EVENTS[name]['id']}']"


try:
    # ---- English, dark, in a host whose person is in Tokyo.
    open_host("theme=dark&locale=en-US&tz=Asia/Tokyo")
    until_view("return document.querySelectorAll('#groups li').length >= 5", "the inbox")
    initialized = host()["initialized"]
    check(initialized and initialized["app"]["name"] == "Hado inbox", f"the view initialized as {initialized}")
    en = WORDS["en"]
    check(headings() == [en["overdue"], en["today"], en["preparing"], en["scheduled"]], f"groups {headings()}")
    step("rendered from the gateway, Overdue first")

    visa = EVENTS["visa"]
    shown = in_view("return document.querySelector(arguments[0] + ' .title').textContent", row("visa"))
    check(shown == visa["title"], f"the markup title shows as {shown!r}")
    elements = in_view("return document.querySelectorAll('#groups img, #groups b, #groups script').length")
    check(elements == 0, f"a title became {elements} elements")
    step("a source's markup shows as text")

    background = in_view("return getComputedStyle(document.body).backgroundColor")
    check(background == "rgb(23, 23, 28)", f"the dark host's background is {background}")
    check(in_view("return document.documentElement.lang") == "en", "the page says it is English")
    offer = in_view("const o = document.getElementById('offer'); return o.hidden ? '' : o.textContent")
    check("Europe/Berlin" in offer and "Asia/Tokyo" in offer, f"the zone offer says {offer!r}")
    wait.until(lambda _: host()["sizes"])
    frame_height = driver.execute_script("return document.getElementById('view').getBoundingClientRect().height")
    reported = host()["sizes"][-1]["height"]
    check(abs(frame_height - reported) < 2 and reported > 200, f"the frame is {frame_height}px for a reported {reported}px")
    driver.find_element(By.ID, "view").screenshot(os.path.join(SHOTS, "view-dark.png"))
    step("dark theme, the host's variables, the offer, and its size reported")

    # ---- Done, and the server says so; Undo, and it is back.
    rent = EVENTS["rent"]
    press(row("rent") + " button.done")
    until_view("const r = document.querySelector(arguments[0]); return r && r.classList.contains('answered') && r.querySelector('button.undo')", "Done's Undo", row("rent"))
    check(server("get_event", {"id": rent["id"]})["state"] == "done", "Done reached the server")
    status = in_view("return document.getElementById('status').textContent")
    check(status == f"{en['feedback_done']} {rent['title']}.", f"Done says {status!r}")
    press(row("rent") + " button.undo")
    until_view("const r = document.querySelector(arguments[0]); return r && !r.classList.contains('answered') && r.querySelector('button.done')", "the event back", row("rent"))
    check(server("get_event", {"id": rent["id"]})["state"] == "overdue", "Undo reopened it on the server")
    step("Done, seen done on the server; Undo, seen back")

    # ---- Remember, one press; and a choice behind the second control.
    press(row("call") + " button.remember")
    until_view("const r = document.querySelector(arguments[0]); return r && r.textContent.includes(arguments[1])", "quiet until", row("call"), en["quiet_until"])
    check(server("get_event", {"id": EVENTS["call"]["id"]}).get("quiet_until"), "Remember reached the server")
    in_view("document.querySelector(arguments[0] + ' details.until').open = true", row("tax"))
    press(row("tax") + " button.remember-tomorrow")
    until_view("const r = document.querySelector(arguments[0]); return r && r.textContent.includes(arguments[1])", "quiet until tomorrow", row("tax"), en["quiet_until"])
    check(server("get_event", {"id": EVENTS["tax"]["id"]}).get("quiet_until"), "Remember until tomorrow reached the server")
    step("Remember, and Remember until tomorrow, seen on the server")

    # ---- A failed call in the person's words: the agent deleted the event.
    server("delete_event", {"id": EVENTS["plants"]["id"]})
    press(row("plants") + " button.done")
    until_view("const s = document.getElementById('status'); return s.classList.contains('failed') && s.textContent === arguments[0]", "the refusal in words", en["event_deleted"])
    step("a refused Done reads in the person's words")

    # ---- The time-zone offer: one press.
    press("#offer button.use-zone")
    until_view("return document.getElementById('offer').hidden", "the offer to go")
    profile = server("get_profile", {})
    check(profile["tz"] == "Asia/Tokyo" and not profile["tz_is_default"], f"the zone saved is {profile}")
    step("the host's time zone set with one press")

    # ---- The host turns light.
    driver.execute_script("window.hostTest.setTheme('light')")
    until_view("return getComputedStyle(document.body).backgroundColor === 'rgb(253, 252, 248)'", "the light theme")
    check(in_view("return document.documentElement.dataset.theme") == "light", "the view follows the host's theme")
    time.sleep(0.5)
    driver.find_element(By.ID, "view").screenshot(os.path.join(SHOTS, "view-light.png"))
    sizes = host()["sizes"]
    check(len(sizes) < 40, f"{len(sizes)} size reports: a loop")
    content = in_view("return Math.ceil(document.documentElement.getBoundingClientRect().height)")
    check(abs(sizes[-1]["height"] - content) < 2, f"the last size {sizes[-1]} is not the page's {content}px")
    step(f"light theme; {len(sizes)} size reports, the last the page's own height")

    # ---- The policy holds inside the view, and a violation is seen: one
    # deliberate image and one deliberate fetch, both to be refused.
    in_view("new Image().src = arguments[0] + '/probe-image.png'; fetch(arguments[0] + '/probe-fetch').catch(() => {});", BASE)
    time.sleep(1.5)
    collect_logs()

    # ---- Russian.
    open_host("theme=light&locale=ru-RU&tz=Asia/Tokyo")
    until_view("return document.querySelectorAll('#groups li').length >= 4", "the Russian inbox")
    ru = WORDS["ru"]
    # In Tokyo the consulate's 18:00 has passed: nothing is left for today.
    check(headings() == [ru["overdue"], ru["preparing"], ru["scheduled"]], f"Russian groups {headings()}")
    remember = in_view("return document.querySelector('button.remember').textContent")
    check(remember == ru["remember"], f"Remember reads {remember!r}")
    check(in_view("return document.documentElement.lang") == "ru", "the page says it is Russian")
    check(in_view("return document.getElementById('offer').hidden"), "no offer once the zone is chosen")
    driver.find_element(By.ID, "view").screenshot(os.path.join(SHOTS, "view-russian.png"))
    step("Russian, in the web inbox's words")
    collect_logs()

    # ---- No violation but the deliberate two, and no request from the view.
    refused = [entry["message"] for entry in browser_log if "Content Security Policy" in entry["message"]]
    probes = [line for line in refused if "/probe-" in line]
    others = [line for line in refused if "/probe-" not in line]
    check(any("probe-image.png" in line for line in probes) and any("probe-fetch" in line for line in probes),
          f"the deliberate requests were not reported as refused: {refused}")
    check(not others, f"violations: {others}")
    sent = [message["params"]["request"]["url"] for message in network_log if message["method"] == "Network.requestWillBeSent"]
    allowed = (f"{BASE}/host.html", f"{BASE}/host.js", f"{BASE}/mcp", BASE.replace("127.0.0.1", "localhost") + "/sandbox.html")
    strays = [url for url in sent if not url.startswith(allowed) and not url.startswith(("data:", "about:"))]
    check(not [url for url in strays if "/probe-" not in url], f"requests besides the host's own: {strays}")
    failed = {message["params"]["requestId"]: message["params"].get("blockedReason") for message in network_log if message["method"] == "Network.loadingFailed"}
    for message in network_log:
        if message["method"] == "Network.requestWillBeSent" and "/probe-" in message["params"]["request"]["url"]:
            check(failed.get(message["params"]["requestId"]) == "csp", f"a deliberate request was not blocked: {message}")
    print(f"mcp app: {len(sent)} requests, all the host's; 2 deliberate violations seen and no other; all as expected")
finally:
    driver.quit()
