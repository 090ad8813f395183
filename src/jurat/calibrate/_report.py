"""``calibrate``: verified receipts and gold labels in, one agreement per rater out.

Steps:

1. Verify every receipt (signature, subject, re-derivation: ``verify_bundle``); one that
   does not verify stops the calibration, naming it: unverified evidence is never counted.
2. Keep each artifact's latest review; all receipts must be of one campaign.
3. Read the kind's gold labels; a label the kind does not have stops it, naming the row.
4. For the artifacts with both, each judge's own label and the folded decision's
   (``rater_labels``), then each rater's agreement with gold (``agreement``): a judge's
   only over the artifacts it was asked about (``asked``). The artifacts settled without
   any judge (a deterministic settlement, a veto) are reported apart (``settled``): the
   decision's agreement with gold on them, which is the pipeline's, not a judge's.
   Criteria campaigns: one rater per (judge, criterion) (``criteria_raters``).

The report binds what it was computed from: each receipt's digest and the gold file's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from jurat.calibrate._agreement import Agreement, agreement
from jurat.calibrate._criteria import criteria_raters, read_criteria_gold
from jurat.calibrate._gold import GOLD_LABELS, Gold, load_gold, normalise_label
from jurat.calibrate._labels import DECISION, asked, rater_labels, settled_without_judge
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

__all__ = ["SETTLED", "CalibrationReport", "calibrate"]

#: The rater name of the artifacts settled without a judge (never a judge's id: ids are
#: judge ids, and this one has a space).
SETTLED = "settled without a judge"


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
    """The judges in panel order, then ``decision``; each judge over the artifacts it was
    asked about. Criteria: every (judge, criterion), in panel then criterion order, and no
    ``decision`` (the rollout is not a per-criterion label)."""
    settled: Agreement | None = None
    """The artifacts no judge was asked about (settled deterministically, or vetoed): the
    folded decision's agreement with gold on them, the pipeline's and not any judge's, and
    not in the exit status. None when there are none, and for criteria (a vetoed rollout is
    no criterion verdict: only counted, in ``settled_by``)."""
    settled_by: dict[str, int] = {}
    """Why no judge was asked (the receipts' ``judges_skipped``, jurat's own words) → how
    many compared artifacts."""


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


def _labels(kind: str, raw_gold: Gold, gold_path: Path) -> dict[str, str]:
    """Step 3 for the kinds with one label per artifact."""
    gold: dict[str, str] = {}
    for artifact, raw in raw_gold.labels.items():
        label = normalise_label(kind, raw)
        if label is None:
            raise ConfigError(f"{gold_path}: artifact {artifact!r}: field `label` {raw!r} is "
                              f"not a {kind} label (fix: one of {list(GOLD_LABELS[kind])})")
        gold[artifact] = label
    return gold


def calibrate(receipts: Sequence[Path], gold_path: Path, key: PublicKey) -> CalibrationReport:
    """Compare the receipts' judges and decisions with ``gold_path``; see the module."""
    if not receipts:
        raise ConfigError("no receipts to calibrate (fix: name `jurat run --out`'s directory)")
    latest = _latest(receipts, key)
    first = next(iter(latest.values()))[0].predicate
    policy = first.campaign.policy
    kind = policy.kind
    if kind not in GOLD_LABELS:
        raise ConfigError(f"jurat calibrate reads rubric, pairwise, equivalence and criteria "
                          f"campaigns; {first.campaign.id!r} is {kind!r}")
    raw_gold = load_gold(gold_path)
    statements = {a: held[0] for a, held in latest.items()}
    judges = [j.id for j in policy.judges]
    gold_ids: set[str]
    if kind == "criteria":
        assert policy.criteria is not None
        criteria = tuple(c.id for c in policy.criteria.items)
        by_criterion = read_criteria_gold(raw_gold.labels, criteria, gold_path)
        gold_ids = set(by_criterion)
        compared = [a for a in latest if a in gold_ids]
        raters = criteria_raters(statements, compared, by_criterion, judges, criteria)
        settled = None
    else:
        gold = _labels(kind, raw_gold, gold_path)
        gold_ids = set(gold)
        compared = [a for a in latest if a in gold_ids]
        said = {a: rater_labels(statements[a]) for a in compared}  # step 4
        judged: list[Agreement] = []
        for judge in judges:
            rows = [a for a in compared if asked(statements[a], judge)]
            judged.append(agreement(judge, GOLD_LABELS[kind], [gold[a] for a in rows],
                                    [said[a][judge] for a in rows],
                                    not_asked=len(compared) - len(rows)))
        judged.append(agreement(DECISION, GOLD_LABELS[kind], [gold[a] for a in compared],
                                [said[a][DECISION] for a in compared]))
        raters = tuple(judged)
        alone = [a for a in compared if settled_without_judge(statements[a]) is not None]
        settled = agreement(SETTLED, GOLD_LABELS[kind], [gold[a] for a in alone],
                            [said[a][DECISION] for a in alone]) if alone else None
    reasons = Counter(why for a in compared
                      if (why := settled_without_judge(statements[a])) is not None)
    return CalibrationReport(
        campaign_id=first.campaign.id,
        kind=kind,
        gold_sha256=raw_gold.sha256,
        receipts={a: latest[a][1] for a in compared},
        unlabelled=tuple(sorted(a for a in latest if a not in gold_ids)),
        without_receipt=sum(1 for a in gold_ids if a not in latest),
        raters=raters,
        settled=settled,
        settled_by=dict(sorted(reasons.items())),
    )
