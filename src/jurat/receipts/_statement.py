"""Building the decision statement, signing it, parsing it back, and comparing a
re-derived decision.

The records themselves (the predicate's schema) are in ``_predicate``. Every reader and
writer of receipts works with the typed ``Statement``: ``decision_statement`` builds one,
``sign_statement`` is the one way a statement becomes a receipt (checked as a verifier
will read it, then signed), ``read_decision_statement`` reads one back with verification's
bounds and step 4. ``build_statement`` and ``read_statement`` give the statement as its JSON
document, for tools and tests that read or edit the bytes a receipt signs.

Threat model. A receipt is signed, contributor-visible and published on the board, so
it is a trusted output: nothing the judged party wrote may reach it except as digests,
counts, enums and range-checked numbers (docs/receipt-format.md §11.4). This module
builds it only from typed records (``GateOutcome``, ``Vote``, ``EvidenceBundle``,
``Artifact``'s digest) whose producers enforce that rule at their own boundary:
``checks/_sandbox_result.py`` and ``checks/_steps.py`` for the gates, ``judges/_validate``
for the votes (a judge's explanation by its digest), the policy with its tests file by
digest. Text the judged party wrote is held as ``models.Untrusted``, which is not a
``str``: mypy refuses it in any field here, and it raises if formatted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Required, TypedDict, Unpack, cast

import pydantic

from jurat.canonical import (
    canonical_json_value,
    loads_candidate,
    sha256_digest,
)
from jurat.errors import ConfigError, ValidationError, VerificationError
from jurat.fold import decide
from jurat.models import (
    Adjudication,
    Artifact,
    Decision,
    EvidenceBundle,
    GateOutcome,
    JudgeConfig,
    Policy,
    Vote,
    policy_digest,
    record_digest,
)
from jurat.models._grounding import ClaimExtraction, work_claims
from jurat.models._invalid import invalid
from jurat.models._prompt_ids import PROMPT_DERIVED_FROM
from jurat.receipts._bundle import MAX_BUNDLE_BYTES, MAX_DEPTH, read_statement, sign_payload
from jurat.receipts._keys import PrivateKey
from jurat.receipts._predicate import (
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    ArtifactPart,
    CampaignPart,
    DecisionPredicate,
    Decoding,
    EvidencePart,
    EvidenceRef,
    InputsPart,
    JudgePart,
    ReplayFidelity,
    ReviewPart,
    Statement,
    Subject,
    TaskRef,
    UpstreamReceipt,
    WorkRef,
)

#: Tolerance for float fields of the decision (their exact companions compare exactly).
FLOAT_REL_TOL = 1e-12
FLOAT_ABS_TOL = 1e-12
#: Providers whose samples can be reproduced from the receipt (seeded or recorded).
_REPRODUCIBLE = ("sim", "replay")
#: The keys a caller may put in ``inputs``; everything else the statement derives itself.
INPUT_KEYS = (
    "assignment",
    "attempt",
    "job_id",
    "task",
    "contributor",
    "upstream_receipts",
    "evidence_bundle",
    "judges_skipped",
    "claim_extraction",
    "work",
    "duplicate_of",
)


def replay_fidelity_level_for(policy: Policy) -> ReplayFidelity:
    """RF-2 when every judge is deterministic (sim, replay, stub:*) or there are none; else RF-1.

    An API judge (openai-compat, anthropic) gives votes nobody can reproduce, so the
    receipt claims only that the fold replays from the recorded votes (seed 001).
    """
    for judge in policy.judges:
        if not (judge.provider in _REPRODUCIBLE or judge.provider.startswith("stub:")):
            return "RF-1"
    return "RF-2"


def _judge_part(judge: JudgeConfig, votes: Sequence[Vote], meta: Mapping[str, Any]) -> JudgePart:
    prompt_ids = sorted({v.prompt_id for v in votes if v.judge == judge.id and v.prompt_id})
    prompt_id = meta.get("prompt_id", prompt_ids[0] if len(prompt_ids) == 1 else None)
    return JudgePart(
        id=judge.id,
        provider=judge.provider,
        model=judge.model,
        prompt_id=prompt_id,
        prompt_derived_from=PROMPT_DERIVED_FROM.get(prompt_id or ""),
        schema_id=meta.get("schema_id"),
        decoding=Decoding(
            temperature=judge.temperature,
            max_tokens=judge.max_tokens,
            seed=judge.seed,
            structured_output=judge.structured_output,
        ),
        config_sha256=record_digest(judge),
    )


def _judges_meta(policy: Policy, judges_meta: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    panel = {j.id for j in policy.judges}
    out: dict[str, Mapping[str, Any]] = {}
    for i, meta in enumerate(judges_meta or ()):
        judge_id = meta.get("id")
        if judge_id not in panel:
            raise ConfigError(f"judges_meta[{i}].id: {judge_id!r} is not in the panel")
        unknown = sorted(set(meta) - {"id", "prompt_id", "schema_id"})
        if unknown:
            raise ConfigError(
                f"judges_meta[{i}]: unknown keys {unknown}; give only prompt_id and schema_id"
            )
        out[str(judge_id)] = meta
    return out


def _inputs(
    policy: Policy, artifact: Artifact, bundle: EvidenceBundle, inputs: Mapping[str, Any] | None
) -> InputsPart:
    given = dict(inputs or {})
    unknown = sorted(set(given) - set(INPUT_KEYS))
    if unknown:
        raise ConfigError(f"inputs: unknown keys {unknown}; allowed: {list(INPUT_KEYS)}")
    # The digest is always computed from the bundle; a caller's value may only confirm it.
    digest = bundle.digest
    claimed = given.get("evidence_bundle", digest)
    if claimed != digest:
        raise ValidationError(
            f"inputs.evidence_bundle {claimed!r} is not the evidence bundle's digest {digest}"
        )
    return InputsPart(
        assignment=given.get("assignment"),
        attempt=given.get("attempt"),
        job_id=given.get("job_id"),
        task=TaskRef(id=given.get("task", artifact.task), version=policy.task_version,
                     statement_sha256=None if artifact.task_statement is None
                     else sha256_digest(artifact.task_statement)),
        contributor=given.get("contributor", artifact.contributor),
        upstream_receipts=tuple(
            UpstreamReceipt.model_validate(r) for r in given.get("upstream_receipts", ())
        ),
        evidence_bundle=EvidencePart(
            sha256=digest,
            items=tuple(
                EvidenceRef(
                    kind=i.kind,
                    tool=i.tool,
                    tool_version=i.tool_version,
                    sha256=i.sha256,
                    gate=i.gate,
                )
                for i in bundle.items
            ),
        ),
        # The bytes the judges read, from the artifact alone (as its target's digest).
        explanation_sha256=None if artifact.explanation is None
        else artifact.explanation.sha256.removeprefix("sha256:"),
        judges_skipped=given.get("judges_skipped"),
        # The artifact's own claims from the work, by digest (its text stays out).
        claims=work_claims(artifact.claims),
        claim_extraction=(None if given.get("claim_extraction") is None else
                          ClaimExtraction.model_validate(given["claim_extraction"])),
        # The artifact's own, read at intake: no caller's inputs can pin another reference.
        # Keyed, never plain: a plain digest of a short answer is reversed by guessing.
        target_hmac=_target_hmac(artifact),
        # The question a given output answers (no [subject]): the subject digest is the
        # output's, so the input is bound here, as the job identity binds it.
        input_sha256=_given_input(artifact),
        work=None if given.get("work") is None else WorkRef.model_validate(given["work"]),
        duplicate_of=given.get("duplicate_of"),
    )


def _target_hmac(artifact: Artifact) -> str | None:
    """The keyed digest of the artifact's target (intake's), None without a target."""
    if artifact.target is None:
        return None
    if artifact.reference_hmac is None:
        raise ValidationError(f"artifact {artifact.id}: its target has no keyed digest, and a "
                              "receipt binds it by no other (intake computes it)")
    return artifact.reference_hmac


def _given_input(artifact: Artifact) -> str | None:
    """The input's digest when the output was given beside it, else None."""
    if artifact.input is None:
        return None
    digest = sha256_digest(artifact.input)
    return None if digest == artifact.sha256 else digest


def build_statement(**given: Unpack[StatementInputs]) -> dict[str, Any]:
    """``decision_statement``, checked as ``sign_statement`` checks it, as its JSON document
    (``statement_document``): for tools and tests that edit what a receipt signs."""
    return statement_document(checked_statement(decision_statement(**given)))


def statement_document(statement: Statement) -> dict[str, Any]:
    """The statement as the JSON document whose RFC 8785 bytes a receipt signs."""
    return statement.model_dump(mode="json", by_alias=True)


def sign_statement(statement: Statement, key: PrivateKey) -> bytes:
    """The receipt of ``statement``: a Sigstore bundle v0.3 (RFC 8785 canonical bytes) whose
    DSSE payload is the statement's RFC 8785 JSON, signed with ``key``.

    The one way jurat signs a decision (the runner, the service's adjudication and `jurat
    adjudicate` alike). The payload is serialised once, and checked before it is signed as
    a verifier will read it (``checked_payload``): a statement whose decision does not
    re-derive from its recorded inputs, or that exceeds what a receipt may hold, raises
    ValidationError and is never signed, so every receipt jurat signs verifies.
    """
    return sign_payload(checked_payload(statement), key)


def read_decision_statement(bundle_bytes: bytes) -> Statement:
    """The typed statement inside a receipt, decoded but NOT verified (use verify_bundle).

    For receipts jurat wrote and keeps (a resumed run reuses them): the bounds of
    ``read_statement``, then the schema and normal form of step 4; a receipt that fails
    either raises VerificationError.
    """
    return parse_statement(read_statement(bundle_bytes))


class StatementInputs(TypedDict, total=False):
    """What a decision statement is built from (``decision_statement``'s keywords)."""

    policy: Required[Policy]
    artifact: Required[Artifact]
    gates: Required[Sequence[GateOutcome]]
    votes: Required[Sequence[Vote]]
    decision: Required[Decision]
    bundle: Required[EvidenceBundle]
    judges_meta: list[dict[str, Any]] | None
    inputs: dict[str, Any] | None
    review_version: int
    supersedes: str | None
    replay_fidelity_level: Required[str]
    jurat_version: Required[str]
    adjudication: Adjudication | None


def decision_statement(
    *,
    policy: Policy,
    artifact: Artifact,
    gates: Sequence[GateOutcome],
    votes: Sequence[Vote],
    decision: Decision,
    bundle: EvidenceBundle,
    judges_meta: list[dict[str, Any]] | None = None,
    inputs: dict[str, Any] | None = None,
    review_version: int = 1,
    supersedes: str | None = None,
    replay_fidelity_level: str,
    jurat_version: str,
    adjudication: Adjudication | None = None,
) -> Statement:
    """The in-toto Statement v1 for one artifact's decision (``StatementInputs``).

    ``votes`` must be in dispatch order. ``inputs`` may give ``assignment``, ``attempt``,
    ``job_id``, ``task``, ``contributor``, ``upstream_receipts`` ([{name, sha256}]) and
    ``evidence_bundle`` (must equal ``bundle.digest``; it is always computed). Raises
    ValidationError for records that do not make a statement and for a replay fidelity
    level the panel does not have; whether the decision re-derives from the recorded
    inputs is checked where it is signed (``sign_statement``), on the bytes signed.
    """
    meta = _judges_meta(policy, judges_meta)
    try:
        predicate = DecisionPredicate(
            jurat_version=jurat_version,
            fold_rule=decision.fold_rule,
            # The record re-checks the label; mypy cannot follow it from the caller.
            replay_fidelity_level=cast(ReplayFidelity, replay_fidelity_level),
            campaign=CampaignPart(
                id=policy.id,
                kind=policy.kind,
                rubric_version=policy.rubric.version if policy.rubric else None,
                policy_sha256=policy_digest(policy),
                policy=policy,
            ),
            artifact=ArtifactPart(
                id=artifact.id, sha256=artifact.sha256, media_type=artifact.media_type
            ),
            inputs=_inputs(policy, artifact, bundle, inputs),
            gates=tuple(gates),
            judges=tuple(_judge_part(j, votes, meta.get(j.id, {})) for j in policy.judges),
            votes=tuple(votes),
            decision=decision,
            review=ReviewPart(
                version=review_version, supersedes=supersedes, adjudication=adjudication
            ),
        )
    except pydantic.ValidationError as exc:
        raise ValidationError(f"cannot build the receipt statement: {exc}") from exc
    expected = replay_fidelity_level_for(policy)
    if replay_fidelity_level != expected:
        raise ValidationError(
            f"replay_fidelity_level {replay_fidelity_level!r} overstates or understates this "
            f"panel; it is {expected!r}"
        )
    return Statement(
        statement_type=STATEMENT_TYPE,
        subject=(Subject(name=artifact.id, digest={"sha256": artifact.sha256}),),
        predicate_type=PREDICATE_TYPE,
        predicate=predicate,
    )


def checked_statement(statement: Statement) -> Statement:
    """``statement`` if a verifier will accept what it signs, else ValidationError."""
    checked_payload(statement)
    return statement


def checked_payload(statement: Statement) -> bytes:
    """The RFC 8785 bytes of ``statement`` if a verifier will accept them, else
    ValidationError.

    The statement after a JSON round trip must parse in normal form, within the bounds a
    receipt is read with, and its decision must re-derive from its recorded inputs.
    """
    # Check what the verifier will see: the statement after a JSON round trip, within the
    # limits it reads receipts with (docs/receipt-format.md §2.2).
    # Read as verification reads a payload (loads_candidate, then step 4's normal form and
    # canonical bytes in one comparison), which also costs a third of a strict parse.
    data = canonical_json_value(statement_document(statement))
    try:
        seen = loads_candidate(data, max_bytes=MAX_BUNDLE_BYTES, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise ValidationError(f"the statement exceeds what a receipt may hold: {exc}") from exc
    parsed = parse_statement(seen)
    mismatches = decision_mismatches(
        rederive_predicate(parsed.predicate), seen.value["predicate"]["decision"]
    )
    if mismatches:
        raise ValidationError(
            "the decision does not re-derive from the recorded gates and votes: "
            + "; ".join(mismatches)
        )
    return data


def parse_statement(doc: Any) -> Statement:
    """Validate a statement and require it to be in normal form (step 4).

    Normal form: re-dumping the parsed records reproduces the JSON exactly, so no
    field was defaulted, coerced or dropped on the way into the fold.

    ``doc`` may be a ``CanonicalCandidate`` (the payload bytes and the value read from
    them): then one serialisation of the re-dumped records, equal to the bytes, shows
    both normal form and that the bytes are RFC 8785 canonical. A failure then does not
    say which of the two failed; verification decides that step by step.
    """
    from jurat.canonical import CanonicalCandidate

    step = "parse statement"
    signed = doc if isinstance(doc, CanonicalCandidate) else None
    if signed is not None:
        doc = signed.value
    if not isinstance(doc, dict):
        raise VerificationError("the payload is not a JSON object", step=step)
    if doc.get("_type") != STATEMENT_TYPE:
        raise VerificationError(f"_type {doc.get('_type')!r} is not {STATEMENT_TYPE}", step=step)
    if doc.get("predicateType") != PREDICATE_TYPE:
        raise VerificationError(
            f"predicateType {doc.get('predicateType')!r} is not {PREDICATE_TYPE}", step=step
        )
    try:
        statement = Statement.model_validate(doc, by_alias=True)
    except pydantic.ValidationError as exc:
        count = exc.error_count()
        raise invalid(exc, Statement, doc, lambda first: VerificationError(
            f"{count} schema error(s); the first: {first}", step=step), fix=False) from exc
    dump = statement.model_dump(mode="json", by_alias=True)
    if not (signed.is_canonical_form_of(dump) if signed is not None else same_json(dump, doc)):
        raise VerificationError(
            "the statement is not in normal form: a field is missing, extra or of another "
            "type than the records it describes",
            step=step,
        )
    return statement


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values have the same RFC 8785 serialisation, without serialising.

    Numbers compare by value (``1`` and ``1.0`` are both written ``1``), booleans only
    with booleans, so no coercion can hide in an equal-looking document.
    """
    # The same rule, with the leaves of plain dicts and lists compared inline: it lives
    # beside the canonical serialiser it stands in for (tests/receipts/test_canonical_fast.py).
    from jurat.canonical import same_json as same_serialisation

    return same_serialisation(a, b)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        # Floats are informative companions of exact fields (q_bp, agreement_votes); a
        # last-ulp difference in a platform's log() must not fail a receipt elsewhere.
        return math.isclose(a, b, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def decision_mismatches(derived: Decision, recorded: Mapping[str, Any]) -> list[str]:
    """Every field where the re-derived decision differs from the recorded one."""
    fresh = derived.model_dump(mode="json")
    out = []
    for key in sorted(set(fresh) | set(recorded)):
        mine, theirs = fresh.get(key, "<absent>"), recorded.get(key, "<absent>")
        if not _same(mine, theirs):
            out.append(f"decision.{key}: recorded {_short(theirs)}, re-derived {_short(mine)}")
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def rederive_predicate(predicate: DecisionPredicate) -> Decision:
    """Re-run the fold on the recorded policy, gates and votes with the recorded rule id."""
    return decide(
        predicate.campaign.policy,
        predicate.gates,
        predicate.votes,
        rule=predicate.fold_rule,
        adjudication=predicate.review.adjudication,
        artifact=predicate.artifact.id,
        claims=predicate.inputs.claims,
    )
