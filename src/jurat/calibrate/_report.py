"""``calibrate``: verified receipts and gold labels in, one agreement per rater out.

Steps:

1. Verify every receipt (signature, subject, re-derivation: ``verify_bundle``); one that
   does not verify stops the calibration, naming it: unverified evidence is never counted.
2. Keep each artifact's latest review; all receipts must be of one campaign.
3. Read the kind's gold labels; a label the kind does not have stops it, naming the row.
4. For the artifacts with both, each judge's own label and the folded decision's
   (``rater_labels``), then each rater's agreement with gold (``agreement``).

The report binds what it was computed from: each receipt's digest and the gold file's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from jurat.calibrate._agreement import Agreement, agreement
from jurat.calibrate._gold import GOLD_LABELS, load_gold, normalise_label
from jurat.calibrate._labels import DECISION, rater_labels
from jurat.errors import ConfigError, VerificationError
from jurat.models import Frozen
from jurat.receipts import (
    MAX_BUNDLE_BYTES,
    PublicKey,
    Statement,
    read_at_most,
    receipt_digest,
    verify_bundle,
)

__all__ = ["CalibrationReport", "calibrate"]


class CalibrationReport(Frozen):
    """Agreement with gold of every judge of a campaign and of its folded decisions."""

    format: str = "jurat.calibration/v1"
    """Report format id."""
    campaign_id: str
    """The campaign every receipt belongs to."""
    kind: str
    """The campaign's kind; it fixes the labels compared."""
    gold_sha256: str
    """SHA-256 of the gold file's bytes."""
    receipts: dict[str, str]
    """Artifact id → sha256 of the receipt compared (the latest review)."""
    unlabelled: tuple[str, ...]
    """Artifacts with a receipt and no gold label (not compared)."""
    without_receipt: int = Field(ge=0)
    """Gold rows with no receipt among those given (not compared)."""
    raters: tuple[Agreement, ...]
    """The judges in panel order, then ``decision``."""


def _read(path: Path) -> bytes:
    try:
        return read_at_most(path, MAX_BUNDLE_BYTES)
    except OSError as exc:
        raise ConfigError(f"cannot read receipt {path}: {exc.strerror or exc}") from exc


def _latest(receipts: Sequence[Path], key: PublicKey) -> dict[str, tuple[Statement, str]]:
    """Steps 1-2: artifact id → (statement, receipt digest) of its latest verified review."""
    latest: dict[str, tuple[Statement, str]] = {}
    campaign: str | None = None
    for path in receipts:
        data = _read(path)
        report = verify_bundle(data, key)
        if not report.ok or report.statement is None:
            failed = report.failed
            where = f"step {failed.number} ({failed.name})" if failed else "a step"
            raise VerificationError(f"{path}: {where} failed; calibration counts only "
                                    "receipts that verify (fix: `jurat verify` it)")
        # The statement the verifier read and re-derived, not a second reading of the bytes.
        statement = report.statement
        predicate = statement.predicate
        if campaign is None:
            campaign = predicate.campaign.id
        elif predicate.campaign.id != campaign:
            raise ConfigError(f"{path}: receipt of campaign {predicate.campaign.id!r}, the "
                              f"others are of {campaign!r} (fix: calibrate one campaign)")
        artifact = predicate.artifact.id
        held = latest.get(artifact)
        if held is None or predicate.review.version > held[0].predicate.review.version:
            latest[artifact] = (statement, receipt_digest(data))
    return latest


def calibrate(receipts: Sequence[Path], gold_path: Path, key: PublicKey) -> CalibrationReport:
    """Compare the receipts' judges and decisions with ``gold_path``; see the module."""
    if not receipts:
        raise ConfigError("no receipts to calibrate (fix: name `jurat run --out`'s directory)")
    latest = _latest(receipts, key)
    first = next(iter(latest.values()))[0].predicate
    kind = first.campaign.policy.kind
    if kind not in GOLD_LABELS:
        raise ConfigError(f"jurat calibrate reads rubric, pairwise and equivalence "
                          f"campaigns; {first.campaign.id!r} is {kind!r}")
    raw_gold = load_gold(gold_path)
    gold: dict[str, str] = {}
    for artifact, raw in raw_gold.labels.items():  # step 3
        label = normalise_label(kind, raw)
        if label is None:
            raise ConfigError(f"{gold_path}: artifact {artifact!r}: field `label` {raw!r} is "
                              f"not a {kind} label (fix: one of {list(GOLD_LABELS[kind])})")
        gold[artifact] = label
    compared = [a for a in latest if a in gold]
    judges = [j.id for j in first.campaign.policy.judges]
    said = {a: rater_labels(latest[a][0]) for a in compared}  # step 4
    truth = [gold[a] for a in compared]
    raters = tuple(
        agreement(rater, GOLD_LABELS[kind], truth, [said[a].get(rater) for a in compared])
        for rater in (*judges, DECISION)
    )
    return CalibrationReport(
        campaign_id=first.campaign.id,
        kind=kind,
        gold_sha256=raw_gold.sha256,
        receipts={a: latest[a][1] for a in compared},
        unlabelled=tuple(sorted(a for a in latest if a not in gold)),
        without_receipt=sum(1 for a in gold if a not in latest),
        raters=raters,
    )
