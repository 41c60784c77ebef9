"""A real SMTP server on loopback for the email tests (aiosmtpd).

Listens on 127.0.0.1 at the port it picks, prints that port as its first
line, then one JSON line per message it accepts: the envelope and the
message parsed by Python's email package (headers, decoded, and as they
were written, folding included; each part's type and text). A recipient whose local part starts with "refused" is refused with
550, and one starting with "busy" with 451, as a mail server does.
"""

import asyncio
import email
import email.policy
import json
import socket
import sys

from aiosmtpd.controller import Controller


def parsed(raw):
    message = email.message_from_bytes(raw, policy=email.policy.default)
    parts = []
    for part in message.walk():
        if part.is_multipart():
            parts.append({"type": part.get_content_type(), "text": None})
        else:
            parts.append({"type": part.get_content_type(), "text": part.get_content()})
    headers = {}
    for name, value in message.items():
        headers.setdefault(name.lower(), []).append(str(value))
    raw_headers = {}
    for name, value in message.raw_items():
        raw_headers.setdefault(name.lower(), []).append(value)
    return {"headers": headers, "raw_headers": raw_headers, "parts": parts}


class Sink:
    async def handle_RCPT(self, server, session, envelope, address, options):
        local = address.split("@", 1)[0]
        if local.startswith("refused"):
            return "550 5.1.1 no such mailbox here"
        if local.startswith("busy"):
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        line = {"from": envelope.mail_from, "to": envelope.rcpt_tos, **parsed(envelope.content)}
        print(json.dumps(line), flush=True)
        return "250 accepted"


def free_port():
    # aiosmtpd's controller connects to its own port once started, so it
    # needs a real one rather than 0.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def main():
    port = free_port()
    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    print(port, flush=True)
    # Runs until the test ends it (stdin closes).
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    controller.stop()


asyncio.run(main())
