"""The decision fold ``jurat.fold/v2`` (and ``v1``, which receipts that name it re-derive
with): (policy, gates, votes) → Decision. Pure: no I/O, no clock.

v2 differs from v1 in two rules (docs/receipt-format.md §10): the risk tier counts model
families, not judges (seed 000, "multiple calls to one model are not independent
witnesses"), and a criterion's undrawn samples are read as curtailed when the drawn ones
settle it (fold/_curtail.py). Everything else is the same code path.

Every rule cites the seed section it implements; docs/receipt-format.md §8 states them.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, cast

from jurat.errors import FoldInputError
from jurat.fold._adjudication import apply_adjudication
from jurat.fold._consensus import pairwise_consensus
from jurat.fold._criterion import fold_criterion, meets, rollout, stability_gate
from jurat.fold._curtail import CURTAIL_RULE, settled
from jurat.fold._equivalence import equivalence_verdict
from jurat.fold._gates import gate_veto
from jurat.fold._grounded import apply_grounding
from jurat.fold._rubric import RubricScorer, ScoreKey, basis_points
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    Adjudication,
    CriterionOutcome,
    Decision,
    Disposition,
    GateOutcome,
    JudgeConfig,
    Policy,
    RiskTier,
    Vote,
)
from jurat.models._grounding import WorkClaim

#: The rule new decisions are folded with.
FOLD_RULE = "jurat.fold/v2"
#: The first rule: judges count as independent votes, missing samples are errors. Receipts
#: that name it re-derive with it, byte for byte.
FOLD_RULE_V1 = "jurat.fold/v1"
FOLD_RULES = (FOLD_RULE_V1, FOLD_RULE)
RUBRIC_OPERATOR = "median-of-judge-medians"



def _word(disposition: str) -> Disposition:
    # The rules below only ever produce the three words; the record re-checks them.
    return cast(Disposition, disposition)

def decide(
    policy: Policy,
    gates: Sequence[GateOutcome],
    votes: Sequence[Vote],
    *,
    rule: str = FOLD_RULE,
    adjudication: Adjudication | None = None,
    artifact: str | None = None,
    claims: Sequence[WorkClaim] = (),
) -> Decision:
    """Fold the recorded inputs of one artifact into its decision.

    ``adjudication`` (``review.adjudication`` of a later review) settles an escalated
    decision; it is applied after the panel's fold, by ``apply_adjudication``'s rules.
    ``artifact``: the artifact's id, which a grounded campaign needs to find its claims
    (fold/_grounded.py); ignored without ``[grounding]``. ``claims``: the artifact's claims
    from the work (``inputs.claims`` of its receipt), labelled after the campaign's.
    """
    decision = apply_grounding(policy, _decide(policy, gates, votes, rule), votes, artifact,
                               claims)
    if adjudication is None:
        return decision
    return apply_adjudication(decision, adjudication)


def _decide(
    policy: Policy, gates: Sequence[GateOutcome], votes: Sequence[Vote], rule: str
) -> Decision:
    if rule not in FOLD_RULES:
        raise FoldInputError(
            "fold_rule", f"unknown rule {rule!r}; this jurat folds {', '.join(FOLD_RULES)}"
        )
    known = {j.id for j in policy.judges}
    for i, vote in enumerate(votes):
        if vote.judge not in known:
            raise FoldInputError(f"votes[{i}].judge", f"{vote.judge!r} is not in the panel")
    if policy.kind == "rubric":
        return _rubric(policy, gates, votes, rule)
    if policy.kind == "pairwise":
        return _pairwise(policy, gates, votes, rule)
    if policy.kind == "criteria":
        return _criteria(policy, gates, votes, rule)
    return _equivalence(policy, gates, votes, rule)


# -- shared steps --------------------------------------------------------------------------

#: Votes grouped by (judge, criterion), each group in the order the votes were given.
Grouped = Mapping[tuple[str, str], Sequence[Vote]]
_SAMPLE = operator.attrgetter("sample")


def _grouped(votes: Sequence[Vote]) -> Grouped:
    # One pass over the votes instead of one per (judge, criterion): a criteria receipt
    # has 30 such pairs and 186 votes.
    out: dict[tuple[str, str], list[Vote]] = {}
    for vote in votes:
        out.setdefault((vote.judge, vote.criterion), []).append(vote)
    return out


def _samples_of(
    judge: JudgeConfig, criterion: str, votes: Grouped, expected: int
) -> list[Vote | None]:
    """The judge's samples for a criterion in sample order; unrecorded samples are None (errors)."""
    mine = sorted(votes.get((judge.id, criterion), ()), key=_SAMPLE)
    seen = {v.sample for v in mine}
    if len(seen) != len(mine):
        raise FoldInputError("votes", f"duplicate sample index for {judge.id}/{criterion}")
    slots: list[Vote | None] = list(mine)
    slots.extend(None for _ in range(max(0, expected - len(mine))))
    return slots


def _valid(vote: Vote | None) -> bool:
    return vote is not None and vote.error is None and vote.answer is not None


def _substantive(policy: Policy, slots: Sequence[Vote | None]) -> bool:
    valid = sum(1 for v in slots if _valid(v))
    return valid > 0 and meets(valid, len(slots), policy.min_valid_fraction)


def _share(top: int, n: int) -> str:
    return f"{top}/{n}"


# -- rubric (seed 000: score aggregation and hard gates; risk tiers) -----------------------


def _rubric(
    policy: Policy, gates: Sequence[GateOutcome], votes: Sequence[Vote], rule: str
) -> Decision:
    assert policy.rubric is not None
    tier = policy.risk_tier
    veto = gate_veto(policy.hard_gates, gates)
    # Each sample's scores are read once, and each distinct score set's eligibility is
    # computed once, for its sample label and again (as keys) for the judge's medians.
    rubric = RubricScorer(policy.rubric.criteria, policy.rubric.threshold)
    grouped = _grouped(votes)
    per_judge: dict[str, ScoreKey] = {}
    labels: list[str] = []
    sample_labels: list[str] = []
    all_slots: list[Vote | None] = []
    families: set[str] = set()  # of the judges with a substantive vote (v2 tier rule)
    for judge in policy.judges:
        slots = _samples_of(judge, "rubric", grouped, judge.samples)
        all_slots.extend(slots)
        keys: list[ScoreKey] = []  # the valid samples' scores, in sample order
        for v in slots:
            if v is None or v.error is not None or v.answer is None:
                continue
            key = rubric.key(v.answer.get("scores"))
            sample_labels.append(rubric.label(key))
            keys.append(key)
        if keys and meets(len(keys), len(slots), policy.min_valid_fraction):  # _substantive
            per_judge[judge.id] = rubric.median(keys)
            labels.append(rubric.label(per_judge[judge.id]))
            families.add(judge.family)
    n = len(labels)
    counted = len(families) if rule != FOLD_RULE_V1 else None
    valid_samples = len(sample_labels)
    base: dict[str, Any] = {
        "kind": "rubric",
        "fold_rule": rule,
        "gates_failed": veto.failed,
        "independent_votes": n,
        "independent_families": counted,
        "missing": len(policy.judges) - n,
        "samples": len(all_slots),
        "valid_samples": valid_samples,
        "sample_agreement": _top_share(sample_labels),
        "aggregation": RUBRIC_OPERATOR,
    }
    if not per_judge or not rubric.ids:
        disposition, why = veto.apply(
            "escalate", [f"too few independent votes: 0 of {tier.votes} required"]
        )
        return Decision(disposition=_word(disposition), reasons=tuple(why), **base)
    panel = rubric.median(list(per_judge.values()))
    verdict = rubric.eligibility(panel)
    top = max(labels.count("accept"), labels.count("reject"))
    disposition, why = _tier_disposition(tier, labels, verdict.label, families=counted)
    if disposition == "reject":
        why = [
            f"below per-criterion minimum: {', '.join(verdict.below_minimum)}"
            if verdict.below_minimum
            else f"Q {float(verdict.q):.4f} below threshold {policy.rubric.threshold}"
        ]
    disposition, why = veto.apply(disposition, why)
    return Decision(
        disposition=_word(disposition),
        reasons=tuple(why),
        scores={cid: float(v) for cid, v in zip(rubric.ids, panel, strict=True)},
        q=float(verdict.q),
        q_bp=basis_points(verdict.q),
        agreement=top / n,
        agreement_votes=_share(top, n),
        label=verdict.label,
        **base,
    )


def _top_share(labels: Sequence[str]) -> float | None:
    if not labels:
        return None
    return max(labels.count(x) for x in set(labels)) / len(labels)


def _tier_disposition(
    tier: RiskTier, labels: Sequence[str], panel_label: str | None, *, families: int | None
) -> tuple[str, list[str]]:
    """Seed 000 risk tiers: too few independent votes or too little agreement escalates.

    ``families`` (v2; None under v1): distinct model families among the voting judges. Seed
    000 counts "independent substantive votes" and says calls to one model are not
    independent witnesses, so the tier's vote count is checked against families too; the
    agreement share stays over the judges' votes, as recorded.
    """
    n = len(labels)
    if n < tier.votes:
        return "escalate", [f"too few independent votes: {n} of {tier.votes} required"]
    if families is not None and families < tier.votes:
        return "escalate", [_too_few_families(n, families, tier)]
    counts = {label: labels.count(label) for label in sorted(set(labels))}
    top = max(counts.values())
    leaders = [label for label, c in counts.items() if c == top]
    if len(leaders) > 1:
        # A tie has no majority; picking one would depend on iteration order.
        return "escalate", [f"no majority among {n} independent votes ({counts})"]
    top_label = leaders[0]
    if not meets(top, n, tier.min_agreement):
        return "escalate", [f"agreement {top}/{n} below the tier minimum {tier.min_agreement:.4g}"]
    if panel_label is not None and top_label != panel_label:
        return "escalate", ["judges' majority and panel median disagree"]
    if tier.adjudication and top_label in ("accept", "A", "B", "tie"):
        return "escalate", ["tier requires explicit adjudication before certification"]
    return ("accept" if top_label != "reject" else "reject"), [f"{top}/{n} independent votes agree"]


def _too_few_families(n: int, families: int, tier: RiskTier) -> str:
    kinds = "model family" if families == 1 else "model families"
    return (f"{n} votes from {families} {kinds}; the {tier.name} tier needs {tier.votes} "
            "independent families")


# -- pairwise (seed 000: order restoration, consensus) -------------------------------------


def canonical_preference(vote: Vote) -> str | None:
    """Map a presented preference back to canonical A/B before anything is folded."""
    if not _valid(vote) or vote.answer is None:
        return None
    pref = vote.answer.get("preference")
    if pref not in ("A", "B", "tie", "abstain"):
        return None
    if vote.order == "BA" and pref in ("A", "B"):
        return "B" if pref == "A" else "A"
    return str(pref)


def _pairwise(
    policy: Policy, gates: Sequence[GateOutcome], votes: Sequence[Vote], rule: str
) -> Decision:
    tier = policy.risk_tier
    veto = gate_veto(policy.hard_gates, gates)
    grouped = _grouped(votes)
    judge_labels: list[str | None] = []
    sample_labels: list[str | None] = []
    total = 0
    for judge in policy.judges:
        slots = _samples_of(judge, "pairwise", grouped, judge.samples)
        total += len(slots)
        prefs = [canonical_preference(v) if v is not None else None for v in slots]
        sample_labels.extend(prefs)
        own = pairwise_consensus(prefs)
        usable = _substantive(policy, slots) and own.majority is not None
        judge_labels.append(own.majority if usable else None)
    panel = pairwise_consensus(judge_labels) if judge_labels else None
    samples = pairwise_consensus(sample_labels) if sample_labels else None
    n = panel.n if panel else 0
    substantive = [x for x in judge_labels if x is not None]
    # Families of the judges counted in n (abstentions are missing coverage, seed 000).
    counted = None if rule == FOLD_RULE_V1 else len({
        j.family for j, label in zip(policy.judges, judge_labels, strict=True)
        if label in ("A", "B", "tie")
    })
    if n < tier.votes or panel is None:
        disposition, why = "escalate", [f"too few independent votes: {n} of {tier.votes} required"]
    else:
        disposition, why = _tier_disposition(tier, substantive, None, families=counted)
        if panel.majority is None and disposition == "accept":
            disposition, why = "escalate", ["no strict majority among A, B and tie"]
    disposition, why = veto.apply(disposition, why)
    return Decision(
        kind="pairwise",
        fold_rule=rule,
        disposition=_word(disposition),
        reasons=tuple(why),
        gates_failed=veto.failed,
        label=panel.majority if panel else None,
        agreement=panel.agreement if panel else None,
        agreement_votes=_share(panel.top, panel.n) if panel and panel.n else None,
        entropy=panel.entropy if panel else None,
        independent_votes=n,
        independent_families=counted,
        missing=panel.missing if panel else 0,
        samples=total,
        valid_samples=samples.n if samples else 0,
        sample_agreement=samples.agreement if samples else None,
    )


# -- criteria (seed 001 §1-2) -------------------------------------------------------------


def _verdicts_of(slots: Sequence[Vote | None]) -> tuple[list[str | None], tuple[str, ...]]:
    """Each sample's verdict for the fold (None for an errored one) and its recorded label
    (``error:<kind>`` for an errored one), read in one pass."""
    verdicts: list[str | None] = []
    labels: list[str] = []
    for vote in slots:
        if vote is None or vote.error is not None or vote.answer is None:
            verdicts.append(None)
            labels.append(_sample_label(vote))
        else:
            verdict = str(vote.answer.get("verdict"))
            verdicts.append(verdict)
            labels.append(verdict)
    return verdicts, tuple(labels)


def _criteria(
    policy: Policy, gates: Sequence[GateOutcome], votes: Sequence[Vote], rule: str
) -> Decision:
    suite = policy.criteria
    assert suite is not None
    veto = gate_veto(policy.hard_gates, gates)
    grouped = _grouped(votes)
    # v2 reads undrawn samples as curtailed only where the policy curtails (§8.5).
    curtails = suite.curtail and rule != FOLD_RULE_V1
    outcomes: list[CriterionOutcome] = []
    for judge in policy.judges:
        for item in suite.items:
            n = suite.blocker_samples if item.blocker else suite.samples
            slots = _samples_of(judge, item.id, grouped, n)
            verdicts, labels = _verdicts_of(slots)
            result = fold_criterion(verdicts, blocker=item.blocker)
            drawn = _curtailed_at(slots, verdicts, n, blocker=item.blocker,
                                  quorum=suite.blocker_quorum) if curtails else None
            if drawn is not None:
                # Settled by the drawn samples: the rest were never asked (fold/_curtail.py).
                labels = (*labels[:drawn], *(["undrawn"] * (n - drawn)))
            outcomes.append(
                CriterionOutcome(
                    judge=judge.id,
                    criterion_id=item.id,
                    blocker=item.blocker,
                    verdict=result.verdict,
                    samples=result.samples,
                    agreement=result.agreement,
                    agreement_votes=_share(result.top, result.samples),
                    sample_verdicts=labels,
                    gate=stability_gate(result, quorum=suite.blocker_quorum),
                    drawn=drawn,
                )
            )
    if not outcomes:
        raise FoldInputError("judges", "a criteria campaign needs at least one judge")
    decision = rollout([o.gate for o in outcomes])
    why = [
        f"{o.judge}/{o.criterion_id}: {o.gate} ({o.verdict}, {o.agreement_votes})"
        for o in outcomes
        if o.gate != "pass"
    ]
    if not veto.passed:
        # Criteria have no escalate: any required gate that did not pass blocks the rollout.
        decision = "BLOCK"
        why = [*veto.reasons, *why]
    stability = None
    if any(o.samples > 1 for o in outcomes):
        stability = {
            "min_blocker_agreement": suite.blocker_quorum,
            "unstable_blocker_failures": sum(
                1 for o in outcomes if o.blocker and o.verdict == "no" and o.gate == "warn"
            ),
        }
    all_slots = sum(o.samples for o in outcomes)
    valid = sum(1 for o in outcomes for s in o.sample_verdicts
                if not s.startswith("error") and s != "undrawn")
    curtailment: dict[str, str | int] | None = None
    if curtails:
        curtailment = {
            "rule": CURTAIL_RULE,
            "planned": all_slots,
            "drawn": sum(o.samples if o.drawn is None else o.drawn for o in outcomes),
        }
    return Decision(
        kind="criteria",
        fold_rule=rule,
        rollout=decision,
        reasons=tuple(why),
        gates_failed=veto.failed,
        criteria=tuple(outcomes),
        stability=stability,
        independent_votes=len(policy.judges),
        samples=all_slots,
        valid_samples=valid,
        curtailment=curtailment,
    )


def _curtailed_at(
    slots: Sequence[Vote | None], verdicts: Sequence[str | None], planned: int, *,
    blocker: bool, quorum: float,
) -> int | None:
    """k when exactly samples 0..k-1 (k < N) are recorded and they settle the criterion
    (``settled``, the check a verifier repeats); None otherwise, and then a missing sample
    is an error that counts as unsure (§8.1), as under v1."""
    drawn = sum(1 for v in slots if v is not None)
    if drawn >= planned:
        return None
    if any(v is not None and v.sample != k for k, v in enumerate(slots[:drawn])):
        return None
    return drawn if settled(verdicts[:drawn], planned, blocker=blocker, quorum=quorum) else None


def _sample_label(vote: Vote | None) -> str:
    if vote is None:
        return "error:missing"
    if vote.error is not None or vote.answer is None:
        return f"error:{vote.error or 'missing'}"
    return str(vote.answer.get("verdict"))


# -- equivalence (seed 002 §3) ------------------------------------------------------------


def _decision_of(vote: Vote | None) -> str:
    if vote is None or not _valid(vote) or vote.answer is None:
        return "PARSE_ERROR"
    value = vote.answer.get("decision")
    return str(value) if value in ("EQUIVALENT", "DIFFERENT", "ABSTAIN") else "PARSE_ERROR"


def _equivalence(
    policy: Policy, gates: Sequence[GateOutcome], votes: Sequence[Vote], rule: str
) -> Decision:
    settings = policy.equivalence
    votes_needed = settings.votes if settings else 1
    min_agreement = settings.min_agreement if settings else 1
    abstain_as_neither = settings.abstain_as_neither if settings else True
    deterministic = next((g for g in gates if g.id == GATE_EQUIVALENCE_DETERMINISTIC), None)
    if deterministic is not None and deterministic.outcome in ("pass", "fail"):
        # Deterministic evidence overrides any model: the judge is asked only when it is silent.
        equal = deterministic.outcome == "pass"
        return Decision(
            kind="equivalence",
            fold_rule=rule,
            equivalent=equal,
            equivalence_settled=True,
            label="EQUIVALENT" if equal else "DIFFERENT",
            reasons=(f"settled deterministically by {deterministic.tool}",),
        )
    slots: list[Vote | None] = []
    grouped = _grouped(votes)
    for judge in policy.judges:
        slots.extend(_samples_of(judge, "equivalence", grouped, votes_needed))
    if not slots:
        return Decision(
            kind="equivalence",
            fold_rule=rule,
            equivalent=None,
            reasons=("not settled deterministically and no judge in the panel",),
        )
    decisions = [_decision_of(v) for v in slots]
    verdict = equivalence_verdict(
        decisions,
        min_agreement=min(min_agreement, len(decisions)),
        abstain_as_neither=abstain_as_neither,
    )
    counts = {d: decisions.count(d) for d in sorted(set(decisions))}
    top = max(counts.values())
    return Decision(
        kind="equivalence",
        fold_rule=rule,
        equivalent=verdict,
        equivalence_settled=verdict is not None,
        label=max(counts, key=lambda d: counts[d]) if verdict is not None else None,
        reasons=(f"judge votes {counts}, min_agreement {min_agreement}",),
        independent_votes=len(policy.judges),
        samples=len(slots),
        valid_samples=sum(1 for d in decisions if d != "PARSE_ERROR"),
        missing=sum(1 for d in decisions if d in ("ABSTAIN", "PARSE_ERROR")),
        agreement=top / len(decisions),
        agreement_votes=_share(top, len(decisions)),
    )
