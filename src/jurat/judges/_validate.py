"""Strict validation of judge answers: parse, schema, then semantics (seed 000).

Every failure raises ``JudgeOutputError`` with a named kind; the engine records it as an
error vote. Nothing here ever fills a gap with a default, so nothing defaults to acceptance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from jurat.canonical import StrictJSONError, StrictJSONKind, loads_strict, sha256_digest
from jurat.errors import JudgeOutputError
from jurat.fold import hard_gates_pass
from jurat.judges._schema_check import AnswerSchema, answer_schema
from jurat.models import GateOutcome

if TYPE_CHECKING:
    from jurat.judges._protocol import RawResponse

__all__ = [
    "ARCV_SCHEMA_ID",
    "CRITERION_SCHEMA",
    "CRITERION_SCHEMA_ID",
    "EQUIVALENCE_FORMAT_ID",
    "MAX_ANSWER_BYTES",
    "SCHEMA_FOR_KIND",
    "arcv_schema",
    # Owned by jurat.fold (the fold and the validator must agree on it); listed here only
    # while judges/_engine.py still imports it from this module.
    "interpret",
    "strict_loads",
    "validate_answer",
]

#: Schema ids recorded with every judge config.
ARCV_SCHEMA_ID = "arcv-judge-decision/v1"
CRITERION_SCHEMA_ID = "jurat-binary-criterion/v1"
EQUIVALENCE_FORMAT_ID = "invariance-checker/judge/v1#lines"

#: The answer schema id each campaign kind uses.
SCHEMA_FOR_KIND = {
    "rubric": ARCV_SCHEMA_ID,
    "pairwise": ARCV_SCHEMA_ID,
    "criteria": CRITERION_SCHEMA_ID,
    "equivalence": EQUIVALENCE_FORMAT_ID,
}

#: An answer larger than this is refused before parsing (a judge answer is a few hundred bytes).
MAX_ANSWER_BYTES = 64 * 1024

#: The binary criterion answer of seed 001 §1, strict.
CRITERION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "jurat binary criterion v1",
    "type": "object",
    "additionalProperties": False,
    "required": ["verdict", "explanation"],
    "properties": {
        "verdict": {"enum": ["yes", "no", "unsure"]},
        "explanation": {"type": "string", "maxLength": 2000},
    },
}

_KINDS = {"rubric", "pairwise", "criterion", "criteria", "equivalence", "claim"}
_EQUIVALENCE_KEYS = ("DECISION", "REASON", "NUMERIC_A", "NUMERIC_B")
_DECISIONS = ("EQUIVALENT", "DIFFERENT", "ABSTAIN")
_LINE = re.compile(r"^([A-Z_]+):[ \t]*(.*?)[ \t]*$")


# -- parsing ---------------------------------------------------------------------------------

#: The vote error kind for each reason the one strict parser (``jurat.canonical``) gives;
#: every other reason (encoding, nesting, trailing text, ...) is ``malformed_json``.
_VOTE_ERROR_KIND: dict[StrictJSONKind, str] = {
    "duplicate_key": "duplicate_key",
    "non_finite_number": "non_finite_number",
    "oversized": "oversized",
}


def strict_loads(text: str | bytes, *, limit: int = MAX_ANSWER_BYTES) -> Any:
    """Parse one whole JSON document with ``loads_strict``; a refusal is a named vote error.

    The whole text must be the document (surrounding whitespace aside): a fenced or
    prefixed answer is malformed, never searched for its last match.
    """
    try:
        return loads_strict(text, max_bytes=limit)
    except StrictJSONError as exc:
        kind = _VOTE_ERROR_KIND.get(exc.kind, "malformed_json")
        # The whole document failed to parse: the message holds the position.
        raise JudgeOutputError(str(exc), kind=kind, path="(root)") from exc


# -- schemas ---------------------------------------------------------------------------------


@cache
def arcv_schema() -> dict[str, Any]:
    """The seed's ARCV Judge Decision v1 schema, verbatim (seed 000, structured orchestration)."""
    data = resources.files("jurat.judges").joinpath("arcv_judge_decision_v1.schema.json")
    loaded: dict[str, Any] = json.loads(data.read_text("utf-8"))
    return loaded


@cache
def _validator(name: str) -> AnswerSchema:
    return answer_schema(arcv_schema() if name == "arcv" else CRITERION_SCHEMA)


@cache
def _general_validator(ids: tuple[str, ...]) -> AnswerSchema:
    from jurat.judges._general import general_schema

    return answer_schema(general_schema(ids))


def _schema_check(name: str, value: Any, score_ids: tuple[str, ...] | None = None) -> None:
    # ``score_ids``: a general rubric's ids (judges/_general.py) instead of the ARCV four.
    validator = _general_validator(score_ids) if score_ids else _validator(name)
    validator.check(value)


# -- semantic rules (seed 000: "the service must compare artifact_sha256 ...") ---------------


def _check_digest(answer: dict[str, Any], artifact_sha256: str) -> None:
    """Seed 000: compare artifact_sha256 with the service's own digest."""
    if answer["artifact_sha256"] != artifact_sha256:
        raise JudgeOutputError(
            f"artifact_sha256 {answer['artifact_sha256']} is not {artifact_sha256}",
            kind="digest_mismatch",
            path="artifact_sha256",
        )


def _check_evidence(answer: dict[str, Any], bundle_size: int) -> None:
    """Seed 000: every cited evidence index must exist in the server-provided bundle."""
    missing = [i for i in answer["evidence_indices"] if i >= bundle_size]
    if missing:
        raise JudgeOutputError(
            f"evidence indices {missing} outside the bundle of {bundle_size} items",
            kind="bad_evidence_index",
            path="evidence_indices",
        )


def _check_gates(answer: dict[str, Any], gates_ok: bool) -> None:
    """Seed 000: a model cannot override a failed required gate; its hard_gates_pass is ignored."""
    if answer["disposition"] == "accept" and not gates_ok:
        raise JudgeOutputError(
            "accept although a required deterministic gate did not pass",
            kind="accept_with_failed_gates",
            path="disposition",
        )


def _check_single_preference(answer: dict[str, Any]) -> None:
    """A single-artifact rubric presents one candidate, A: B and tie are not answers to it."""
    if answer["preference"] not in ("A", "abstain"):
        raise JudgeOutputError(
            f"preference {answer['preference']!r} for a single candidate (use A or abstain)",
            kind="bad_preference",
            path="preference",
        )


def _equivalence(text: str, *, reference: bool) -> dict[str, Any]:
    """Seed 002 §4: DECISION / REASON / NUMERIC_A / NUMERIC_B, one per line, nothing else.

    All four fields are parsed and checked; what is returned (and so recorded in the vote) is
    ``decision`` and ``numeric_agree``, plus, only when ``b`` is not reference material,
    ``reason``, ``numeric_a`` and ``numeric_b``. The judge has read ``b``, and anything it
    writes may quote it ("A gives 200 but B gives 40") or be steered by ``a`` into doing so;
    a receipt is contributor-visible (docs/receipt-format.md, "Reference material").
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_ANSWER_BYTES:
        raise JudgeOutputError("answer exceeds the size limit", kind="oversized")
    if text.lstrip().startswith("{"):
        data = strict_loads(text)
        lines = {k.upper(): v for k, v in data.items()} if isinstance(data, dict) else {}
        if (
            len(lines) != len(data)
            or set(lines) != set(_EQUIVALENCE_KEYS)
            or not all(v is None or isinstance(v, str | int | float) for v in lines.values())
        ):
            raise JudgeOutputError(
                "JSON answer needs exactly the four fields", kind="malformed_output"
            )
        fields = {k: None if v is None else str(v) for k, v in lines.items()}
    else:
        fields = {}
        for raw in text.strip().splitlines():
            match = _LINE.match(raw.strip())
            if raw.strip() == "":
                continue
            if match is None or match.group(1) not in _EQUIVALENCE_KEYS:
                raise JudgeOutputError(f"unexpected line {raw[:80]!r}", kind="malformed_output")
            if match.group(1) in fields:
                raise JudgeOutputError(f"duplicate field {match.group(1)}", kind="malformed_output")
            fields[match.group(1)] = match.group(2)
        if set(fields) != set(_EQUIVALENCE_KEYS):
            missing = sorted(set(_EQUIVALENCE_KEYS) - set(fields))
            raise JudgeOutputError(f"missing fields {missing}", kind="malformed_output")
    decision = fields["DECISION"]
    if decision not in _DECISIONS:
        raise JudgeOutputError(f"unknown DECISION {decision!r}", kind="malformed_output")

    def number(value: str | None) -> str | None:
        return None if value is None or value.upper() in ("NULL", "") else value

    from jurat.checks._equivalence import same_number  # math-verify: only for this kind

    numeric_a, numeric_b = number(fields["NUMERIC_A"]), number(fields["NUMERIC_B"])
    agree = same_number(numeric_a, numeric_b)
    if reference:
        return {"decision": decision, "numeric_agree": agree}
    return {
        "decision": decision,
        "reason": fields["REASON"] or "",
        "numeric_a": numeric_a,
        "numeric_b": numeric_b,
        "numeric_agree": agree,
    }


def validate_answer(
    kind: str,
    text: str,
    *,
    artifact_sha256: str,
    bundle_size: int,
    gates: Sequence[GateOutcome] = (),
    hard_gates: Sequence[str] = (),
    reference: bool = True,
    score_ids: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Parse and validate one answer of ``kind``; return it as the vote records it.

    ``score_ids``: rubric and pairwise answers of a general rubric are checked against
    ``jurat-judge-decision-general/v1`` over these ids (``general_ids``), not ARCV v1.

    Kinds: ``rubric`` and ``pairwise`` (ARCV Judge Decision v1), ``criterion`` (alias
    ``criteria``; the binary answer) and ``equivalence`` (seed 002's line format or the same
    four fields as JSON). Every kind but equivalence is returned as the judge gave it but
    for its free text (``recorded``); an equivalence answer keeps only ``decision`` and
    ``numeric_agree`` while ``reference`` (``b`` is the gold answer, the default) holds.
    Raises JudgeOutputError with the named kind.
    """
    if kind not in _KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; use one of {sorted(_KINDS)}")
    if kind == "equivalence":
        return _equivalence(text, reference=reference)
    answer = strict_loads(text)
    if kind == "claim":  # seed 000 grounding: judges/_claims.py
        from jurat.judges._claims import validate_claim

        return recorded(validate_claim(answer, bundle_size))
    if kind in ("criterion", "criteria"):
        _schema_check("criterion", answer)
        return recorded(answer)
    _schema_check("arcv", answer, score_ids)
    _check_digest(answer, artifact_sha256)
    _check_evidence(answer, bundle_size)
    _check_gates(answer, hard_gates_pass(gates, hard_gates))
    if kind == "rubric":
        _check_single_preference(answer)
    return recorded(answer)


def recorded(answer: dict[str, Any]) -> dict[str, Any]:
    """A validated answer as a vote records it: the judge's ``explanation`` by its digest
    and length (docs/receipt-format.md §6.7).

    The explanation is free text, and a judge that read the candidate can be steered into
    writing anything there; the vote is signed into a receipt and published on the board,
    where only digests, counts, enums and range-checked numbers of such text may go. The
    fold never reads it.
    """
    out = dict(answer)
    text = out.pop("explanation", None)
    if isinstance(text, str):
        out["explanation_sha256"] = sha256_digest(text)
        out["explanation_chars"] = len(text)
    return out


def interpret(
    raw: RawResponse,
    kind: str,
    *,
    artifact_sha256: str,
    bundle_size: int,
    gates: Sequence[GateOutcome] = (),
    hard_gates: Sequence[str] = (),
    reference: bool = True,
    score_ids: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Turn a provider response into a validated answer, or raise with the named kind.

    ``reference``: as in ``validate_answer`` (equivalence only); ``score_ids`` too (a
    general rubric's ids).

    Envelope problems come first: a refusal is ``refused`` even if text came with it, and a
    response cut at the token limit is ``truncated`` even if it happens to parse.
    """
    if raw.envelope_error is not None:
        raise JudgeOutputError("the provider's envelope was unusable", kind=raw.envelope_error,
                               path=raw.envelope_path)
    if raw.refusal or raw.finish in ("refusal", "content_filter"):
        raise JudgeOutputError(f"the model refused: {(raw.refusal or '')[:200]}", kind="refused")
    if raw.finish in ("length", "max_tokens"):
        raise JudgeOutputError("the answer was cut at the token limit", kind="truncated")
    if raw.text is None or not raw.text.strip():
        raise JudgeOutputError("no answer text", kind="empty_response")
    return validate_answer(
        kind,
        raw.text,
        artifact_sha256=artifact_sha256,
        bundle_size=bundle_size,
        gates=gates,
        hard_gates=hard_gates,
        reference=reference,
        score_ids=score_ids,
    )
