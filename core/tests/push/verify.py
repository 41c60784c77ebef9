"""Stands in for a browser's side of Web Push, with implementations that owe
nothing to Hado's: PyPI's `http-ece` decrypts (RFC 8188 and 8291), and
`cryptography` checks the VAPID token (RFC 8292) by hand.

`verify.py keys` prints a new subscription's keys as a browser makes them:
{"private_key", "p256dh", "auth"}, base64url.

`verify.py` reads on stdin {"vapid_public_key", "subject", "messages": [{
"private_key", "auth", "origin", "headers", "body_hex"}]} and
prints the decrypted JSON of each message; it exits non-zero, naming the
message, on the first that does not decrypt or verify.
"""

import base64
import json
import re
import sys
import time

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def new_keys():
    private = ec.generate_private_key(ec.SECP256R1())
    point = private.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    scalar = private.private_numbers().private_value.to_bytes(32, "big")
    return {
        "private_key": b64encode(scalar),
        "p256dh": b64encode(point),
        "auth": b64encode(__import__("os").urandom(16)),
    }


def check_vapid(header, vapid_public_key, subject, origin, index):
    found = re.fullmatch(r"vapid t=([^,]+), k=(\S+)", header)
    if not found:
        raise SystemExit(f"message {index}: Authorization {header!r} is not vapid t=…, k=…")
    token, key = found.groups()
    if key != vapid_public_key:
        raise SystemExit(f"message {index}: k= is not the key GET /me/push/key gave")
    head, claims, signature = token.split(".")
    if json.loads(b64decode(head)).get("alg") != "ES256":
        raise SystemExit(f"message {index}: the token is not ES256")
    raw = b64decode(signature)
    if len(raw) != 64:
        raise SystemExit(f"message {index}: an ES256 signature is 64 bytes, not {len(raw)}")
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64decode(key))
    try:
        public.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise SystemExit(f"message {index}: the VAPID signature does not verify")
    claims = json.loads(b64decode(claims))
    if claims.get("aud") != origin:
        raise SystemExit(f"message {index}: aud {claims.get('aud')!r} is not {origin!r}")
    if claims.get("sub") != subject:
        raise SystemExit(f"message {index}: sub {claims.get('sub')!r} is not {subject!r}")
    ahead = claims.get("exp", 0) - time.time()
    if not 0 < ahead <= 12 * 3600:
        raise SystemExit(f"message {index}: exp is {ahead:.0f} s ahead, not within 12 hours")


def check_headers(headers, index):
    if headers.get("content-encoding") != "aes128gcm":
        raise SystemExit(f"message {index}: Content-Encoding is not aes128gcm")
    if not re.fullmatch(r"[0-9]+", headers.get("ttl", "")):
        raise SystemExit(f"message {index}: TTL {headers.get('ttl')!r} is not seconds")
    if headers.get("urgency") not in ("very-low", "low", "normal", "high"):
        raise SystemExit(f"message {index}: Urgency {headers.get('urgency')!r} is not RFC 8030's")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", headers.get("topic", "")):
        raise SystemExit(f"message {index}: Topic {headers.get('topic')!r} is not RFC 8030's")


def main():
    if sys.argv[1:] == ["keys"]:
        print(json.dumps(new_keys()))
        return
    given = json.load(sys.stdin)
    decrypted = []
    for index, message in enumerate(given["messages"]):
        headers = {name.lower(): value for name, value in message["headers"].items()}
        check_headers(headers, index)
        check_vapid(
            headers.get("authorization", ""),
            given["vapid_public_key"],
            given["subject"],
            message["origin"],
            index,
        )
        scalar = int.from_bytes(b64decode(message["private_key"]), "big")
        private = ec.derive_private_key(scalar, ec.SECP256R1())
        body = bytes.fromhex(message["body_hex"])
        try:
            plain = http_ece.decrypt(
                body,
                private_key=private,
                auth_secret=b64decode(message["auth"]),
                version="aes128gcm",
            )
        except Exception as error:
            raise SystemExit(f"message {index} does not decrypt: {error}")
        if len(plain) >= 3 * 1024:
            raise SystemExit(f"message {index}: {len(plain)} bytes, not under 3 KB")
        decrypted.append(json.loads(plain))
    print(json.dumps(decrypted))


main()
