#!/usr/bin/env python3
"""Draws the page's app icons (webroot/icons/*.png) with the standard library only: a white
speech bubble with a check mark on the page's accent colour, full bleed with the drawing inside the
centre 80% (a "maskable" icon: a phone may cut it to a circle). icon.svg is the same drawing.

    python3 scripts/icons.py
"""
import math
import struct
import zlib
from pathlib import Path

ACCENT = (0x24, 0x57, 0xD6)  # style.css --accent
WHITE = (0xFF, 0xFF, 0xFF)
OUT = Path(__file__).resolve().parent.parent / "webroot" / "icons"


def in_bubble(x, y):
    left, top, right, bottom, r = 0.22, 0.24, 0.78, 0.66, 0.10
    cx = min(max(x, left + r), right - r)
    cy = min(max(y, top + r), bottom - r)
    if (x - cx) ** 2 + (y - cy) ** 2 <= r * r:
        return True
    # the tail: a triangle under the bubble's left side
    ax, ay, bx, by, qx, qy = 0.32, 0.60, 0.32, 0.78, 0.48, 0.60
    d = (by - qy) * (ax - qx) + (qx - bx) * (ay - qy)
    s = ((by - qy) * (x - qx) + (qx - bx) * (y - qy)) / d
    t = ((qy - ay) * (x - qx) + (ax - qx) * (y - qy)) / d
    return s >= 0 and t >= 0 and s + t <= 1


def near_segment(x, y, a, b, w):
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(x - ax - t * dx, y - ay - t * dy) <= w


CHECK = [(0.36, 0.45), (0.455, 0.545), (0.64, 0.35)]


def colour(x, y):
    if not in_bubble(x, y):
        return ACCENT
    if any(near_segment(x, y, CHECK[i], CHECK[i + 1], 0.036) for i in range(len(CHECK) - 1)):
        return ACCENT
    return WHITE


def png(size, samples=4):
    rows = bytearray()
    for j in range(size):
        rows.append(0)  # filter: none
        for i in range(size):
            acc = [0, 0, 0]
            for sj in range(samples):
                for si in range(samples):
                    c = colour((i + (si + 0.5) / samples) / size, (j + (sj + 0.5) / samples) / size)
                    acc = [a + b for a, b in zip(acc, c)]
            rows.extend(round(a / samples ** 2) for a in acc)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
            + chunk(b"IEND", b""))


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for name, size in [("icon-192.png", 192), ("icon-512.png", 512), ("apple-touch-icon.png", 180)]:
        (OUT / name).write_bytes(png(size))
        print(OUT / name)
