"""Verifies webhook deliveries with the Standard Webhooks reference library
(`pip install standardwebhooks`).

Reads a JSON list of {"secret", "headers", "body"} on stdin; exits non-zero
on the first delivery that does not verify. The test core runs on a manual
clock, so the library's freshness check is pinned to each message's own
timestamp; the signature check is the library's own.
"""

import json
import sys
from datetime import datetime, timezone

import standardwebhooks.webhooks as webhooks


def pinned_clock(timestamp):
    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.fromtimestamp(timestamp, tz=timezone.utc)

    return Clock


deliveries = json.load(sys.stdin)
for index, delivery in enumerate(deliveries):
    webhooks.datetime = pinned_clock(int(delivery["headers"]["webhook-timestamp"]))
    try:
        webhooks.Webhook(delivery["secret"]).verify(delivery["body"], delivery["headers"])
    except webhooks.WebhookVerificationError as error:
        raise SystemExit(f"delivery {index} does not verify: {error}")
    tampered = delivery["body"].replace("}", " }", 1)
    try:
        webhooks.Webhook(delivery["secret"]).verify(tampered, delivery["headers"])
        raise SystemExit(f"delivery {index}: a changed body verified too")
    except webhooks.WebhookVerificationError:
        pass
print(f"verified {len(deliveries)} deliveries")
