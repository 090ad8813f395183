"""Upstream (Stage 1/2) receipts: required when a campaign declares ``[upstream]``, each
checked against the key of its stage, its expiry and any later receipt of the same stage,
and bound by digest. One implementation for `jurat run` (per-artifact receipt files) and
`jurat serve` (a job's ``upstream_receipts``; service/_upstream.py says it in HTTP).

Seed 000, "Oracle service architecture" and "Structured model orchestration": the input
is "a frozen candidate version with authenticated Stage 1 and Stage 2 evidence", checked
by "receipt / version / access checks"; "Reject stale receipts or a candidate altered
after Stage 1". "Decision receipt and signing separation": the receipt "binds ... Stage
1/2 receipts".

Threat model. Whoever submits the artifact hands in the bundles and may have forged,
copied, edited, kept an expired or an outdated one. A bundle is taken only when (1) it is
a Sigstore bundle whose DSSE envelope carries an in-toto statement, (2) its signature
verifies with a key of ``[upstream] keys``, (3) the statement says it is of that key's
stage (``predicate.stage``; a key signs for one stage only), (4) one of its subjects is
this artifact's sha256 (else it is about other bytes: stale, or the candidate was altered
after that stage), (5) its ``predicate.not_after``, when present, has not passed, and (6)
no later receipt of the same stage for the same artifact (``predicate.issued_at``) is
presented with it or already bound in the ledger: the later one supersedes it. Every
stage the campaign requires must be there. The reasons given are jurat's own words and
the operator's stage names, never the bundle's text. What is bound is what was checked:
``{name, sha256, stage, key_sha256, issued_at}``, the sha256 of the signed DSSE payload
(independent of how the bundle's JSON was re-serialised).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import JsonValue

from jurat.campaign import campaign_line, read_inside
from jurat.canonical import digest_json, loads_strict, sha256_digest
from jurat.errors import CampaignError, JuratError
from jurat.ledger import Ledger
from jurat.models import Artifact, Campaign
from jurat.receipts import MAX_DEPTH, PAYLOAD_TYPE, PublicKey, pae, read_statement
from jurat.receipts._bundle import parse_bundle
from jurat.receipts._keys import public_key_der, public_key_from_pem, verify_bytes
from jurat.runner._job import job_identity

__all__ = [
    "UPSTREAM_BYTES",
    "KnownUpstream",
    "RunUpstream",
    "StageKey",
    "UpstreamRefused",
    "artifact_upstream",
    "check_upstream",
    "known_from_ledger",
    "stage_keys",
]

#: The largest upstream receipt read (Stage 1/2 receipts are small).
UPSTREAM_BYTES = 1024 * 1024
#: The largest key file read: a PEM public key is a few hundred bytes.
_KEY_BYTES = 64 * 1024
#: RFC 3339 in UTC, as jurat writes times: ``2026-01-31T12:00:00Z``, fractions allowed.
_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
_FORMAT_FIX = ("a Stage 1/2 receipt is an in-toto statement whose predicate holds "
               '"stage" and "issued_at" (RFC 3339 UTC), and optionally "not_after"')


class UpstreamRefused(JuratError):
    """An upstream receipt (``index``; None: one that is missing) refused, and why. The
    reason holds only jurat's words, stage names of the campaign and checked times."""

    def __init__(self, index: int | None, reason: str) -> None:
        self.index = index
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class StageKey:
    """One trusted key of ``[upstream] keys``."""

    stage: str
    """The stage it signs for."""
    key: PublicKey
    """The key."""
    sha256: str
    """sha256 of its DER SubjectPublicKeyInfo, hex: the signer key a receipt binds."""


@dataclass
class KnownUpstream:
    """The latest upstream receipt bound so far per (artifact sha256, stage): what a
    presented one must not be older than (seed 000: "Reject stale receipts")."""

    latest: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    """(artifact sha256, stage) -> (issued_at, payload sha256) of the latest bound."""

    def note(self, artifact_sha256: str, bound: Iterable[Mapping[str, Any]]) -> None:
        """Remember receipts bound for ``artifact_sha256`` (those bound before stages
        existed carry no stage or time and supersede nothing)."""
        for item in bound:
            stage, issued = item.get("stage"), item.get("issued_at")
            if not isinstance(stage, str) or not isinstance(issued, str):
                continue
            slot = (artifact_sha256, stage)
            if slot not in self.latest or self.latest[slot][0] < issued:
                self.latest[slot] = (issued, str(item.get("sha256")))


def stage_keys(campaign: Campaign) -> tuple[StageKey, ...]:
    """The keys of ``[upstream] keys``, read through the campaign's confined reader
    (``campaign/_files.py``) within ``_KEY_BYTES``. Raises CampaignError naming
    ``upstream.keys[i].path``, or ConfigError for a file that holds no public key."""
    if campaign.upstream is None:
        return ()
    keys = []
    for i, entry in enumerate(campaign.upstream.keys):
        where = f"upstream.keys[{i}].path"
        pem = read_inside(campaign, entry.path, where, cap=_KEY_BYTES,
                          what=f"key file {entry.path!r}")
        key = public_key_from_pem(pem, source=f"{campaign.source}: {where} {entry.path!r}")
        keys.append(StageKey(stage=entry.stage, key=key,
                             sha256=hashlib.sha256(public_key_der(key)).hexdigest()))
    return tuple(keys)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not _UTC.match(value):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _shown(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class _Checked:
    index: int
    stage: str
    issued_at: datetime
    bound: dict[str, JsonValue]


def _one(index: int, raw: bytes, keys: Sequence[StageKey], artifact_sha256: str,
         now: datetime) -> _Checked:
    def refuse(why: str) -> UpstreamRefused:
        return UpstreamRefused(index, why)

    if len(raw) > UPSTREAM_BYTES:
        raise refuse(f"larger than {UPSTREAM_BYTES} bytes")
    try:
        parsed = parse_bundle(raw)
    except JuratError as exc:
        raise refuse("not a Sigstore bundle with one DSSE signature") from exc
    if parsed.payload_type != PAYLOAD_TYPE:
        raise refuse(f"payloadType is not {PAYLOAD_TYPE}")
    signed = pae(parsed.payload_type, parsed.payload)
    signers = [k for k in keys if verify_bytes(k.key, parsed.signature, signed)]
    if not signers:
        raise refuse("its signature does not verify with any key this campaign trusts "
                     "(altered, or signed by another key)")
    try:
        statement = loads_strict(parsed.payload, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise refuse("its payload is not a JSON statement") from exc
    if not isinstance(statement, dict) or not isinstance(statement.get("predicate"), dict):
        raise refuse(f"its statement has no predicate ({_FORMAT_FIX})")
    predicate = statement["predicate"]
    stage = predicate.get("stage")
    signer = next((k for k in signers if k.stage == stage), None)
    if signer is None:
        declared = sorted({k.stage for k in keys})
        if stage in declared:
            raise refuse(f"foreign stage: it says it is a {stage} receipt, but it is signed "
                         f"by the key for {signers[0].stage}")
        raise refuse(f"foreign stage: it is signed by the key for {signers[0].stage} but "
                     f"does not say it is a {signers[0].stage} receipt (predicate.stage)")
    subjects = statement.get("subject")
    digests = [s.get("digest", {}).get("sha256") for s in subjects or []
               if isinstance(s, dict) and isinstance(s.get("digest"), dict)]
    if artifact_sha256 not in digests:
        raise refuse("it is about other bytes than this artifact (stale, or the candidate "
                     "was altered after that stage)")
    issued = _time(predicate.get("issued_at"))
    if issued is None:
        raise refuse(f"its predicate.issued_at is not an RFC 3339 UTC time ({_FORMAT_FIX})")
    if "not_after" in predicate:
        expires = _time(predicate["not_after"])
        if expires is None:
            raise refuse("its predicate.not_after is not an RFC 3339 UTC time")
        if expires <= now:
            raise refuse(f"expired: its not_after {_shown(expires)} has passed")
    kind = statement.get("predicateType")
    name = kind if isinstance(kind, str) and 0 < len(kind) <= 200 else f"upstream[{index}]"
    return _Checked(index=index, stage=signer.stage, issued_at=issued, bound={
        "name": name, "sha256": sha256_digest(parsed.payload), "stage": signer.stage,
        "key_sha256": signer.sha256, "issued_at": _shown(issued)})


def check_upstream(raws: Sequence[bytes], keys: Sequence[StageKey],
                   required: Sequence[str], artifact_sha256: str, *,
                   now: datetime | None = None,
                   known: KnownUpstream | None = None) -> tuple[dict[str, JsonValue], ...]:
    """Each receipt checked (the module's six conditions) and bound, in the order given;
    raises UpstreamRefused for the first that is not acceptable, or for the first
    ``required`` stage none is of. With no keys, any receipt is refused."""
    if raws and not keys:
        raise UpstreamRefused(None, "this campaign trusts no upstream keys, so it cannot "
                              "check upstream receipts")
    now = now or datetime.now(UTC)
    checked = [_one(i, raw, keys, artifact_sha256, now) for i, raw in enumerate(raws)]
    for item in checked:
        same = [o for o in checked if o.stage == item.stage and o is not item]
        for other in same:
            if other.bound["sha256"] == item.bound["sha256"]:
                raise UpstreamRefused(max(item.index, other.index),
                                      f"the same {item.stage} receipt is given twice")
            if other.issued_at >= item.issued_at:
                raise UpstreamRefused(item.index, (
                    f"superseded: upstream receipt [{other.index}] is a {item.stage} receipt "
                    "of this artifact issued "
                    + ("at the same time" if other.issued_at == item.issued_at else "later")))
        latest = known.latest.get((artifact_sha256, item.stage)) if known else None
        if latest is not None and latest[1] != item.bound["sha256"] and (
                latest[0] >= str(item.bound["issued_at"])):
            raise UpstreamRefused(item.index, (
                f"superseded: a {item.stage} receipt of this artifact issued at {latest[0]} "
                "is already bound in this ledger"))
    have = {item.stage for item in checked}
    for stage in required:
        if stage not in have:
            raise UpstreamRefused(None, f"missing: no {stage} receipt (this campaign requires "
                                  f"{', '.join(required)})")
    return tuple(item.bound for item in checked)


def artifact_upstream(campaign: Campaign, keys: Sequence[StageKey], artifact: Artifact,
                      where: str, *, now: datetime | None = None,
                      known: KnownUpstream | None = None) -> tuple[dict[str, JsonValue], ...]:
    """`jurat run`'s check of one artifact: its ``upstream`` files read through the
    campaign's confined reader and checked (``check_upstream``). Raises CampaignError
    naming the artifact, ``where`` (its place: ``artifacts[2]``), the file and the reason."""
    trust = campaign.upstream
    if trust is None:
        if artifact.upstream:
            raise CampaignError(
                f"artifact {artifact.id!r} names upstream receipts, but the campaign has no "
                "[upstream] keys to check them with", file=campaign.source,
                field=f"{where}.upstream",
                fix="add [upstream] keys = [{path = ..., stage = ...}], or remove upstream")
        return ()
    raws = [read_inside(campaign, rel, f"{where}.upstream[{i}]", cap=UPSTREAM_BYTES,
                        what=f"upstream receipt {rel!r}")
            for i, rel in enumerate(artifact.upstream)]
    try:
        return check_upstream(raws, keys, trust.stages, artifact.sha256, now=now, known=known)
    except UpstreamRefused as exc:
        if exc.index is None:
            raise CampaignError(
                f"artifact {artifact.id!r}: {exc.reason}", file=campaign.source,
                field=f"{where}.upstream", line=campaign_line(campaign.source, where),
                fix="list the artifact's current receipt of every required stage in its "
                    'upstream = ["receipts/<id>.stage1.json", ...]') from exc
        rel = artifact.upstream[exc.index]
        field = f"{where}.upstream[{exc.index}]"
        raise CampaignError(
            f"artifact {artifact.id!r}: upstream receipt {rel!r} is refused: {exc.reason}",
            file=campaign.source, field=field, line=campaign_line(campaign.source, field),
            fix="give the current receipt of this artifact's bytes, as its stage's signer "
                "issued it") from exc


def known_from_ledger(ledger: Ledger, campaign_id: str) -> KnownUpstream:
    """The upstream receipts the campaign's receipts in ``ledger`` bound, latest per
    (artifact, stage)."""
    known = KnownUpstream()
    for _, signed in ledger.receipts(campaign_id=campaign_id):
        predicate = read_statement(signed).get("predicate", {})
        artifact = predicate.get("artifact", {}).get("sha256")
        bound = predicate.get("inputs", {}).get("upstream_receipts", [])
        if isinstance(artifact, str) and isinstance(bound, list):
            known.note(artifact, [b for b in bound if isinstance(b, dict)])
    return known


class RunUpstream:
    """`jurat run`'s upstream receipts, job by job: each artifact's files checked again
    when its job starts (they may have changed since preflight), its job bound to them
    (another receipt is another job, whose receipt supersedes the older review) and the
    receipt's ``inputs.upstream_receipts`` filled with what was checked."""

    def __init__(self, campaign: Campaign, ledger: Ledger, policy_sha256: str,
                 attempt: int) -> None:
        self.campaign = campaign
        self.keys = stage_keys(campaign)
        self.policy_sha256 = policy_sha256
        self.attempt = attempt
        self.known = (known_from_ledger(ledger, campaign.id) if campaign.upstream is not None
                      else KnownUpstream())

    def refuse_superseded(self, artifacts: Iterable[Artifact]) -> None:
        """Before anything is written: CampaignError (exit 3) for the first artifact whose
        receipt is older than one this ledger already bound for it (preflight, which has
        no ledger, checked everything else)."""
        if not self.known.latest:
            return
        for artifact in artifacts:
            artifact_upstream(self.campaign, self.keys, artifact, "artifact", known=self.known)

    def job(self, artifact: Artifact) -> dict[str, Any]:
        """``run_one``'s ``job`` and ``inputs`` for ``artifact``; none without receipts."""
        bound = artifact_upstream(self.campaign, self.keys, artifact, "artifact",
                                  known=self.known)
        if not bound:
            return {}
        base = job_identity(self.policy_sha256, artifact, self.campaign.policy, self.attempt)
        self.known.note(artifact.sha256, bound)
        return {"job": digest_json({"job": base, "upstream": list(bound)}),
                "inputs": {"upstream_receipts": list(bound)}}
