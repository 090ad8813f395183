"""The operator's debug record of one judge sample: what the judge sent, capped, and why
the answer was refused (issue 28, "Operator debug record").

It goes in the ledger beside the vote (the ``debug`` member of a ``sample_recorded``
payload), never in the vote itself: a vote is signed into a receipt, and the raw answer is
text the judged party can steer (docs/checks.md, "What crosses into a trusted output").
The ledger file is the operator's; ``jurat sample`` and ``jurat report --operator`` show
it, marked as written by a judge; jurat's own messages (an unusable envelope, an answer cut
at the token limit) are not marked, since they quote nothing a judge sent.
"""

from __future__ import annotations

from pydantic import Field, JsonValue

from jurat.errors import JudgeOutputError
from jurat.judges._protocol import Prompt, RawResponse
from jurat.models._base import Frozen

__all__ = ["OWN_MESSAGE_KINDS", "RAW_CAP", "SampleDebug", "SampleFailure", "SampleRequest",
           "capped"]

#: Error kinds whose validator message is jurat's own fixed wording, quoting no judge text
#: (judges/_validate.py ``interpret``, ``validate_answer``'s size check; judges/_http.py).
OWN_MESSAGE_KINDS = frozenset({"truncated", "empty_response", "oversized"})

#: The most bytes of one answer (and of each prompt part) the ledger keeps: a judge answer
#: is a few hundred bytes, and the cap keeps a runaway answer from bloating the ledger.
RAW_CAP = 16 * 1024


def capped(text: str, limit: int = RAW_CAP) -> tuple[str, int, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes (never inside a character), its full
    size in bytes, and whether it was cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, len(data), False
    return data[:limit].decode("utf-8", "ignore"), len(data), True


class SampleFailure(Frozen):
    """Why a sample's answer was refused: the validator's own finding."""

    kind: str
    """The vote's error kind (``schema_violation``, ``malformed_json``, ``truncated``...)."""
    path: str | None = None
    """JSON path of the failing member (``/``-joined, ``(root)``: the whole answer), when
    the failed check has one."""
    message: str
    """The validator's message (it may quote the answer: judge-written text)."""
    by_jurat: bool = False
    """Whether ``message`` is jurat's own fixed wording, quoting nothing the judge sent (an
    unusable envelope, an empty or cut answer): shown unmarked, not as judge text."""


class SampleRequest(Frozen):
    """The prompt of a failed sample's last attempt, each part capped at ``RAW_CAP``."""

    prompt_id: str
    """``<template id>@<version>``, as in the vote."""
    system: str
    """The system instruction, capped."""
    user: str
    """The user message (data blocks included), capped."""
    capped: bool
    """Whether either part was cut at ``RAW_CAP`` bytes."""


class SampleDebug(Frozen):
    """One sample's debug record, for the operator only."""

    answer: str | None = None
    """The answer text as the adapter read it (message content or tool input), cut at
    ``RAW_CAP`` UTF-8 bytes; for a response whose envelope was unusable (a body in prose, a
    JSON body cut short), the response body itself (``whole_body``); None when the
    response carried neither."""
    answer_bytes: int = Field(default=0, ge=0)
    """The answer's whole size in UTF-8 bytes."""
    answer_capped: bool = False
    """Whether ``answer`` was cut at ``RAW_CAP``."""
    whole_body: bool = False
    """Whether ``answer`` is the whole HTTP response body, not an answer read from it: the
    provider's envelope was unusable, so there was no message content to read."""
    finish: str | None = None
    """The response's normalised finish reason."""
    failure: SampleFailure | None = None
    """Why the answer was refused; None for a valid answer."""
    request: SampleRequest | None = None
    """The prompt sent, kept for a refused answer only (a valid one's is re-derivable from
    the campaign and costs the artifact's size per sample)."""
    withheld: bool = False
    """The prompt carried reference material (an equivalence gold answer, a criteria
    target), which a judge's answer may quote: the answer text, the validator's message and
    the prompt are not kept, only sizes, kind and path (docs/design.md, "Trust
    boundaries": reference material reaches no output but the judge's prompt)."""

    def record(self) -> dict[str, JsonValue]:
        """The JSON object kept in the ledger."""
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def of(cls, raw: RawResponse | None, error: JudgeOutputError | None,
           prompt: Prompt | None, *, reference: bool = False) -> SampleDebug | None:
        """The record of a sample that got a response (``raw``) or an adapter-side output
        error; None for one that got no answer (journalled as ``transport_failed``).
        ``reference``: the prompt carried reference material (see ``withheld``)."""
        if raw is None and error is None:
            return None
        text, size, cut, body = None, 0, False, False
        if raw is not None and raw.text is not None:
            text, size, cut = capped(raw.text)
        elif raw is not None and raw.envelope_body is not None:
            # The body was cut at RAW_CAP bytes when it was read; its decoded form may be a
            # little longer (replacement characters), so it is capped again here.
            text, _, cut = capped(raw.envelope_body)
            size, body = raw.envelope_bytes, True
            cut = cut or size > RAW_CAP
        finish = raw.finish if raw is not None else None
        if reference:
            return cls(answer_bytes=size, finish=finish, withheld=True, whole_body=body,
                       failure=None if error is None else SampleFailure(
                           kind=error.kind, path=error.path, message="(withheld)"))
        failure = request = None
        if error is not None:
            own = error.kind in OWN_MESSAGE_KINDS or (
                raw is not None and raw.envelope_error is not None)
            failure = SampleFailure(kind=error.kind, path=error.path, message=error.detail,
                                    by_jurat=own)
            if prompt is not None:
                system, _, cut_system = capped(prompt.system)
                user, _, cut_user = capped(prompt.user)
                request = SampleRequest(prompt_id=prompt.prompt_id, system=system, user=user,
                                        capped=cut_system or cut_user)
        return cls(answer=text, answer_bytes=size, answer_capped=cut, whole_body=body,
                   finish=finish, failure=failure, request=request)
