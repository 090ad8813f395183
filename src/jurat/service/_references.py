"""Reference material a reviewer's words must not carry into a published receipt.

Receipts are contributor-visible (docs/receipt-format.md §11), and an adjudication's
rationale is published in one. A reviewer reads the hidden tests to decide, and may quote
them without meaning to; the service refuses a rationale that contains any substantive
line of the campaign's test files. Lines that say nothing hidden (imports, ``def test_…``
headers, whose names are already in the evidence as test ids, and short lines) are not
counted, so an honest rationale is not refused for mentioning a test by name.
"""

from __future__ import annotations

from pathlib import Path

from jurat.models import Campaign

__all__ = ["quotes_reference", "reference_lines"]

#: Shorter lines are too generic to count as quoting (``return x``, ``pass``).
_MIN_CHARS = 12
_GENERIC = ("import ", "from ", "def test", "async def test", "class Test", "@pytest")


def reference_lines(campaign: Campaign) -> tuple[str, ...]:
    """The substantive lines of the campaign's ``[checks.python] tests`` file, if any."""
    python = campaign.policy.python
    if python is None or not python.tests:
        return ()
    root = Path(campaign.base_dir).resolve()
    path = (root / python.tests).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        return ()
    lines = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        text = line.strip()
        if len(text) >= _MIN_CHARS and not text.startswith(_GENERIC) and not text.startswith("#"):
            lines.append(text)
    return tuple(lines)


def quotes_reference(text: str, references: tuple[str, ...]) -> bool:
    """Whether ``text`` contains one of ``references`` (whitespace runs normalised)."""
    flat = " ".join(text.split())
    return any(" ".join(line.split()) in flat for line in references)
