"""Text the judged party wrote, or could steer, in a type that is not ``str``.

Threat model. A candidate program, a contributor's API fields, a judge's free-text answer
and the campaign's hidden tests are read by jurat but must not be *written* by it into
a trusted output: a signed receipt, the public board, a contributor-facing response, a
judge prompt outside its delimited data blocks, or the signer's decision. The rule
(docs/checks.md, "What crosses into a trusted output") is that such text leaves only as

(a) a delimited data block of a prompt, with a fresh nonce per call (``delimited``), and
    never for reference material (hidden tests, gold answers), which no judge may read;
(b) its digest and length (``sha256``, ``chars``), or counts, enums and range-checked
    numbers computed from it by trusted code.

One deliberate exit for reference material: an operator's reference answer (a criteria
row's ``target``) goes to the operator's own judges, whom the campaign's
``allowed_destinations`` authorise, through ``reference_block`` and nothing else. Seed 000
("Keep benchmark references out of contributor-visible prompts, logs, and assistance
responses") keeps references from the contributor, not from the judge that compares with
them; ``delimited`` still refuses them, so text from a contributor, a candidate or a judge
can never take this way out, nor can a reference slip into a block meant for those.

``Untrusted`` is deliberately not a ``str`` subclass: every trusted record types its
text fields as ``str``, so passing an ``Untrusted`` there is a mypy error, and
formatting one (``str()``, an f-string, ``%``) raises ``TaintError`` at run time. The
operator's own terminal may show the text, marked with who wrote it (``for_operator``).
Serialised by pydantic, it becomes its digest and length, never its text.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from jurat.errors import JuratError

__all__ = ["Origin", "TaintError", "Untrusted", "data_block"]

Origin = Literal["candidate", "reference", "judge", "contributor"]
"""Who wrote the text: the candidate program or its process, the campaign's hidden tests
and gold answers (secret from the contributor), a judge's free text, or an API caller."""

_MARK: dict[str, str] = {
    "candidate": "written by the candidate",
    "reference": "reference material: hidden from contributors",
    "judge": "written by a judge",
    "contributor": "written by the contributor",
}


def data_block(label: str, content: str, nonce: str) -> str:
    """One prompt data block: ``content`` between this call's delimiters (the one format,
    used by the prompt renderer and ``Untrusted.delimited``)."""
    return f"<<<{label} {nonce}>>>\n{content}\n<<<END {label} {nonce}>>>"


class TaintError(JuratError):
    """Untrusted text was about to be formatted into a trusted output."""


class Untrusted:
    """Text of a known untrusted ``origin``; only digests, lengths and data blocks leave."""

    __slots__ = ("_origin", "_text")
    _origin: Origin
    _text: str

    def __init__(self, text: str, origin: Origin = "candidate") -> None:
        object.__setattr__(self, "_text", str(text))
        object.__setattr__(self, "_origin", origin)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Untrusted is immutable")

    def __reduce__(self) -> tuple[type[Untrusted], tuple[str, Origin]]:
        # Workers hand job results to the parent by pickle; the text stays wrapped.
        return (Untrusted, (self._text, self._origin))

    @property
    def origin(self) -> Origin:
        """Who wrote the text."""
        return self._origin

    @property
    def sha256(self) -> str:
        """``sha256:<hex>`` of the text's UTF-8 bytes (surrogates escaped)."""
        data = self._text.encode("utf-8", "surrogatepass")
        return "sha256:" + hashlib.sha256(data).hexdigest()

    @property
    def chars(self) -> int:
        """Length of the text in characters."""
        return len(self._text)

    def __bool__(self) -> bool:
        return bool(self._text)

    def contains(self, needle: str) -> bool:
        """Whether the text contains ``needle`` (for delimiter nonces; reveals nothing)."""
        return needle in self._text

    def delimited(self, label: str, nonce: str, *, limit: int | None = None) -> str:
        """The text as one prompt data block between this call's delimiters (way out (a)).

        Reference material never goes to a judge, so it is refused here.
        """
        if self._origin == "reference":
            raise TaintError("reference material (hidden tests, gold answers) is never prompted")
        text = self._text if limit is None else self._text[:limit]
        if nonce in text:
            raise TaintError("the delimiter nonce occurs in the data (draw another)")
        return data_block(label, text, nonce)

    def reference_block(self, label: str, nonce: str, *, limit: int | None = None) -> str:
        """Operator reference material as one prompt data block for the operator's judge
        (the module's one exit for it); any other origin is refused: it has ``delimited``."""
        if self._origin != "reference":
            raise TaintError(f"{_MARK[self._origin]}: not reference material (use delimited)")
        text = self._text if limit is None else self._text[:limit]
        if nonce in text:
            raise TaintError("the delimiter nonce occurs in the data (draw another)")
        return data_block(label, text, nonce)

    def for_operator(self) -> str:
        """The text for the operator's own terminal, marked with who wrote it."""
        return f"[{_MARK[self._origin]}]\n{self._text}"

    def reveal(self) -> str:
        """The raw text, for trusted code that parses or digests it (never to output)."""
        return self._text

    def summary(self) -> dict[str, Any]:
        """What a trusted record may carry: origin, digest and length."""
        return {"untrusted": self._origin, "sha256": self.sha256, "chars": self.chars}

    def __str__(self) -> str:
        raise TaintError(f"untrusted text ({_MARK[self._origin]}) cannot be formatted as text")

    def __format__(self, spec: str) -> str:
        raise TaintError(f"untrusted text ({_MARK[self._origin]}) cannot be formatted as text")

    def __repr__(self) -> str:
        return f"<Untrusted {self._origin} {self.chars} chars {self.sha256[:19]}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Untrusted):
            return NotImplemented
        return (self._origin, self._text) == (other._origin, other._text)

    def __hash__(self) -> int:
        return hash((Untrusted, self._origin, self._text))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[Any], handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        # Validation accepts only an Untrusted (a str must be wrapped, with its origin, by
        # the code that read it); serialisation writes the summary, never the text.
        return core_schema.is_instance_schema(
            cls,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda value: value.summary()
            ),
        )
