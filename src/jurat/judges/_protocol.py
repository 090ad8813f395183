"""The one async Protocol every judge adapter implements, and the records it exchanges."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import AfterValidator, Field

from jurat.errors import TransportError
from jurat.models import MAX_TOKEN_COUNT, Artifact, Frozen, JudgeConfig, echoed
from jurat.models._grounding import GroundedClaim

#: What a call asks for. ``criterion`` is one binary criterion; ``text`` is free text
#: (the subject under test in the execution phase).
CallKind = Literal["rubric", "pairwise", "criterion", "equivalence", "text", "claim"]

#: Transport error kinds that produced no answer and may be retried as attempts of the same
#: sample (seed 000: "A transport retry is not permission to repeatedly sample judgments").
RETRYABLE_KINDS = frozenset({"timeout", "rate_limited", "http_5xx", "connection"})

#: Error kinds of a call that got no answer at all: the retryable ones once the retries are
#: spent (a 429 included), and a key the endpoint refuses. Such a sample is an outage, not
#: a judgment: it is never recorded as a vote unless its judge answered other samples of
#: the job (then it is an unsure vote, seed 001), and a re-run retries it (runner/_run.py).
NO_ANSWER_KINDS = RETRYABLE_KINDS | {"unauthorized"}

#: The most bytes of one response (the provider's envelope) a judge call reads, over plain
#: http and https alike; the answer inside it has its own limit (``_validate``).
MAX_RESPONSE_BYTES = 8 * 1024 * 1024

#: A string the endpoint echoes, as recorded: itself when it is a token, else its digest
#: and length (models/_echoed.py). Applied when a response is built, so whatever an
#: adapter (or a replay file) passes, no vote, execution or receipt can hold more.
Echoed = Annotated[str | None, AfterValidator(echoed)]
#: A token count an endpoint reported: a non-negative integer within ``MAX_TOKEN_COUNT``.
#: The adapters turn any other into ``bad_usage`` before a response is built
#: (judges/_http.py ``usage_of``); a response that holds one cannot be built at all.
TokenCount = Annotated[int, Field(ge=0, le=MAX_TOKEN_COUNT, strict=True)]


class Prompt(Frozen):
    """A rendered prompt: what a provider receives, nothing else."""

    template_id: str
    """Template id, e.g. ``jurat/judge-decision``."""
    version: str
    """Template version."""
    system: str = ""
    """System instruction ('' for templates that have none, such as seed 002's)."""
    user: str
    """The user message, with candidate content inside per-call delimiters."""
    schema_name: str | None = None
    """Name of the structured-output schema, or None for free text."""
    json_schema: dict[str, Any] | None = None
    """The provider-facing JSON schema for structured output, or None."""

    @property
    def prompt_id(self) -> str:
        """``<template id>@<version>``, recorded in every vote."""
        return f"{self.template_id}@{self.version}"


class JudgeCall(Frozen):
    """One attempt of one planned sample, as handed to an adapter.

    Provider adapters send only ``prompt`` and the decoding parameters. The remaining fields
    let local judges (sim, stubs, replay) answer without a model; ``artifact`` carries the
    truth label that only the sim reads.
    """

    kind: CallKind
    """What is asked."""
    prompt: Prompt
    """The rendered prompt."""
    temperature: float
    """Decoding temperature (pinned and recorded)."""
    max_tokens: int
    """Output token budget."""
    artifact: Artifact
    """The artifact under judgement (local judges only; never serialised into a prompt)."""
    criterion: str = ""
    """Criterion id (``rubric``, ``pairwise``, ``equivalence`` or a binary criterion id)."""
    sample: int = 0
    """Sample index k."""
    attempt: int = 1
    """Transport attempt of this sample, from 1."""
    order: str | None = None
    """Presentation order of a pairwise sample: ``AB`` or ``BA``."""
    gates_pass: bool = True
    """Whether every hard gate passed (the deterministic result, not a model's claim)."""
    bundle_size: int = 1
    """Number of evidence items the judge may cite."""
    claim: GroundedClaim | None = None
    """The claim of a ``claim`` call (local judges only: the sim reads its truth label;
    never serialised into a prompt)."""


class RawResponse(Frozen):
    """What an endpoint returned for one call, before any validation of the answer."""

    text: str | None
    """The answer text (message content, or the forced tool call's input as JSON)."""
    finish: Echoed = None
    """Normalised finish reason: ``stop``, ``length``, ``refusal``, ``content_filter``, ...,
    as ``Echoed`` records it (an execution without output records it as its error)."""
    refusal: str | None = None
    """The provider's refusal message, if any."""
    envelope_error: str | None = None
    """Error kind found while reading the provider's envelope (e.g. ``empty_response``)."""
    envelope_path: str | None = None
    """With ``envelope_error``: the JSON path of the envelope member at fault (``/``-joined,
    ``(root)`` when the body itself is no JSON object), so the operator sees where."""
    envelope_body: str | None = None
    """With ``envelope_error`` only: the response body, decoded as UTF-8 (bad bytes
    replaced) and cut at ``judges._debug.RAW_CAP`` bytes, for the operator's debug record
    (the answer text is None then, and the body is all there is to see). Never in a vote."""
    envelope_bytes: int = Field(default=0, ge=0)
    """The whole body's size in bytes, with ``envelope_body``."""
    returned_model: Echoed = None
    """Model id the endpoint reported, as ``Echoed`` records it."""
    system_fingerprint: Echoed = None
    """System fingerprint the endpoint reported, as ``Echoed`` records it."""
    usage: dict[str, TokenCount] = Field(default_factory=dict)
    """Token usage: ``input_tokens`` and ``output_tokens`` when reported. The engine puts
    the reservation a ``[budget]`` charged here when the endpoint reported none that could
    be counted (``Engine.complete_prompt``; judges/_budget.py)."""
    attempts: int = 1
    """Transport attempts it took (``complete_text``)."""


class TransportFailure(TransportError):
    """A call that produced no answer, with what the server said about it.

    Whether it is retried depends only on ``kind`` (``RETRYABLE_KINDS``).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, kind=kind)
        self.status = status
        self.retry_after = retry_after


@runtime_checkable
class Judge(Protocol):
    """A judge adapter: one pinned configuration, called once per attempt."""

    @property
    def config(self) -> JudgeConfig:
        """The pinned configuration."""

    @property
    def reproducible(self) -> bool:
        """Whether its answers are reproducible from the recorded inputs (RF-2)."""

    def preflight(self) -> None:
        """Raise ConfigError (e.g. a missing API key) before any request is sent."""

    def supports(self, kind: CallKind) -> bool:
        """Whether this judge can answer ``kind``."""

    async def complete(self, call: JudgeCall) -> RawResponse:
        """Answer one attempt; raise TransportError when no answer was produced."""

    async def aclose(self) -> None:
        """Release connections."""
