"""What jurat records of what an endpoint says about its own answer (issue 36, item 3).

Threat model. A judge's endpoint (and the ``[subject]``'s, and the claim extractor's) is
one the campaign allowed, not one jurat trusts (judges/_http.py). Beside its answer it
reports the model that served the call, a system fingerprint, a finish reason and how many
tokens it used, and jurat records them: in each vote and execution, so in the signed
receipt and on the public board. An endpoint that chooses those strings could put markup
on the board, an "OPERATOR NOTE" before whoever reads a receipt, or megabytes that leave
the run with no receipt at all; one that chooses the counts could drive a ``[budget]``
spend down, or past what RFC 8785 serialises exactly (2^53) so that nothing can be signed.

So nothing an endpoint echoes is recorded as sent unless it has a shape fixed here:

- a string is recorded as sent only when it is a **token**: 1 to 128 characters of
  ``[A-Za-z0-9._:/@+-]`` (every model id, fingerprint and finish reason the providers
  document is one: ``gpt-4o-2024-08-06``, ``meta-llama/Llama-3.1-8B-Instruct``,
  ``llama3.1:8b``, ``/models/q4_k_m.gguf``, ``fp_44709d6fcb``, ``end_turn``); anything
  else is recorded as ``sha256:<hex>:<chars>``, the SHA-256 of its UTF-8 bytes and its
  length in characters (``echoed``). The digest form is a token itself, so the rule is
  idempotent: a value recorded once (a replay file, a ledger entry) reads back unchanged.
  One string, not a string and a length field: every record that holds an echoed value
  (``Vote``, the execution, the claim extraction, the replay record) keeps its schema, so
  receipts written before still parse and verify, and no record can drop the length;
- a token count is a count only when it is an integer from 0 to ``MAX_TOKEN_COUNT``
  (``token_count``); the judge adapters turn any other into the error kind
  ``bad_usage`` (judges/_http.py).
"""

from __future__ import annotations

import re

from jurat.models._taint import Untrusted

__all__ = ["ECHO_TOKEN", "MAX_ECHO_CHARS", "MAX_TOKEN_COUNT", "echoed", "token_count"]

#: The longest echoed string recorded as sent (the longest documented model ids are under
#: 80 characters: a provider's path-like ids, a local server's model file).
MAX_ECHO_CHARS = 128
#: What an echoed string recorded as sent may look like.
ECHO_TOKEN = re.compile(rf"[A-Za-z0-9._:/@+-]{{1,{MAX_ECHO_CHARS}}}")

#: The largest token count jurat takes from an endpoint: a thousand times the largest
#: context window offered today (about 10^6 to 10^7 tokens), so no honest report comes
#: near it, and small enough that the counts of a million samples still add up exactly
#: under RFC 8785's 2^53 (~9 x 10^15), the largest integer a receipt can hold.
MAX_TOKEN_COUNT = 10**9


def echoed(value: str | None) -> str | None:
    """``value`` as jurat records it: itself when it is a token (``ECHO_TOKEN``), else
    ``sha256:<hex>:<chars>``; None stays None (the endpoint said nothing)."""
    if value is None or ECHO_TOKEN.fullmatch(value):
        return value
    text = Untrusted(value, "judge")  # the one digest and length of untrusted text
    return f"{text.sha256}:{text.chars}"


def token_count(value: object) -> int | None:
    """``value`` as a token count: an integer (not a boolean) from 0 to
    ``MAX_TOKEN_COUNT``, else None."""
    if type(value) is int and 0 <= value <= MAX_TOKEN_COUNT:
        return value
    return None
