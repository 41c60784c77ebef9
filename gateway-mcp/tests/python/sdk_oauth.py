"""Signs an agent in to Hado with the official Python MCP SDK's OAuth client
provider, as a person would with an MCP client that signs in:

1. the SDK meets the 401, discovers the protected resource and the
   authorization server, and registers itself (RFC 7591);
2. it is sent to the web inbox's authorization page; here the person is
   signed in by the trusted proxy (`X-Remote-User`), reads who is asking and
   presses Allow (the page's own form, its hidden fields as served);
3. the SDK exchanges the code (PKCE) and calls tools as that person;
4. its access token runs out (as far as the SDK knows) and it refreshes:
   a new access token and a new refresh token;
5. the person disconnects the app in Settings (the confirmation page's
   button): the last access token gets 401 and the refresh token is refused.

Usage: sdk_oauth.py MCP_BASE WEB_BASE LOGIN [streamable|sse]: over
streamable HTTP at /mcp (the default) or the legacy HTTP+SSE transport at
/sse, whose resource metadata the SDK discovers for /sse. Prints one line per
step; exits non-zero on the first thing that is not as it should be, saying
what. No token is printed.
"""

import asyncio
import contextlib
import html.parser
import sys
import time
from urllib.parse import parse_qs, urljoin, urlparse

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.sse import sse_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata


def check(condition, what):
    if not condition:
        raise SystemExit(f"sdk oauth: {what}")


class Memory:
    """Token storage that lives as long as the script."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


class Forms(html.parser.HTMLParser):
    """The forms of a page: each one's action and its inputs' names and values."""

    def __init__(self):
        super().__init__()
        self.forms = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action"), "fields": {}})
        elif tag in ("input", "button") and self.forms and attrs.get("name"):
            self.forms[-1]["fields"].setdefault(attrs["name"], []).append(attrs.get("value", ""))

    def handle_data(self, data):
        self.text.append(data)


def forms_of(page):
    parser = Forms()
    parser.feed(page)
    return parser.forms, " ".join(" ".join(parser.text).split())


@contextlib.asynccontextmanager
async def connect(mcp_base, provider, transport):
    """The SDK's client for `transport`, signing in through `provider`."""
    if transport == "sse":
        async with sse_client(f"{mcp_base}/sse", auth=provider) as streams:
            yield streams
        return
    http = create_mcp_http_client(auth=provider)
    async with http, streamable_http_client(f"{mcp_base}/mcp", http_client=http) as streams:
        yield streams


async def main(mcp_base, web_base, login, transport):
    person = {"X-Remote-User": login}
    browser = httpx2.AsyncClient(headers=person, follow_redirects=False)
    landed = {}

    async def redirect_handler(authorization_url):
        check(authorization_url.startswith(f"{web_base}/oauth/authorize?"), f"the SDK was sent to {authorization_url}")
        page = await browser.get(authorization_url)
        check(page.status_code == 200, f"the authorization page answered {page.status_code}: {page.text[:300]}")
        forms, text = forms_of(page.text)
        check("Hado test agent" in text and "127.0.0.1" in text, f"the page does not say who is asking: {text[:300]}")
        form = next((form for form in forms if form["action"] == "/oauth/authorize"), None)
        check(form is not None and "allow" in form["fields"].get("decision", []), "the page has no Allow button")
        answer = {name: values[0] for name, values in form["fields"].items() if name != "decision"}
        answer["decision"] = "allow"
        allowed = await browser.post(urljoin(web_base, form["action"]), data=answer)
        check(allowed.status_code in (302, 303), f"Allow answered {allowed.status_code}: {allowed.text[:300]}")
        landed["url"] = allowed.headers["location"]
        print("signed in: the authorization page named the app, and Allow sent the browser back with a code")

    async def callback_handler():
        query = parse_qs(urlparse(landed["url"]).query)
        check("code" in query, f"the redirect carries no code: {landed['url']}")
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0])

    storage = Memory()
    provider = OAuthClientProvider(
        server_url=f"{mcp_base}/sse" if transport == "sse" else f"{mcp_base}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Hado test agent",
            redirect_uris=["http://127.0.0.1:9/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with connect(mcp_base, provider, transport) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            check(len(tools.tools) == 12, f"{len(tools.tools)} tools listed")
            created = await session.call_tool("create_event", {"title": "Renew the visa", "due_at": "2026-12-20"})
            check(not created.is_error, f"create_event failed: {created.content}")
            profile = await session.call_tool("get_profile", {})
            check(profile.structured_content["login"] == login, f"the agent acts as {profile.structured_content}")
            print(f"tools: 12 listed; create_event and get_profile worked as {login}")

            first = storage.tokens
            check(first.refresh_token and first.expires_in and first.expires_in <= 3600, "the tokens are not short-lived with a refresh token")
            # As far as the SDK knows, the access token has run out: it refreshes.
            provider.context.token_expiry_time = time.time() - 1
            listed = await session.call_tool("list_events", {})
            check(not listed.is_error, f"list_events after the refresh failed: {listed.content}")
            second = storage.tokens
            check(second.access_token != first.access_token, "the refresh gave the same access token")
            check(second.refresh_token != first.refresh_token, "the refresh token did not rotate")
            print("refreshed: a new access token, and the refresh token rotated")

    # The person disconnects the app in Settings, through its confirmation page.
    settings = await browser.get(f"{web_base}/settings")
    forms, text = forms_of(settings.text)
    check("Hado test agent" in text, "Settings does not list the app")
    link = next((part.split('"')[0] for part in settings.text.split('href="')[1:] if part.startswith("/settings/apps/")), None)
    check(link is not None, "Settings has no Disconnect link")
    confirm = await browser.get(urljoin(web_base, link))
    check(confirm.status_code == 200 and "Hado test agent" in confirm.text, f"the confirmation page answered {confirm.status_code}")
    done = await browser.post(urljoin(web_base, link))
    check(done.status_code in (302, 303), f"Disconnect answered {done.status_code}")
    settings = await browser.get(f"{web_base}/settings")
    check("Hado test agent" not in forms_of(settings.text)[1], "the app is still listed after Disconnect")

    async with httpx2.AsyncClient() as raw:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_profile", "arguments": {}}}
        headers = {"Authorization": f"Bearer {second.access_token}", "Accept": "application/json, text/event-stream"}
        stopped = await raw.post(f"{mcp_base}/mcp", json=call, headers=headers)
        check(stopped.status_code == 401, f"the disconnected app's access token got {stopped.status_code}")
        check("resource_metadata=" in stopped.headers.get("www-authenticate", ""), "the 401 does not point at the resource metadata")
        refused = await raw.post(f"{mcp_base}/token", data={
            "grant_type": "refresh_token", "refresh_token": second.refresh_token, "client_id": storage.client.client_id,
        })
        check(refused.status_code == 400 and refused.json()["error"] == "invalid_grant", f"the refresh after Disconnect got {refused.status_code} {refused.text}")
    print("disconnected: the access token gets 401 and the refresh token invalid_grant")
    await browser.aclose()


if __name__ == "__main__":
    transport = sys.argv[4] if len(sys.argv) > 4 else "streamable"
    check(transport in ("streamable", "sse"), f"unknown transport {transport}")
    asyncio.run(main(sys.argv[1].rstrip("/"), sys.argv[2].rstrip("/"), sys.argv[3], transport))
