"""The signer's checks, in the order docs/signer.md gives, each refusing with its name.

Threat model. Whoever can reach the socket can send anything: a forged or re-signed
receipt, a receipt from another key, a tampered predicate, a superseded review, the same
receipt again, or extra fields asking for a destination, an amount or calldata. The
signer trusts only its own inputs: the registry and the allowlisted receipt keys it was
started with, the log public key(s), its state file, and the rows of the ledger given with
``--ledger`` only as far as a checkpoint signed by a log key vouches for them
(``Ledger.current_receipt``). A request carries a receipt and optionally its proof,
nothing else, and the settlement is built from the registry alone (``_typed``), so no
field of the request can choose what is paid, to whom or through which call.

The taint rule. Even inside a receipt that verifies, some fields were written by the judged
party, not by the panel: the artifact id, the contributor name, the task id (a contributor
chooses them when it submits to ``jurat serve``). None of them decides a grant except
compared for equality: a contributor name is looked up as an operator-written key of the
registry (it finds a payout address or nothing), an artifact id can only refuse (a later
review of the same id), and the task enters only as a digest. What a settlement pays for
is the artifact's digest, ``predicate.artifact.sha256``, the bytes the panel judged: one
grant per (campaign, artifact digest), or per (campaign, task digest, artifact digest)
where the registry declares ``settle_once_per = "task_artifact"``. Choosing another id,
another contributor or another submission for the same bytes gets no second settlement.

1. request       one strict, bounded JSON object with ``receipt`` (and ``proof``) only
2. signature     the receipt verifies (steps 1-3 of docs/receipt-format.md §7) with an
                 allowlisted receipt key
3. rederivation  the fold re-derives the signed decision (steps 4-7), by jurat's verifier
4. campaign      the campaign is in the registry (its pinned policy, if any), and the
                 contributor has a payout address there
5. decision      the re-derived decision accepts: ``accept`` (an adjudicated accept
                 counts) or ``SHIP``
6. review        the review version is current (``_review``)
7. replay        neither this receipt (by payload and by receipt digest), nor the same
                 artifact bytes (by digest, per task where the registry says so) under any
                 id, nor another review of the same artifact id was authorised before
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from jurat.canonical import canonical_json_value, digest_json, loads_strict, sha256_digest
from jurat.errors import JuratError
from jurat.models import Decision, Frozen
from jurat.receipts import (
    MAX_BUNDLE_BYTES,
    MAX_DEPTH,
    MAX_PROOF_BYTES,
    PublicKey,
    VerifyReport,
    verify_bundle,
)
from jurat.signer._registry import Registry, RegistryCampaign
from jurat.signer._state import SignerState

__all__ = [
    "CHECKS",
    "MAX_REQUEST_BYTES",
    "Authentic",
    "SignerRefusal",
    "Request",
    "check_campaign",
    "check_decision",
    "check_replay",
    "check_signature",
    "parse_request",
    "settle_key",
    "task_digest",
]

#: The check names, in order: a refusal names one of them (docs/design.md, part 2).
CHECKS = ("request", "signature", "rederivation", "campaign", "decision", "review", "replay")
#: A request line: a receipt, a proof (which holds the receipt again, as base64) and a
#: little JSON around them.
MAX_REQUEST_BYTES = MAX_BUNDLE_BYTES + MAX_PROOF_BYTES + 4096
_FIELDS = frozenset({"receipt", "proof"})
#: The number of the last step that authenticates the receipt (verify signature).
_SIGNATURE_STEP = 3


class SignerRefusal(JuratError):
    """A request the signer refuses: ``check`` names the check, the message says why."""

    def __init__(self, check: str, reason: str) -> None:
        super().__init__(reason)
        self.check = check
        self.reason = reason


class Request(Frozen):
    """A request that passed check 1."""

    bundle: bytes
    """The receipt as RFC 8785 bytes (jurat writes receipts canonically, §2.1)."""
    receipt_sha256: str
    """The receipt digest (docs/receipt-format.md §2.1)."""
    proof: dict[str, Any] | None
    """The inclusion proof, as sent (checked by ``_review``)."""


class Authentic(Frozen):
    """A receipt that passed checks 2 and 3: what the later checks read."""

    report: VerifyReport
    """jurat's verification report (steps 1-7 held)."""
    decision: Decision
    """The re-derived decision (not the recorded one: they are equal, this one is ours)."""
    payload_sha256: str
    """SHA-256 of the DSSE payload: the settlement's ``receipt``."""
    campaign_id: str
    """``predicate.campaign.id``."""
    policy_sha256: str
    """``predicate.campaign.policy_sha256``."""
    artifact_id: str
    """``predicate.artifact.id`` (chosen by the contributor: it may only refuse)."""
    artifact_sha256: str
    """``predicate.artifact.sha256``, equal to the statement's subject digest (step 5):
    the work a settlement pays for."""
    task_sha256: str
    """``task_digest`` of ``predicate.inputs.task.id``."""
    task_declared: bool = True
    """Whether the task is one of the campaign's ``[[tasks]]`` (the receipt binds its
    statement's digest): a free label is the contributor's to vary."""
    work_sha256: str = ""
    """``predicate.inputs.work.sha256``: the normalised work a settlement pays for once
    (issue 37); the artifact digest for receipts written before it."""
    duplicate_of: str | None = None
    """``predicate.inputs.duplicate_of``: the job that submitted this work first, when that
    was another contributor's."""
    contributor: str | None
    """``predicate.inputs.contributor``."""
    review_version: int
    """``predicate.review.version``."""
    supersedes: str | None
    """``predicate.review.supersedes``."""


def parse_request(line: bytes) -> Request:
    """Check 1: one JSON object with a receipt and optionally a proof, and nothing else."""
    try:
        doc = loads_strict(line, max_bytes=MAX_REQUEST_BYTES, max_depth=MAX_DEPTH + 1)
    except (ValueError, JuratError) as exc:
        raise SignerRefusal("request", f"not one strict JSON object: {exc}") from exc
    if not isinstance(doc, dict):
        raise SignerRefusal("request", "the request is not a JSON object")
    extra = sorted(set(doc) - _FIELDS)
    if extra:
        shown = ", ".join(repr(name[:40]) for name in extra[:8])
        raise SignerRefusal(
            "request", f"unknown field(s) {shown}: a request carries a receipt and "
            "optionally its proof, nothing else (no destination, amount or calldata: "
            "the signer builds the settlement from its own registry)")
    receipt, proof = doc.get("receipt"), doc.get("proof")
    if not isinstance(receipt, dict):
        raise SignerRefusal("request", "`receipt` is missing or not a JSON object (the bundle)")
    if proof is not None and not isinstance(proof, dict):
        raise SignerRefusal("request", "`proof` is not a JSON object (the .proof.json file)")
    try:
        bundle = canonical_json_value(receipt)
    except (ValueError, JuratError) as exc:
        raise SignerRefusal("request", f"the receipt cannot be canonicalised: {exc}") from exc
    return Request(bundle=bundle, receipt_sha256=sha256_digest(bundle), proof=proof)


def _step_text(report: VerifyReport) -> str:
    failed = report.failed
    return "" if failed is None else f"step {failed.number} ({failed.name}): {failed.detail}"


def check_signature(request: Request, keys: Sequence[PublicKey]) -> VerifyReport:
    """Check 2: some allowlisted key verifies the signature (jurat's verifier, steps 1-3).

    Returns the report of that key, whose later steps check 3 reads.
    """
    first: VerifyReport | None = None
    for key in keys:
        report = verify_bundle(request.bundle, key)
        failed = report.failed
        if failed is None or failed.number > _SIGNATURE_STEP:
            return report
        first = first or report
    if first is None:
        raise SignerRefusal("signature", "the signer has no allowlisted receipt key")
    raise SignerRefusal("signature", f"not signed by an allowlisted receipt key ({len(keys)} "
                        f"allowed): {_step_text(first)}")


def task_digest(task_id: str | None) -> str:
    """The SHA-256 of the RFC 8785 JSON of a receipt's task id (``inputs.task.id``; null
    when it has none): the contributor's task id enters a grant only as this digest."""
    return digest_json({"task": task_id})


def settle_key(receipt: Authentic, entry: RegistryCampaign) -> str:
    """What ``entry``'s campaign pays once: the work's digest (``inputs.work``: the
    artifact modulo what the campaign says does not make new work; its bytes for receipts
    written before), or with ``settle_once_per = "task_artifact"`` the digest of (task
    digest, work digest). Unique per campaign in the state (the last guard of check 7)."""
    if entry.settle_once_per == "task_artifact":
        return digest_json({"task_sha256": receipt.task_sha256,
                            "artifact_sha256": receipt.work_sha256})
    return receipt.work_sha256


def check_rederivation(report: VerifyReport, bundle: dict[str, Any] | bytes) -> Authentic:
    """Check 3: steps 4-7 held, so the signed decision is what the fold gives its inputs.

    What the later checks read comes from the statement as step 4 parsed it (the typed
    ``Statement`` of ``VerifyReport``), never from the receipt's JSON again."""
    if report.failed is not None or report.decision is None or report.statement is None:
        raise SignerRefusal("rederivation", _step_text(report) or "the receipt was not re-derived")
    doc = loads_strict(bundle, max_bytes=MAX_BUNDLE_BYTES, max_depth=MAX_DEPTH) \
        if isinstance(bundle, bytes) else bundle
    # Step 1 already decoded this field strictly; here it is only hashed.
    payload = base64.b64decode(doc["dsseEnvelope"]["payload"], validate=True)
    predicate = report.statement.predicate
    return Authentic(
        report=report,
        decision=report.decision,
        payload_sha256=sha256_digest(payload),
        campaign_id=predicate.campaign.id,
        policy_sha256=predicate.campaign.policy_sha256,
        artifact_id=predicate.artifact.id,
        artifact_sha256=predicate.artifact.sha256,
        task_sha256=task_digest(predicate.inputs.task.id),
        task_declared=predicate.inputs.task.statement_sha256 is not None,
        work_sha256=(predicate.inputs.work.sha256 if predicate.inputs.work is not None
                     else predicate.artifact.sha256),
        duplicate_of=predicate.inputs.duplicate_of,
        contributor=predicate.inputs.contributor,
        review_version=predicate.review.version,
        supersedes=predicate.review.supersedes,
    )


def check_campaign(receipt: Authentic, registry: Registry) -> tuple[RegistryCampaign, str]:
    """Check 4: the campaign is the registry's, and the contributor has an address there."""
    entry = registry.find(receipt.campaign_id)
    if entry is None:
        raise SignerRefusal("campaign", f"campaign {receipt.campaign_id[:200]!r} is not in the "
                            "signer's registry")
    if entry.policy_sha256 is not None and entry.policy_sha256 != receipt.policy_sha256:
        raise SignerRefusal("campaign", f"campaign {entry.id!r} is registered with policy "
                            f"sha256:{entry.policy_sha256}, the receipt's is "
                            f"sha256:{receipt.policy_sha256}")
    if receipt.contributor is None:
        raise SignerRefusal(
            "campaign", "the receipt names no contributor, so the registry gives no "
            "recipient")
    if entry.settle_once_per == "task_artifact" and not receipt.task_declared:
        raise SignerRefusal(
            "campaign", f"campaign {entry.id!r} settles once per task, and this receipt's "
            "task is no [[tasks]] entry of the campaign (it binds no task statement): a "
            "contributor's free label would make one piece of work several settlements")
    recipient = entry.recipient(receipt.contributor)
    if recipient is None:
        raise SignerRefusal(
            "campaign", f"contributor {receipt.contributor[:200]!r} has no recipient "
            f"address in the registry for campaign {entry.id!r}")
    return entry, recipient


def check_decision(receipt: Authentic) -> str:
    """Check 5: the re-derived decision accepts; returns the word that accepted."""
    decision = receipt.decision
    if decision.kind in ("rubric", "pairwise"):
        if decision.disposition == "accept":
            return "accept (adjudicated)" if decision.adjudicated else "accept"
        raise SignerRefusal("decision", f"the decision is {decision.disposition}, not accept")
    if decision.kind == "criteria":
        if decision.rollout == "SHIP":
            return "SHIP"
        raise SignerRefusal("decision", f"the rollout is {decision.rollout}, not SHIP")
    raise SignerRefusal("decision", f"a {decision.kind} decision is not an accepting decision "
                        "(accept or SHIP)")


def check_replay(receipt: Authentic, request: Request, state: SignerState,
                 entry: RegistryCampaign) -> None:
    """Check 7: not authorised before, by payload or receipt digest, by the artifact's
    digest (per task where ``entry`` says so), or by artifact id.

    The payload digest catches the same statement signed twice (ECDSA signatures are
    randomised, so its two bundles differ: docs/receipt-format.md §4.2). The artifact digest
    catches the same bytes under another id, from another contributor or in another
    submission: ids are the contributor's to choose, the digest is not. The artifact id
    catches a second settlement for one artifact through a later review version (whose
    bytes may differ). A duplicate names the first grant by its nonce only: its artifact id
    may be another contributor's.
    """
    done = state.grant_for(receipt.payload_sha256, request.receipt_sha256)
    if done is not None:
        raise SignerRefusal("replay", f"this receipt was already authorised (nonce {done.nonce})")
    if receipt.duplicate_of is not None:
        # Whatever became of the first (pending, paid, rejected): its submitter owns the
        # work, and a copy with another explanation is not new work (docs/signer.md).
        raise SignerRefusal("replay", f"a copy of the work first submitted as job "
                            f"{receipt.duplicate_of} by another contributor: the first "
                            "submitter owns it, and a copy is never settled")
    per_task = entry.settle_once_per == "task_artifact"
    first = state.grant_for_work(receipt.campaign_id, receipt.work_sha256,
                                 receipt.task_sha256 if per_task else None)
    if first is not None:
        work = "this work for this task" if per_task else "this work"
        raise SignerRefusal("replay", f"duplicate of the grant with nonce {first.nonce}: {work} "
                            f"(sha256:{receipt.work_sha256}) was already settled in campaign "
                            f"{receipt.campaign_id[:200]!r}; one settlement per piece of work, "
                            "whatever its artifact id, contributor or submission")
    earlier = state.grant_for_artifact(receipt.campaign_id, receipt.artifact_id)
    if earlier is not None:
        raise SignerRefusal("replay", f"review v{earlier.review_version} of artifact "
                            f"{receipt.artifact_id[:200]!r} was already authorised (nonce "
                            f"{earlier.nonce}): one settlement per artifact")
