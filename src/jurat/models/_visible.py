"""Whether a text says anything a reader can see: the rule ``[rubric] require_explanation``
holds a contributor's explanation to, at intake and at submission (issue 36, item 6).

A required explanation is the contributor's account of the work (seed 000, code pipeline
step 6). ``str.strip()`` removes only whitespace, so an explanation of zero-width spaces,
joiners, bidi controls, combining marks alone, Hangul fillers or the braille blank passed
it while showing nothing at all. A text counts only if it has at least one character that
is drawn: a letter, number, punctuation mark or symbol (Unicode categories L, N, P, S),
and not one of the few of those categories that are drawn blank.
"""

from __future__ import annotations

import unicodedata

__all__ = ["BLANK_CHARACTERS", "visible"]

#: Characters of the categories ``visible`` counts that are drawn blank: the Hangul
#: fillers, letters (Lo) that Unicode lists as default-ignorable, and the braille blank
#: (So). Every other default-ignorable character is of a category ``visible`` skips (Cf,
#: Mn: zero-width spaces and joiners, bidi marks, variation selectors, tags).
BLANK_CHARACTERS = frozenset({
    "\u115f", "\u1160", "\u3164", "\uffa0",  # Hangul choseong / jungseong / fillers
    "\u2800",  # braille pattern blank
})


def visible(text: str) -> bool:
    """Whether ``text`` has at least one character a reader would see drawn."""
    return any(unicodedata.category(ch)[0] in "LNPS" and ch not in BLANK_CHARACTERS
               for ch in text)
