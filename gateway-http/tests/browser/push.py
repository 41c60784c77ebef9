"""The installable inbox and its notifications in Debian's headless Chromium:
the manifest parses (as Chromium reads it, through the DevTools protocol)
and names its icons, which load; the service worker registers for the
whole inbox; with notification permission granted through the DevTools
protocol, a reminder delivered with `ServiceWorker.deliverPushMessage`
shows a notification with Done and Remember, read back with
`registration.getNotifications()`; a message that names another site gets
no action and opens the inbox; and the Done action's handler closes the
event.

Chromium has no DevTools command that presses a notification's button, so
the handler is run directly: the worker's own script (`/sw.js`) is loaded
into the page, where the same `notificationclick` listener is given the
notification Chromium showed, with its Done action.

Usage: push.py <base URL> <payload JSON file> <event id>
"""

import json
import sys
import time

import trio

from selenium.webdriver.common.by import By

from steps import AXE, chromium, violations

base, payload_file, event_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
payload = open(payload_file, encoding="utf-8").read()
problems = []


def expect(condition, what):
    if not condition:
        problems.append(what)
        print("FAILED:", what)


def registration_of(driver, scope):
    """The id of the worker registered for `scope`, from the ServiceWorker
    domain's `workerRegistrationUpdated` events (none within ten seconds)."""

    async def find():
        async with driver.bidi_connection() as connection:
            session, devtools = connection.session, connection.devtools
            updates = session.listen(devtools.service_worker.WorkerRegistrationUpdated)
            with trio.move_on_after(10):
                await session.execute(devtools.service_worker.enable())
                async for update in updates:
                    for registration in update.registrations:
                        if registration.scope_url == scope and not registration.is_deleted:
                            return str(registration.registration_id)
        return None

    return trio.run(find)


def run_async(driver, script, *arguments):
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];" + script, *arguments
    )


driver = chromium("1280,900")
try:
    driver.get(base + "/settings")
    expect(driver.find_element(By.ID, "push-on").is_displayed(), "Settings offers notifications on this device")
    if AXE:
        found = violations(driver)
        expect(found == [], f"axe finds nothing on Settings: {found}")

    # The manifest, as Chromium parses it.
    manifest = driver.execute_cdp_cmd("Page.getAppManifest", {})
    expect(manifest.get("errors") == [], f"the manifest parses: {manifest.get('errors')}")
    data = json.loads(manifest.get("data") or "{}")
    expect(data.get("start_url") == "/" and data.get("display") == "standalone", f"start_url and display: {data}")
    expect(data.get("name") == "Hado" and data.get("short_name") == "Hado", "the manifest names Hado")
    sizes = {(icon["sizes"], icon.get("purpose", "any")) for icon in data.get("icons", [])}
    expect({("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes, f"the icons: {sizes}")
    loaded = run_async(
        driver,
        "Promise.all(arguments[0].map((src) => new Promise((ok) => {"
        " const image = new Image(); image.onload = () => ok(image.naturalWidth); image.onerror = () => ok(0); image.src = src; })))"
        ".then(done);",
        [icon["src"] for icon in data.get("icons", [])],
    )
    expect(loaded == [192, 512, 512], f"the icons load at their sizes: {loaded}")

    # The worker registers for the whole inbox.
    scope = run_async(
        driver,
        "navigator.serviceWorker.ready.then((registration) => done(registration.scope));",
    )
    expect(scope == base + "/", f"the service worker's scope is the inbox: {scope}")

    # Notifications allowed, as the button's permission prompt would; the
    # registration's id comes from the ServiceWorker domain's events.
    driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["notifications"]})
    permission = run_async(driver, "done(Notification.permission);")
    expect(permission == "granted", f"notifications are allowed: {permission}")
    registration = registration_of(driver, base + "/")
    expect(registration is not None, "the ServiceWorker domain names the registration")

    # A worker Chromium has just started may miss a message on a busy
    # machine; the same message again replaces its notification (one tag).
    driver.execute_cdp_cmd("ServiceWorker.enable", {})
    shown = []
    for _ in range(3):
        driver.execute_cdp_cmd(
            "ServiceWorker.deliverPushMessage",
            {"origin": base, "registrationId": registration, "data": payload},
        )
        for _ in range(50):
            shown = run_async(
                driver,
                "navigator.serviceWorker.ready.then((registration) => registration.getNotifications())"
                ".then((found) => done(found.map((n) => ({title: n.title, body: n.body, tag: n.tag,"
                " renotify: n.renotify, actions: n.actions.map((a) => [a.action, a.title]), data: n.data}))));",
            )
            if shown:
                break
            time.sleep(0.1)
        if shown:
            break
    expect(len(shown) == 1, f"one notification is shown: {shown}")
    notification = shown[0] if shown else {}
    expect(notification.get("title") == "Visa", f"its title: {notification.get('title')}")
    expect(notification.get("tag") == f"event-{event_id}", f"its tag is the event: {notification.get('tag')}")
    expect(notification.get("renotify") is True, "a new checkpoint alerts again")
    actions = [action for action, _ in notification.get("actions", [])]
    expect(actions == ["done", "remember"], f"Done and Remember: {notification.get('actions')}")

    # A message that names another site (forged with the keys, say) gets
    # no action and opens the inbox, never that site.
    forged = json.loads(payload)
    forged["tag"] = "forged"
    forged["url"] = "https://attacker.example/phish"
    for action in forged.get("actions", []):
        action["url"] = "https://attacker.example/a/steal"
    found = []
    for _ in range(3):
        driver.execute_cdp_cmd(
            "ServiceWorker.deliverPushMessage",
            {"origin": base, "registrationId": registration, "data": json.dumps(forged)},
        )
        for _ in range(50):
            found = run_async(
                driver,
                "navigator.serviceWorker.ready.then((registration) => registration.getNotifications({tag: 'forged'}))"
                ".then((found) => done(found.map((n) => ({actions: n.actions.length, data: n.data}))));",
            )
            if found:
                break
            time.sleep(0.1)
        if found:
            break
    expect(len(found) == 1, f"the forged message is shown once: {found}")
    if found:
        expect(found[0]["actions"] == 0, f"a foreign link is no action: {found[0]}")
        expect(found[0]["data"]["url"] == "/", f"a foreign page is not opened: {found[0]}")
        expect(found[0]["data"]["links"] == {}, f"no foreign link is kept: {found[0]}")

    # The Done action's handler: the worker's listener, given that notification.
    result = run_async(
        driver,
        "const [shown, id] = arguments;"
        "const script = document.createElement('script');"
        "script.src = '/sw.js';"
        "script.onerror = () => done({error: 'the worker script did not load'});"
        "script.onload = () => {"
        " let closed = false; let work = Promise.resolve();"
        " const event = new Event('notificationclick');"
        " event.action = 'done';"
        " event.notification = {title: shown.title, body: shown.body, tag: shown.tag, data: shown.data, close: () => { closed = true; }};"
        " event.waitUntil = (promise) => { work = promise; };"
        " window.dispatchEvent(event);"
        " work.then(() => fetch('/me/events/' + id)).then((reply) => reply.json())"
        "  .then((event) => done({closed, state: event.state}))"
        "  .catch((error) => done({error: String(error)}));"
        "};"
        "document.head.append(script);",
        notification,
        event_id,
    )
    expect(result.get("closed") is True, f"the handler closes the notification: {result}")
    expect(result.get("state") == "done", f"Done from the notification closes the event: {result}")
finally:
    driver.quit()

if problems:
    sys.exit("\n".join(problems))
print("all as expected")
