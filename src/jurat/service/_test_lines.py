"""The hidden-test lines a reviewer's words must not carry into a published receipt.

Receipts are contributor-visible (docs/receipt-format.md §11), and an adjudication's
rationale is published in one. A reviewer reads the hidden tests to decide, and may quote
them without meaning to; the service refuses a rationale that contains any substantive
line of the campaign's test files. Lines that say nothing hidden (imports, ``def test_…``
headers, whose names are already in the evidence as test ids, and short lines) are not
counted, so an honest rationale is not refused for mentioning a test by name.

The file is read as intake reads it, through the campaign's confined, capped reader
(``campaign/_files.py``, ``read_tests``): a campaign directory may come from a stranger, so a
tests file that leads outside it or is larger than ``[intake] max_tests_bytes`` refuses to
serve the campaign rather than being read. (The grounding references of a campaign are
another thing: ``runner/_reference_evidence.py``.)
"""

from __future__ import annotations

from jurat.campaign import read_tests
from jurat.models import Campaign

__all__ = ["quotes_reference", "reference_lines"]

#: Shorter lines are too generic to count as quoting (``return x``, ``pass``).
_MIN_CHARS = 12
_GENERIC = ("import ", "from ", "def test", "async def test", "class Test", "@pytest")


def reference_lines(campaign: Campaign) -> tuple[str, ...]:
    """The substantive lines of the campaign's ``[checks.python] tests`` file, if any.
    Raises CampaignError (``checks.python.tests``) for a file intake would refuse."""
    python = campaign.policy.python
    if python is None or not campaign.tests_path:
        return ()
    lines = []
    for line in read_tests(campaign, campaign.tests_path).splitlines():
        text = line.strip()
        if len(text) >= _MIN_CHARS and not text.startswith(_GENERIC) and not text.startswith("#"):
            lines.append(text)
    return tuple(lines)


def quotes_reference(text: str, references: tuple[str, ...]) -> bool:
    """Whether ``text`` contains one of ``references`` (whitespace runs normalised)."""
    flat = " ".join(text.split())
    return any(" ".join(line.split()) in flat for line in references)
