"""Prompt ids that derive from a seed's prompt: jurat's own id, and what it derives from.

Seed 002 §4: "JUDGE_PROMPT_ID = 'invariance-checker/judge/v1' — audit trail invariant; a
caller's custom prompt declares its own promptId." jurat's equivalence prompt keeps the
seed's wording but puts each answer between per-call delimiters, so it is not the seed's
prompt and does not carry the seed's id: it is ``jurat/equivalence@1``, and a receipt pins
the seed's id beside it as what it derives from (``JudgePart.prompt_derived_from``).

Here rather than in judges/ because both the templates (judges/_prompts.py) and the
receipt builder (receipts/_statement.py) read it, and receipts do not import judges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "EQUIVALENCE_TEMPLATE",
    "PROMPT_DERIVED_FROM",
    "RETIRED_EQUIVALENCE_IDS",
    "SEED_EQUIVALENCE_PROMPT_ID",
]

#: Seed 002 §4's ``JUDGE_PROMPT_ID``: the seed's own equivalence prompt.
SEED_EQUIVALENCE_PROMPT_ID: Final = "invariance-checker/judge/v1"
#: jurat's equivalence prompt (template id, version): the seed's wording, each answer between
#: per-call delimiters. Its text is, byte for byte, what ``invariance-checker/judge/v1@2`` sent.
EQUIVALENCE_TEMPLATE: Final = ("jurat/equivalence", "1")
#: The ids earlier versions of jurat recorded for its equivalence prompt, under the seed's
#: name: ``@1`` the seed's text verbatim, ``@2`` the text of ``jurat/equivalence@1``.
#: Receipts that name them keep verifying and replaying: nothing looks a prompt id up.
RETIRED_EQUIVALENCE_IDS: Final = (
    f"{SEED_EQUIVALENCE_PROMPT_ID}@1", f"{SEED_EQUIVALENCE_PROMPT_ID}@2")
#: jurat's prompt id@version -> the seed prompt id it derives from.
PROMPT_DERIVED_FROM: Final[Mapping[str, str]] = {
    "@".join(EQUIVALENCE_TEMPLATE): SEED_EQUIVALENCE_PROMPT_ID,
}
