"""Drives gateway-mcp with the official Python MCP SDK over streamable HTTP:
lists the tools, then create -> list -> ack -> done -> archive; then checks
that the SDK shows Hado's own words for arguments of the wrong shape, an
unknown token (401) and the tool-call limit (429).

Usage: sdk_scenario.py BASE_URL AGENT_TOKEN [streamable|sse]: streamable
HTTP at BASE_URL/mcp (the default), or the legacy HTTP+SSE transport at
BASE_URL/sse, with the same tool scenario. The error checks are
streamable HTTP's (over SSE, replies travel on the stream, not the POST);
the gateway's limit must allow the scenario's eight tool calls and refuse a
few more. Exits non-zero on the first thing that is not as it should be,
saying what.
"""

import asyncio
import contextlib
import json
import sys

from mcp import ClientSession, MCPError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

EXPECTED_TOOLS = {
    "list_events", "get_event", "create_event", "update_event", "delete_event",
    "mark_done", "mark_ack", "reopen_event", "restore_reminders", "get_profile", "update_profile",
    "show_inbox",
}


def check(condition, what):
    if not condition:
        raise SystemExit(f"sdk scenario: {what}")


def messages(error):
    """The messages of an exception and of every exception grouped in it."""
    if isinstance(error, BaseExceptionGroup):
        return [message for inner in error.exceptions for message in messages(inner)]
    return [error.message if isinstance(error, MCPError) else repr(error)]


def structured(result, tool):
    check(not result.is_error, f"{tool} failed: {result.content}")
    check(result.structured_content is not None, f"{tool} returned no structured content")
    text = json.loads(result.content[0].text)
    check(text == result.structured_content, f"{tool}: the text and the structured content differ")
    return result.structured_content


@contextlib.asynccontextmanager
async def connect(base, token, transport):
    """The (read, write) streams of a session over `transport`."""
    headers = {"Authorization": f"Bearer {token}"}
    if transport == "sse":
        async with sse_client(f"{base}/sse", headers=headers) as (read, write):
            yield read, write
    else:
        http = create_mcp_http_client(headers=headers)
        async with http, streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, *_):
            yield read, write


async def scenario(base, token, transport):
    async with connect(base, token, transport) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            check(set(tools) == EXPECTED_TOOLS, f"tools are {sorted(tools)}")
            for name, tool in tools.items():
                check(tool.output_schema is not None, f"{name} has no output schema")
                for argument, schema in tool.input_schema.get("properties", {}).items():
                    check(schema.get("description"), f"{name}.{argument} has no description")
            check(tools["get_event"].annotations.read_only_hint is True, "get_event is not read-only")
            check(tools["delete_event"].annotations.destructive_hint is True, "delete_event is not destructive")
            # The in-chat view: show_inbox names its ui:// resource, which reads as one HTML document.
            ui = (tools["show_inbox"].meta or {}).get("ui", {})
            check(ui.get("resourceUri") == "ui://hado/inbox", f"show_inbox's _meta.ui is {ui}")
            view = await session.read_resource("ui://hado/inbox")
            check(len(view.contents) == 1 and view.contents[0].mime_type == "text/html;profile=mcp-app", f"the view reads as {view.contents}")

            created = structured(await session.call_tool("create_event", {"title": "Renew passport", "due_at": "2027-03-01"}), "create_event")
            check(created["editable"] is True and created["source"] == "manual", f"created {created}")
            event_id = created["id"]

            listed = structured(await session.call_tool("list_events", {}), "list_events")
            check([event["id"] for event in listed["events"]] == [event_id], f"listed {listed}")

            acked = structured(await session.call_tool("mark_ack", {"id": event_id}), "mark_ack")
            check(acked["state"] != "done" and "quiet_until" in acked, f"acked {acked}")

            done = structured(await session.call_tool("mark_done", {"id": event_id}), "mark_done")
            check(done["state"] == "done" and done.get("closed_as"), f"done {done}")

            active = structured(await session.call_tool("list_events", {}), "list_events")
            check(active["events"] == [], f"still active: {active}")
            archive = structured(await session.call_tool("list_events", {"archive": True}), "list_events")
            check([event["id"] for event in archive["events"]] == [event_id], f"archive {archive}")

            missing = await session.call_tool("get_event", {"id": event_id + 1000})
            check(missing.is_error and "not found" in missing.content[0].text, f"a missing id gave {missing}")

            # Arguments of the wrong shape come back as a tool error the model can act on.
            misfit = await session.call_tool("list_events", {"state": "done"})
            words = misfit.content[0].text if misfit.content else ""
            check(misfit.is_error and "`state`" in words and "`scheduled`" in words, f"a wrong state gave {misfit}")

            if transport == "sse":
                print(f"sdk scenario over sse: {len(tools)} tools listed; create, list, ack, done and archive all as expected")
                return

            # Past the tool-call limit, the SDK shows Hado's 429 message.
            limited = None
            for _ in range(10):
                try:
                    await session.call_tool("get_profile", {})
                except MCPError as error:
                    limited = error.message
                    break
            check(limited is not None and limited.startswith("too many tool calls") and "try again in" in limited, f"the limit gave {limited!r}")

    # An unknown token: the SDK shows Hado's 401 message.
    stranger = create_mcp_http_client(headers={"Authorization": "Bearer hado_agent_" + "0" * 64})
    refused = None
    try:
        async with stranger, streamable_http_client(f"{base}/mcp", http_client=stranger) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
    except BaseException as error:  # the SDK may wrap it in exception groups
        refused = " | ".join(messages(error))
    check(refused is not None and "unknown agent token" in refused, f"an unknown token gave {refused!r}")
    print(f"sdk scenario over streamable: {len(tools)} tools listed; create, list, ack, done and archive all as expected; Hado's errors reach the SDK")


if __name__ == "__main__":
    asyncio.run(scenario(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "streamable"))
