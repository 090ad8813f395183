"""A decision's reasons as codes: what a CI file (runner/_results.py), the public board and
the report (report/_codes.py) say about *why*, without copying a sentence.

Trust rule (docs/design.md, "Trust boundaries"): these are trusted outputs, so a reason is
a code from a closed set (``REASON_CODES``, docs/ci.md) with ids from the signed policy
(gate, judge, criterion), jurat's enums (outcome, verdict, stability) and counts. The
fold's reason sentences (fold/_decide.py, fold/_adjudication.py) are matched by how they
start; a sentence none matches is ``other``, never dropped, and its text stays in the
receipt. One classifier for a run's results and a receipt's: both hold the policy, the
gates, the decision and whether the judges were asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields

from jurat.explain._lines import not_passed
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_SUBJECT_EXECUTION,
    Decision,
    GateOutcome,
    Policy,
)

__all__ = ["REASON_CODES", "Reason", "reason_codes"]

#: Every reason code a result may carry (the schema's enum; docs/ci.md says what each means).
REASON_CODES = (
    "gate_not_passed",
    "gate_reported",
    "judges_not_asked",
    "criterion_not_passed",
    "too_few_votes",
    "too_few_families",
    "no_majority",
    "low_agreement",
    "panel_disagrees",
    "adjudication_required",
    "below_minimum",
    "below_threshold",
    "votes_agree",
    "settled_deterministically",
    "no_judge",
    "judge_votes",
    "grounding",
    "adjudicated",
    "other",
)

#: The fold's own reason sentences (fold/_decide.py, fold/_adjudication.py), by how they
#: start: each becomes its code. A sentence none matches is ``other``, never dropped.
_FOLD_REASONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), code) for pattern, code in (
        (r"too few independent votes", "too_few_votes"),
        (r"\d+ votes from \d+ model famil", "too_few_families"),
        (r"no (strict )?majority", "no_majority"),
        (r"agreement \d+/\d+ below the tier minimum", "low_agreement"),
        (r"judges' majority and panel median disagree", "panel_disagrees"),
        (r"tier requires explicit adjudication", "adjudication_required"),
        (r"below per-criterion minimum", "below_minimum"),
        (r"Q [0-9.]+ below threshold", "below_threshold"),
        (r"\d+/\d+ independent votes agree", "votes_agree"),
        (r"settled deterministically", "settled_deterministically"),
        (r"not settled deterministically and no judge", "no_judge"),
        (r"judge votes ", "judge_votes"),
        (r"grounding: ", "grounding"),
        (r"adjudicated ", "adjudicated"),
    ))


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason of a decision as a code, with the ids and counts it is about."""

    code: str
    """One of ``REASON_CODES``."""
    gate: str | None = None
    """``gate_*``: the gate id."""
    outcome: str | None = None
    """``gate_*``: its outcome (fail, error, skip, missing); ``judges_not_asked``: why
    (veto, settled, no_subject_output)."""
    judge: str | None = None
    """``criterion_not_passed``: the judge id."""
    criterion: str | None = None
    """``criterion_not_passed``: the criterion id."""
    verdict: str | None = None
    """``criterion_not_passed``: the samples' majority (yes, no, unsure)."""
    stability: str | None = None
    """``criterion_not_passed``: the stability gate (warn, block)."""
    agree: int | None = None
    """``criterion_not_passed``: samples carrying the majority."""
    samples: int | None = None
    """``criterion_not_passed``: samples recorded, errors included."""

    def text(self) -> str:
        """The reason in a few words, from its code, ids and counts only."""
        if self.code == "gate_not_passed":
            return f"required gate {self.gate} {self.outcome}"
        if self.code == "gate_reported":
            return f"gate {self.gate} {self.outcome} (not required)"
        if self.code == "judges_not_asked":
            return f"judges not asked ({self.outcome})"
        if self.code == "criterion_not_passed":
            return (f"{self.judge}/{self.criterion}: {self.stability} ({self.verdict}, "
                    f"{self.agree}/{self.samples})")
        return self.code.replace("_", " ")

    def to_json(self) -> dict[str, str | int]:
        """The reason without its unset fields."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}


#: The fold's codes about what the panel's votes said. When no judge was asked, the kind's
#: rule still speaks of votes (a rubric's ``too few independent votes: 0 of 3 required``,
#: a criteria outcome ``unsure, 0/5``), and those words stay in the signed reasons, which
#: re-derive character for character (docs/receipt-format.md §8.8); as codes they are not
#: reasons: ``judges_not_asked`` says why there are no votes, and the gates before it why
#: the decision is what it is.
_VOTE_CODES = frozenset({
    "too_few_votes", "too_few_families", "no_majority", "low_agreement", "panel_disagrees",
    "adjudication_required", "below_minimum", "below_threshold", "votes_agree", "judge_votes",
})


def _fold_code(sentence: str) -> str:
    return next((code for pattern, code in _FOLD_REASONS if pattern.match(sentence)), "other")


def _skipped_why(gates: Sequence[GateOutcome]) -> str:
    for gate in gates:
        if gate.id == GATE_EQUIVALENCE_DETERMINISTIC and gate.outcome in ("pass", "fail"):
            return "settled"
        if gate.id == GATE_SUBJECT_EXECUTION and gate.outcome != "pass":
            return "no_subject_output"
    return "veto"


def reason_codes(policy: Policy, gates: Sequence[GateOutcome], d: Decision, *,
                 judges_asked: bool) -> tuple[Reason, ...]:
    """The decision's reasons as codes: required gates without a pass first (the veto and
    what it made skip), then why no judge was asked (``judges_asked`` False: the run's
    ``judges_skipped``, a receipt's ``inputs.judges_skipped``), the criteria that did not
    pass, the fold's own reasons, and gates that failed without being required. Without a
    judge asked, what the kind's rule says of the votes there were none of is left out
    (``_VOTE_CODES``): a reject by a failed gate is the gate, not "too few votes"."""
    out: list[Reason] = []
    required = not_passed(policy.hard_gates, gates)
    out += [Reason("gate_not_passed", gate=g, outcome=o) for g, o in required]
    if not judges_asked:
        out.append(Reason("judges_not_asked", outcome=_skipped_why(gates)))
    for c in d.criteria if judges_asked else ():
        if c.gate != "pass":
            top, _, n = c.agreement_votes.partition("/")
            out.append(Reason("criterion_not_passed", judge=c.judge, criterion=c.criterion_id,
                              verdict=c.verdict, stability=c.gate, agree=int(top),
                              samples=int(n)))
    if d.kind != "criteria":
        # Criteria reasons are the criteria above and the veto; the others' are sentences.
        for sentence in d.reasons:
            reason = Reason(_fold_code(sentence))
            if not judges_asked and reason.code in _VOTE_CODES:
                continue
            if not sentence.startswith("required gate ") and reason not in out:
                out.append(reason)
    named = {g for g, _ in required}
    out += [Reason("gate_reported", gate=g.id, outcome=g.outcome) for g in gates
            if g.id not in named and g.outcome in ("fail", "error")
            and g.id != GATE_EQUIVALENCE_DETERMINISTIC]
    return tuple(out)
