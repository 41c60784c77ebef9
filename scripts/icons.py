"""Draws the web app's icons (gateway-http/static/icons/*.png): a check mark
on Hado's accent colour, at 192 and 512 pixels, and a maskable one whose
mark stays inside the safe zone (the middle 80% circle) so that any mask a
launcher applies leaves it whole. Only the standard library: the PNGs are
written by hand (RFC 2083), each pixel sampled 4×4 for smooth edges.

Run from the repository's root: python3 scripts/icons.py
"""

import struct
import zlib

ACCENT = (0x2F, 0x5B, 0xEA)
WHITE = (0xFF, 0xFF, 0xFF)
# The check mark as a thick polyline, in a unit square.
MARK = [(0.27, 0.53), (0.43, 0.69), (0.74, 0.35)]
THICKNESS = 0.095


def distance_to_segment(x, y, a, b):
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
    px, py = ax + t * dx, ay + t * dy
    return ((x - px) ** 2 + (y - py) ** 2) ** 0.5


def inside_rounded_square(x, y, radius):
    cx, cy = min(max(x, radius), 1 - radius), min(max(y, radius), 1 - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius * radius


def colour_at(x, y, maskable):
    # A maskable icon fills the whole square, its mark scaled to the safe zone.
    if maskable:
        x, y = 0.5 + (x - 0.5) / 0.8, 0.5 + (y - 0.5) / 0.8
    elif not inside_rounded_square(x, y, 0.22):
        return None
    on_mark = any(
        distance_to_segment(x, y, a, b) <= THICKNESS / 2 for a, b in zip(MARK, MARK[1:])
    )
    return WHITE if on_mark else ACCENT


def draw(size, maskable):
    rows = []
    samples = 4
    for row in range(size):
        line = bytearray([0])
        for column in range(size):
            totals, covered = [0, 0, 0], 0
            for sy in range(samples):
                for sx in range(samples):
                    x = (column + (sx + 0.5) / samples) / size
                    y = (row + (sy + 0.5) / samples) / size
                    colour = colour_at(x, y, maskable)
                    if colour is not None:
                        covered += 1
                        totals = [t + c for t, c in zip(totals, colour)]
            alpha = round(255 * covered / samples**2)
            rgb = [round(t / covered) if covered else 0 for t in totals]
            line.extend(rgb + [alpha])
        rows.append(bytes(line))
    return png(size, b"".join(rows))


def png(size, raw):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


for name, size, maskable in [
    ("icon-192.png", 192, False),
    ("icon-512.png", 512, False),
    ("maskable-512.png", 512, True),
]:
    with open(f"gateway-http/static/icons/{name}", "wb") as file:
        file.write(draw(size, maskable))
