"""Headless Chromium for the report tests: Debian's chromium through Playwright, offline.

The report is checked as a browser renders it: sizes, positions, what was requested.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # Without these Chromium phones home at start, and this closed network refuses it.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Seen:
    """What the page did while it was open."""

    requests: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@contextmanager
def open_page(
    page_file: Path, profile: Path, *, width: int = 1280, height: int = 900
) -> Iterator[tuple[Page, Seen]]:
    """``page_file`` loaded in a fresh Chromium profile; every request and error recorded."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"Debian's chromium is not installed at {CHROMIUM}: run `make test`, which installs "
            "it (Makefile target sysdeps), or `apt-get install chromium`"
        )
    from playwright.sync_api import sync_playwright

    seen = Seen()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": width, "height": height},
        )
        try:
            page = context.new_page()
            page.on("request", lambda r: seen.requests.append(r.url))
            page.on("console",
                    lambda m: seen.problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: seen.problems.append(str(e)))
            page.goto(page_file.as_uri(), wait_until="load")
            yield page, seen
        finally:
            context.close()


def png_pixels_vary(png: bytes) -> tuple[int, int, int]:
    """Width, height and the number of distinct byte values in the decoded image data."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    pos, idat = 8, b""
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind = png[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += png[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))
