"""Receipt verification as numbered steps. A bad receipt is a report, never an exception.

1. parse envelope       Sigstore bundle v0.3 with one DSSE envelope and exactly one signature,
                        within the size, depth and encoding limits, no unknown field
2. check payload type   ``application/vnd.in-toto+json``
3. verify signature     ECDSA P-256/SHA-256 (or Ed25519) over PAE(payloadType, payload)
4. parse statement      strict RFC 8785 JSON, in-toto Statement v1, the decision predicate
5. check subject digest one subject = the predicate's artifact (= the given artifact's digest),
                        and the keyed reference digests = the given reference's, when given
6. re-run fold          ``decide(policy, gates, votes, rule=fold_rule)`` on the recorded inputs
7. compare decision     every derived field: the decision, policy and judge digests, RF level

Steps run in order and stop at the first failure: nothing after a failed signature is
trusted enough to be worth reporting on. Every failure is a failed step, whatever the
bytes (docs/receipt-format.md §2.2 and §7): the report is the contract, so no
receipt can make verification raise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jurat.canonical import (
    canonical_json_value,
    element_spans,
    loads_candidate,
    loads_strict,
    member_span,
    member_start,
    same_json,
    sha256_digest,
)
from jurat.errors import JuratError, VerificationError
from jurat.models import GATE_EQUIVALENCE_DETERMINISTIC, Decision, Frozen
from jurat.models._artifact import PAIR_MEDIA_TYPE, pair_digest
from jurat.receipts._bundle import MAX_BUNDLE_BYTES, MAX_DEPTH, ParsedBundle, parse_bundle
from jurat.receipts._dsse import PAYLOAD_TYPE, pae
from jurat.receipts._keys import (
    PublicKey,
    key_algorithm,
    public_key_from_pem,
    public_key_hint,
    verify_bytes,
)
from jurat.receipts._predicate import Statement
from jurat.receipts._statement import (
    decision_mismatches,
    parse_statement,
    rederive_predicate,
    replay_fidelity_level_for,
)

#: The step names, by number; step 8 (inclusion proof) is run by the CLI when asked.
STEPS: tuple[str, ...] = (
    "parse envelope",
    "check payload type",
    "verify signature",
    "parse statement",
    "check subject digest",
    "re-run fold",
    "compare decision",
)
INCLUSION_STEP = "check inclusion proof"


class VerifyStep(Frozen):
    """One numbered verification step and its outcome."""

    number: int
    """Step number, 1-based (docs/receipt-format.md, "Verification")."""
    name: str
    """Step name."""
    ok: bool
    """Whether the step held."""
    detail: str
    """What was checked, or why it failed."""


class VerifyReport(Frozen):
    """The outcome of verifying one receipt."""

    steps: tuple[VerifyStep, ...]
    """The steps that ran, in order; the last one failed unless every step held. Without
    a key (``rederive_bundle``) step 3 did not run and is absent."""
    ok: bool
    """True only when all seven steps ran and held (never without a key)."""
    statement: Statement | None = None
    """The statement, as step 4 parsed it (schema and normal form), once step 4 passed
    (signed, when step 3 ran): what every reader of a verified receipt reads."""
    decision: Decision | None = None
    """The re-derived decision, once step 6 passed."""
    reference_checked: bool | None = None
    """Whether step 5 checked the receipt's keyed reference digests against a given
    reference: True it did, and they held; False the receipt records one and no reference
    was given, so the binding was not checked (a verifier needs the campaign's reference
    key, docs/receipt-format.md §7); None it records none and none was given."""

    @property
    def artifact_id(self) -> str | None:
        """The statement's artifact id (``predicate.artifact.id``), once step 4 passed."""
        return self.statement.predicate.artifact.id if self.statement is not None else None

    @property
    def artifact_sha256(self) -> str | None:
        """The statement's artifact digest (``predicate.artifact.sha256``), once step 4
        passed."""
        return self.statement.predicate.artifact.sha256 if self.statement is not None else None

    @property
    def failed(self) -> VerifyStep | None:
        """The failing step, if any."""
        return next((s for s in self.steps if not s.ok), None)

    @property
    def held(self) -> bool:
        """Every step that ran held, through step 7 (``ok`` when the signature was checked)."""
        return self.failed is None and bool(self.steps) and self.steps[-1].number == len(STEPS)


class _Run:
    """Accumulates steps; ``step`` runs a check and turns a raised error into a failed step."""

    def __init__(self) -> None:
        self.steps: list[VerifyStep] = []

    def step(self, number: int, check: Callable[[], str]) -> bool:
        name = STEPS[number - 1]
        try:
            detail = check()
        except JuratError as exc:
            message = str(exc)
            if isinstance(exc, VerificationError) and exc.step:
                message = message.removeprefix(f"{exc.step}: ")
            self.steps.append(VerifyStep(number=number, name=name, ok=False, detail=message))
            return False
        except Exception as exc:
            # The last guard of the contract: whatever a receipt's bytes provoke (here, a
            # bug jurat has not met yet), it is this step failing, never a traceback.
            detail = f"unexpected {type(exc).__name__} while checking: {exc}"
            self.steps.append(VerifyStep(number=number, name=name, ok=False, detail=detail))
            return False
        self.steps.append(VerifyStep(number=number, name=name, ok=True, detail=detail))
        return True


def _signature(parsed: ParsedBundle, key: PublicKey) -> str:
    step = STEPS[2]
    if parsed.material != "publicKey":
        raise VerificationError(
            f"the bundle carries a {parsed.material} (Sigstore keyless signing); verifying it "
            "needs `pip install sigstore`, a Sigstore trusted root available without network, "
            "and an expected identity; jurat verifies key-signed receipts only",
            step=step,
        )
    given = public_key_hint(key)
    if not verify_bytes(key, parsed.signature, pae(parsed.payload_type, parsed.payload)):
        named = ""
        if parsed.hint is not None and parsed.hint != given:
            named = f"; the bundle names key {parsed.hint[:80]}"
        raise VerificationError(
            f"the signature does not verify with the given key {given}{named}", step=step
        )
    if parsed.hint is not None and parsed.hint != given:
        raise VerificationError(
            f"the signature verifies but publicKey.hint {parsed.hint[:80]} does not name the given "
            f"key {given}",
            step=step,
        )
    return f"{key_algorithm(key)} signature over PAE verifies with key {given}"


def keyed_references(statement: Statement) -> list[tuple[str, str]]:
    """Where the receipt binds its reference material by a keyed digest, and the digest:
    ``inputs.target_hmac`` and each ``equivalence.deterministic`` gate's
    ``data.reference_hmac`` (docs/receipt-format.md §6.4, §11.2). Receipts made before
    keyed digests record plain ones (``target_sha256``, ``reference_sha256``) instead."""
    pred = statement.predicate
    found = []
    if pred.inputs.target_hmac is not None:
        found.append(("inputs.target_hmac", pred.inputs.target_hmac))
    for index, gate in enumerate(pred.gates):
        value = gate.data.get("reference_hmac")
        if gate.id == GATE_EQUIVALENCE_DETERMINISTIC and isinstance(value, str):
            found.append((f"gates[{index}].data.reference_hmac", value))
    return found


def _subject(statement: Statement, expected: str | None,
             reference_hmac: str | None = None) -> tuple[str, bool | None]:
    """Step 5: the subject, and the reference binding (with whether it was checked)."""
    step = STEPS[4]
    subjects = statement.subject
    if len(subjects) != 1:
        raise VerificationError(f"expected exactly one subject, found {len(subjects)}", step=step)
    subject, artifact = subjects[0], statement.predicate.artifact
    if set(subject.digest) != {"sha256"}:
        raise VerificationError(
            f"subject digest must be {{sha256}}, found {sorted(subject.digest)}", step=step
        )
    digest = subject.digest["sha256"]
    if subject.name != artifact.id or digest != artifact.sha256:
        raise VerificationError(
            f"subject {subject.name}@sha256:{digest} is not the predicate's artifact "
            f"{artifact.id}@sha256:{artifact.sha256}",
            step=step,
        )
    pair = artifact.media_type == PAIR_MEDIA_TYPE
    same, as_a = "", False
    if expected is not None:
        expected = expected.lower()
        # A pair whose b is the reference: the given artifact may be its a, the pair's
        # digest then built with the given reference's keyed digest (§6.3).
        as_a = pair and reference_hmac is not None and digest != expected and (
            digest == pair_digest(expected, reference_hmac))
        if digest != expected and not as_a:
            hint = ("; a pair's digest binds both parts (docs/receipt-format.md §6.3): give "
                    "its a with the reference b and the campaign's reference key, or the "
                    "pair's digest" if pair else "")
            raise VerificationError(
                f"the receipt is about {subject.name} sha256:{digest}, not the given artifact "
                f"sha256:{expected}{hint}", step=step)
        same = (", the pair of the given a and reference" if as_a
                else ", the given artifact's digest")
    about = f"{subject.name} sha256:{digest}{same}"
    keyed = keyed_references(statement)
    if reference_hmac is None:
        if not keyed:
            return about, None
        return (f"{about}; reference binding not checked: {', '.join(w for w, _ in keyed)} "
                "is keyed with the campaign's reference key, and no reference and key were "
                "given", False)
    if not keyed and not as_a:
        raise VerificationError(
            "a reference was given, and the receipt binds none by a keyed digest that can be "
            "checked" + (" without the pair's a (give it as the artifact)" if pair else ""),
            step=step)
    wrong = [where for where, value in keyed if value != reference_hmac]
    if wrong:
        raise VerificationError(
            f"{', '.join(wrong)} is not the keyed digest of the given reference under the "
            "given key: another reference (its exact bytes; a trailing newline counts), or "
            "another campaign's key", step=step)
    bound = [where for where, _ in keyed] + (["the pair's digest"] if as_a else [])
    return (f"{about}; reference binding checked ({', '.join(bound)}): the given reference "
            "under the given key", True)


def _recorded_digests(payload: bytes) -> tuple[str, list[str]]:
    """The sha256 of ``campaign.policy`` and of each of its judges, as the receipt records
    them (docs/receipt-format.md §6: of the RFC 8785 JSON of ``policy`` and of
    ``policy.judges[i]``).

    Step 4 showed the payload to be RFC 8785 canonical, and the records in normal form, so
    each one's RFC 8785 JSON is its span of the payload: the same bytes ``policy_digest``
    and ``digest_json`` serialise from the records (tests/receipts/test_canonical_fast.py),
    hashed without serialising them again.
    """
    text = payload.decode("utf-8")
    begin, end = member_span(text, ("predicate", "campaign", "policy"))
    judges = member_start(text, ("judges",), begin)
    return sha256_digest(text[begin:end]), [
        sha256_digest(text[a:b]) for a, b in element_spans(text, judges)
    ]


def _derived_fields(
    statement: Statement, derived: Decision, recorded: dict[str, Any], payload: bytes
) -> str:
    pred = statement.predicate
    policy = pred.campaign.policy
    problems: list[str] = []
    policy_sha256, judge_sha256 = _recorded_digests(payload)
    if pred.campaign.policy_sha256 != policy_sha256:
        problems.append("campaign.policy_sha256 is not the digest of campaign.policy")
    if (pred.campaign.id, pred.campaign.kind) != (policy.id, policy.kind):
        problems.append("campaign id/kind differ from the policy's")
    rubric_version = policy.rubric.version if policy.rubric else None
    if pred.campaign.rubric_version != rubric_version:
        problems.append("campaign.rubric_version differs from policy.rubric.version")
    level = replay_fidelity_level_for(policy)
    if pred.replay_fidelity_level != level:
        problems.append(f"replay_fidelity_level {pred.replay_fidelity_level}, derived {level}")
    if [j.id for j in pred.judges] != [j.id for j in policy.judges]:
        problems.append("judges do not list the policy's panel in order")
    for part, judge, digest in zip(pred.judges, policy.judges, judge_sha256, strict=False):
        same = (part.provider, part.model) == (judge.provider, judge.model)
        decoding = part.decoding.model_dump() == {
            "temperature": judge.temperature,
            "max_tokens": judge.max_tokens,
            "seed": judge.seed,
            "structured_output": judge.structured_output,
        }
        if not same or not decoding or part.config_sha256 != digest:
            problems.append(f"judges[{part.id}] differs from the policy's judge config")
    if not same_json(derived.model_dump(mode="json"), recorded):
        # Serialising alike is the usual case and implies every field agrees; the field by
        # field comparison (floats within tolerance) names what differs.
        problems.extend(decision_mismatches(derived, recorded))
    if problems:
        raise VerificationError("; ".join(problems), step=STEPS[6])
    return f"{len(recorded)} decision fields, policy and judge digests and RF level agree"


def _read_statement(payload: bytes) -> tuple[dict[str, Any], Statement]:
    """Step 4: the payload is strict JSON, its own RFC 8785 serialisation, and a statement
    in normal form.

    A receipt that holds takes one parse and one serialisation: the records re-dumped
    serialise to the payload bytes, which shows all three at once
    (``CanonicalCandidate.is_canonical_form_of``). Anything else is decided again check by
    check, so a receipt that fails gets the message of the first check it fails.
    """
    try:
        candidate = loads_candidate(payload, max_bytes=MAX_BUNDLE_BYTES, max_depth=MAX_DEPTH)
        return candidate.value, parse_statement(candidate)
    except Exception:  # noqa: BLE001 - every failure is decided again below, in order
        pass
    try:
        doc = loads_strict(payload, max_bytes=MAX_BUNDLE_BYTES, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise VerificationError(f"the payload is not strict JSON: {exc}", step=STEPS[3]) from exc
    if canonical_json_value(doc) != payload:
        raise VerificationError("the payload is not RFC 8785 canonical JSON", step=STEPS[3])
    return doc, parse_statement(doc)


def _summary(decision: Decision) -> str:
    outcome = decision.disposition or decision.rollout or f"equivalent={decision.equivalent}"
    return (
        f"{decision.kind} -> {outcome} ({decision.fold_rule}, {decision.samples} samples, "
        f"{decision.independent_votes} independent votes)"
    )


def verify_bundle(
    bundle_bytes: bytes,
    public_key: PublicKey | bytes,
    *,
    artifact_sha256: str | None = None,
    reference_hmac: str | None = None,
) -> VerifyReport:
    """Verify a receipt with a public key (object or PEM bytes), offline: steps 1-7.

    Never raises for a bad receipt: the report names the failing step. Raises ConfigError
    only for PEM bytes that are not a usable public key. ``artifact_sha256``, when given,
    must be the subject's digest (step 5). ``reference_hmac``: the keyed digest of a
    reference the verifier holds, under the campaign's reference key
    (``jurat.campaign.ReferenceKey.digest``); step 5 then requires every keyed reference
    digest the receipt records to be it, and, for a pair, takes ``artifact_sha256`` as its
    ``a``'s digest when it is not the pair's.
    """
    key = public_key_from_pem(public_key) if isinstance(public_key, bytes) else public_key
    return _verify(bundle_bytes, key, artifact_sha256, reference_hmac)


def rederive_bundle(bundle_bytes: bytes, *, artifact_sha256: str | None = None) -> VerifyReport:
    """Steps 1, 2 and 4-7 without a key: the decision re-derives, nobody is shown to sign it.

    For ``jurat replay`` without ``--key``. Step 3 does not run, so the report is never
    ``ok``; ``held`` says whether every other step held. Never raises for a bad receipt.
    """
    return _verify(bundle_bytes, None, artifact_sha256)


def _verify(bundle_bytes: bytes, key: PublicKey | None, expected: str | None,
            reference_hmac: str | None = None) -> VerifyReport:
    run = _Run()
    state: dict[str, Any] = {}

    def envelope() -> str:
        state["bundle"] = b = parse_bundle(bundle_bytes)
        detail = f"Sigstore bundle v0.3, DSSE envelope, 1 signature, {len(b.payload)} payload bytes"
        if b.tlog_entries:
            detail += f"; {b.tlog_entries} tlog entries not checked (offline verification)"
        return detail

    def payload_type() -> str:
        got = state["bundle"].payload_type
        if got != PAYLOAD_TYPE:
            raise VerificationError(
                f"payloadType {got[:80]!r} is not {PAYLOAD_TYPE}", step=STEPS[1]
            )
        return PAYLOAD_TYPE

    def signature() -> str:
        if key is None:  # not reached: step 3 runs only with a key
            raise VerificationError("no public key was given", step=STEPS[2])
        return _signature(state["bundle"], key)

    def statement() -> str:
        state["doc"], state["statement"] = _read_statement(state["bundle"].payload)
        return "in-toto Statement v1, predicate https://jurat.dev/decision/v1, normal form"

    def subject() -> str:
        detail, state["reference"] = _subject(state["statement"], expected, reference_hmac)
        return detail

    def rerun() -> str:
        state["derived"] = _fold(state["statement"])
        return _summary(state["derived"])

    ok = (
        run.step(1, envelope)
        and run.step(2, payload_type)
        and (key is None or run.step(3, signature))
        and run.step(4, statement)
        and run.step(5, subject)
        and run.step(6, rerun)
        and run.step(
            7,
            lambda: _derived_fields(
                state["statement"],
                state["derived"],
                state["doc"]["predicate"]["decision"],
                state["bundle"].payload,
            ),
        )
    )
    return VerifyReport(
        steps=tuple(run.steps),
        ok=bool(ok) and key is not None,
        statement=state.get("statement"),
        decision=state.get("derived"),
        reference_checked=state.get("reference"),
    )


def rederive(statement: dict[str, Any]) -> Decision:
    """Re-run ``jurat.fold.decide`` on a statement's recorded policy, gates and votes.

    Raises VerificationError (step ``parse statement`` or ``re-run fold``) when it cannot.
    """
    return _fold(parse_statement(statement))


def _fold(statement: Statement) -> Decision:
    try:
        return rederive_predicate(statement.predicate)
    except JuratError as exc:
        raise VerificationError(f"the fold refused the inputs: {exc}", step=STEPS[5]) from exc
    except Exception as exc:
        # Signed but hostile inputs (e.g. an answer without its keys) must fail this step,
        # not crash the verifier: the report is the contract.
        raise VerificationError(
            f"the fold failed on the recorded inputs: {type(exc).__name__}: {exc}", step=STEPS[5]
        ) from exc
