from __future__ import annotations

from collections.abc import Sequence
from decimal import Context, Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from pydantic import Field, model_validator

from jurat.models._base import Frozen
from jurat.models._checks import PythonChecks
from jurat.models._gate_ids import ALL_GATE_IDS, FORGEABLE_GATES
from jurat.models._grounding import GroundingPolicy
from jurat.models._judge import JudgeConfig, family_problems
from jurat.models._problems import Problem, close_match, duplicate_problems, raise_problems

Kind = Literal["rubric", "pairwise", "criteria", "equivalence"]
SameWork = Literal["default", "bytes", "text", "python-tokens", "python-ast", "answer"]
"""What counts as the same piece of work (``[campaign] same_work``, checks/_work.py)."""

#: The score keys of the seed's ARCV Judge Decision v1 schema; rubric criteria must be among them.
ARCV_SCORE_KEYS = ("correctness", "reasoning", "adherence", "presentation")

#: How far a rubric's weights may sum from 1, computed in exact decimals of the weights as
#: written (0.45 is 9/20), the arithmetic fold/_rubric.py uses for Q. Decimal weights that sum
#: to 1 on paper sum to exactly 1 here; the tolerance admits thirds written out to ten digits
#: (3 × 0.3333333333 = 0.9999999999) and nothing coarser (docs/campaign-format.md).
WEIGHT_TOLERANCE = Fraction(1, 10**9)
WEIGHT_TOLERANCE_TEXT = "1e-9"


class RiskTier(Frozen):
    """How many independent votes a decision needs and how much they must agree (seed 000)."""

    name: str = "declared"
    """Tier name: ``standard``, ``elevated``, ``critical``, or ``declared`` for a custom tier."""
    votes: int = Field(3, ge=1, le=100)
    """Independent substantive votes required (judges, never raw samples)."""
    min_agreement: float = Field(2 / 3, gt=0, le=1)
    """Minimum share of the majority label among those votes."""
    adjudication: bool = False
    """Whether explicit adjudication is required before certification (mission-critical)."""


#: Seed 000, "Multi-annotator consensus and borderline cases", the risk-tier table.
RISK_TIERS: dict[str, RiskTier] = {
    "standard": RiskTier(name="standard", votes=3, min_agreement=2 / 3),
    "elevated": RiskTier(name="elevated", votes=5, min_agreement=0.8),
    "critical": RiskTier(name="critical", votes=5, min_agreement=1.0, adjudication=True),
}


class Criterion(Frozen):
    """One rubric criterion or one binary criterion."""

    id: str = Field(min_length=1, max_length=128)
    """Criterion id. Rubric kinds: the ARCV v1 score keys keep the seed's schema; other ids
    are scored in the general schema (judges/_general.py)."""
    weight: float = Field(0.0, ge=0, le=1)
    """Weight in Q (rubric kinds); weights of a rubric sum to 1."""
    minimum: int | None = Field(None, ge=1, le=5)
    """Per-criterion minimum score; a lower panel score makes the artifact ineligible."""
    blocker: bool = False
    """Binary criteria: a stable "no" blocks the rollout."""
    text: str = ""
    """Binary criteria: the question put to the judge."""


def _decimal_text(value: Fraction) -> str:
    """An exact decimal (a sum of decimals terminates) without exponent: 0.9999999, 1.1."""
    context = Context(prec=60)
    exact = context.divide(Decimal(value.numerator), Decimal(value.denominator))
    return format(exact.normalize(context), "f") if value else "0"


def rubric_problems(criteria: Sequence[Criterion]) -> list[Problem]:
    """Every problem of a rubric's criteria: repeated or unknown ids, weights that do not sum
    to 1 (seed 000, score aggregation: Q = sum of w_j (s_j - 1)/4 with the weights summing to 1)."""
    return list(_rubric_problems(tuple((c.id, str(c.weight)) for c in criteria)))


# Every receipt jurat writes or verifies carries its policy, parsed again each time, and the
# exact sums here cost a receipt's self-check a tenth of its CPU (bench/README.md, "Whole
# runs"); the answer depends only on the ids and the weights as written.
@lru_cache(maxsize=64)
def _rubric_problems(criteria: tuple[tuple[str, str], ...]) -> tuple[Problem, ...]:
    problems = duplicate_problems([id_ for id_, _ in criteria], "criteria", "criterion")
    for index, (id_, _) in enumerate(criteria):
        if id_ in ARCV_SCORE_KEYS:
            continue
        # Any other id is a criterion of a general rubric (judges/_general.py), except one
        # that is a near miss of an ARCV key: that is a typo, and would silently leave the
        # seed's schema for the general one.
        guess = close_match(id_, ARCV_SCORE_KEYS)
        if guess is None:
            continue
        problems.append(Problem(
            ("criteria", index, "id"),
            f"unknown criterion {id_!r} (the ARCV Judge Decision v1 schema scores only "
            f"{', '.join(ARCV_SCORE_KEYS)})" + (f"; did you mean {guess!r}?" if guess else ""),
            f'id = "{guess or ARCV_SCORE_KEYS[0]}"',
        ))
    weights = [Fraction(weight) for _, weight in criteria]
    total = sum(weights, Fraction(0))
    if criteria and abs(total - 1) > WEIGHT_TOLERANCE:
        gap = 1 - total
        shown = " + ".join(weight for _, weight in criteria)
        fix = (f"make the weights add up to 1: they are {'short' if gap > 0 else 'over'} by "
               f"{_decimal_text(abs(gap))}")
        last_id = criteria[-1][0]
        if 0 <= weights[-1] + gap <= 1:
            fix += f", e.g. {last_id} weight = {_decimal_text(weights[-1] + gap)}"
        problems.append(Problem(
            ("criteria",),
            f"weights sum to {_decimal_text(total)} ({shown}), not 1 "
            f"(tolerance {WEIGHT_TOLERANCE_TEXT})",
            fix,
        ))
    return tuple(problems)


def hard_gate_problems(hard_gates: Sequence[str]) -> list[Problem]:
    """Every hard gate is a gate jurat records: a misspelt id would be a gate that never
    passes, so every artifact would escalate (models/_gate_ids.py).

    A rule for campaign files (campaign/_load.py), not for the ``Rubric`` record: receipts
    carry their policy whole, and one written by another jurat version, with gates this one
    does not know, must still parse and verify.
    """
    problems = []
    for index, gate in enumerate(hard_gates):
        if gate in FORGEABLE_GATES:
            problems.append(Problem(
                ("hard_gates", index),
                f"{gate!r} is measured where the candidate can steer it (its own process, "
                "or mutants it can tell apart): a candidate would pass it by reporting what "
                "it likes",
                f'remove "{gate}" from hard_gates; its figures stay in the operator\'s record '
                "(docs/checks.md)",
            ))
            continue
        if gate in ALL_GATE_IDS:
            continue
        guess = close_match(gate, ALL_GATE_IDS)
        problems.append(Problem(
            ("hard_gates", index),
            f"unknown gate {gate!r}" + (f"; did you mean {guess!r}?" if guess else ""),
            f'write "{guess}"' if guess else
            f"use gate ids from docs/checks.md: {', '.join(ALL_GATE_IDS)}",
        ))
    return problems


def policy_problems(
    kind: str, *, has_rubric: bool, has_criteria: bool, judge_ids: Sequence[str]
) -> list[Problem]:
    """The tables a kind needs, a panel for judged kinds, and unique judge ids."""
    problems: list[Problem] = []
    if kind in ("rubric", "pairwise") and not has_rubric:
        problems.append(Problem(
            ("rubric",), f"a {kind} campaign needs a [rubric] table",
            'add [rubric] with version = "code-review/1" and '
            'criteria = [{ id = "correctness", weight = 1.0 }]'))
    if kind == "criteria" and not has_criteria:
        problems.append(Problem(
            ("criteria",), "a criteria campaign needs a [criteria] table",
            'add [criteria] with items = [{ id = "cites-source", text = "Does it cite a '
            'source?" }]'))
    if kind in ("rubric", "pairwise", "criteria") and not judge_ids:
        problems.append(Problem(
            ("judges",), f"a {kind} campaign needs at least one [[judges]] entry",
            'add [[judges]] with id = "judge-a" and provider = "sim"'))
    problems += duplicate_problems(judge_ids, "judges", "judge")
    return problems


class Rubric(Frozen):
    """The ``[rubric]`` table of rubric and pairwise campaigns (seed 000 score aggregation)."""

    version: str = Field(min_length=1)
    """Rubric version id, recorded in every receipt."""
    threshold: float = Field(0.75, ge=0, le=1)
    """Minimum Q for acceptance."""
    hard_gates: tuple[str, ...] = ()
    """Deterministic gates that veto acceptance when they do not pass."""
    criteria: tuple[Criterion, ...] = Field(min_length=1)
    """Weighted criteria; weights sum to 1."""
    require_explanation: bool = Field(False, strict=True, exclude_if=lambda on: on is False)
    """Every artifact must bring the contributor's explanation (refused at intake or
    submission otherwise); left out of the policy's JSON when false, so policies written
    before it existed keep their digest."""

    @model_validator(mode="after")
    def _weights(self) -> Rubric:
        raise_problems(rubric_problems(self.criteria))
        return self


class CriteriaSuite(Frozen):
    """The ``[criteria]`` table of criteria campaigns (seed 001)."""

    samples: int = Field(5, ge=1, le=101)
    """Samples per non-blocker criterion per judge."""
    blocker_samples: int = Field(11, ge=1, le=101)
    """Samples per blocker criterion per judge (over-provisioned against correlation)."""
    blocker_quorum: float = Field(0.8, gt=0, le=1)
    """Agreement a blocker "no" needs to block; below it the criterion warns."""
    execution_temperature: float = Field(0.0, ge=0, le=2)
    """Decoding temperature of the subject under test (greedy by default, seed 001 §3)."""
    items: tuple[Criterion, ...] = Field(min_length=1)
    """Binary criteria with their question text."""
    curtail: bool = Field(False, strict=True, exclude_if=lambda on: on is False)
    """Exact curtailment (``jurat.curtail/v1``, fold/_curtail.py): stop drawing a judge's
    samples of a criterion once the drawn ones settle its verdict and stability gate whatever
    the rest would say. Never changes a decision; the receipt records samples planned and
    drawn. Off by default, and written into the policy only when on, so a campaign that does
    not set it draws, records and digests exactly as before the key existed."""

    @model_validator(mode="after")
    def _ids(self) -> CriteriaSuite:
        raise_problems(criteria_suite_problems(self.items))
        return self


class EquivalencePolicy(Frozen):
    """The ``[equivalence]`` table (seed 002)."""

    votes: int = Field(1, ge=1, le=101)
    """Judge samples per pair (multi-vote wrapper)."""
    min_agreement: int = Field(1, ge=1, le=101)
    """Identical answers needed for a verdict; otherwise null."""
    abstain_as_neither: bool = True
    """ABSTAIN and PARSE_ERROR map to null; false maps ABSTAIN to false (safer side)."""
    deterministic_first: bool = True
    """Settle numerically equal/different answers with math-verify before any judge call."""
    reference: Literal["b", "none"] = "b"
    """``b`` (default): ``b`` is the gold answer, reference material bound by digest only
    (docs/receipt-format.md, "Reference material"); ``none``: both are candidates, and
    receipts record ``b``'s reading and the judge's reasons too."""

    @model_validator(mode="after")
    def _agreement(self) -> EquivalencePolicy:
        raise_problems(equivalence_problems(self.votes, self.min_agreement))
        return self


def criteria_suite_problems(items: Sequence[Criterion]) -> list[Problem]:
    """A criteria suite's item ids are unique (a criterion is named by its id in every vote)."""
    return duplicate_problems([c.id for c in items], "items", "criterion")


def equivalence_problems(votes: int, min_agreement: int) -> list[Problem]:
    """Agreement cannot require more identical answers than there are votes (seed 002 §3)."""
    if min_agreement <= votes:
        return []
    return [Problem(("min_agreement",), f"min_agreement = {min_agreement} cannot exceed "
                    f"votes = {votes}", f"min_agreement = {votes}, or raise votes")]


class Policy(Frozen):
    """Everything a campaign pins before evaluating: the fold reads only this, gates and votes."""

    id: str = Field(min_length=1, max_length=200)
    """Campaign id."""
    kind: Kind
    """Which job: rubric, pairwise, criteria or equivalence."""
    risk_tier: RiskTier = RISK_TIERS["standard"]
    """Votes and agreement required (rubric and pairwise)."""
    allowed_destinations: tuple[str, ...] = ("sim", "stub", "replay")
    """Where artifact content may be sent: base URLs, provider names, or sim/stub/replay.

    Compared after one normalisation (models/_endpoints.py): scheme and host in any case,
    default ports dropped, trailing slashes insignificant, paths exact.
    """
    task_version: str = "1"
    """Version of the task the artifacts answer; part of every job identity."""
    rubric: Rubric | None = None
    """The rubric (rubric and pairwise kinds)."""
    criteria: CriteriaSuite | None = None
    """The binary criteria (criteria kind)."""
    equivalence: EquivalencePolicy | None = None
    """Equivalence settings (equivalence kind)."""
    python: PythonChecks | None = None
    """Deterministic checks for Python artifacts."""
    judges: tuple[JudgeConfig, ...] = ()
    """The pinned judge panel."""
    subject: JudgeConfig | None = None
    """criteria kind: the model that runs the prompt or skill under test (execution phase)."""
    subject_prompt: str | None = None
    """criteria kind: the prompt template under test; ``{input}`` is the test-case input."""
    min_valid_fraction: float = Field(0.5, gt=0, le=1)
    """A judge counts as a substantive vote only with at least this share of valid samples."""
    same_work: SameWork = Field("default", exclude_if=lambda rule: rule == "default")
    """What counts as one piece of work, paid once to its first submitter (issue 37,
    checks/_work.py): ``default`` (Python modulo formatting and comments, other text modulo
    surrounding whitespace and Unicode normalisation), ``bytes``, ``text``,
    ``python-tokens``, and the opt-in ``python-ast`` (also docstrings and local names) and
    ``answer`` (the canonical value of a final answer). Written into the policy only when
    not ``default``, so a campaign that does not set it keeps its policy digest."""
    judge_after_veto: bool = Field(False, strict=True, exclude_if=lambda on: on is False)
    """Ask the judges about an artifact whose required gate ran and failed.

    Off by default: such a gate is a veto (fold/_gates.py), so the fold rejects or blocks
    the artifact whatever the judges say, and their samples would be paid for nothing; the
    receipt records why they were not asked (``inputs.judges_skipped``). On keeps their
    reading as evidence beside the veto. Written into the policy only when on, so a
    campaign that does not set it keeps the policy digest (and job ids, and receipts in
    normal form) it had before the key existed."""

    grounding: GroundingPolicy | None = Field(None, exclude_if=lambda table: table is None)
    """Factual grounding (rubric and criteria kinds; docs/grounding.md): claims, references
    and thresholds. Written into the policy only when present, so a campaign without it keeps
    the policy digest (and job ids, and receipts in normal form) it had before the table."""

    @property
    def hard_gates(self) -> tuple[str, ...]:
        """The gates the campaign requires: the rubric's ``hard_gates``, none without a rubric."""
        return self.rubric.hard_gates if self.rubric is not None else ()

    @model_validator(mode="after")
    def _tables(self) -> Policy:
        raise_problems(policy_problems(
            self.kind, has_rubric=self.rubric is not None, has_criteria=self.criteria is not None,
            judge_ids=[j.id for j in self.judges]) + grounding_kind_problems(
                self.kind, self.grounding is not None) + family_problems(self.judges)
            + extract_judge_problems(self.grounding, self.judges))
        return self


def extract_judge_problems(grounding: GroundingPolicy | None,
                           judges: Sequence[JudgeConfig]) -> list[Problem]:
    """``[grounding] extract.judge`` names a judge of the panel that is a model: a seeded or
    stub judge has no text of its own to decompose an artifact with (docs/grounding.md)."""
    if grounding is None or grounding.extract is None:
        return []
    name = grounding.extract.judge
    judge = next((j for j in judges if j.id == name), None)
    if judge is None:
        return [Problem(("grounding", "extract", "judge"),
                        f"extract.judge {name!r} is not one of the campaign's [[judges]]",
                        f'judge = "{judges[0].id}"' if judges else "add a [[judges]] entry")]
    if judge.provider in ("sim", "replay") or judge.provider.startswith("stub:"):
        return [Problem(("grounding", "extract", "judge"),
                        f"extract.judge {name!r} is a {judge.provider} judge, which cannot "
                        "extract claims", "name an openai-compat or anthropic judge")]
    return []


def grounding_kind_problems(kind: str, grounded: bool) -> list[Problem]:
    """``[grounding]`` gates a rubric disposition or joins a criteria rollout; the other
    kinds have no place for its gate (docs/campaign-format.md, "[grounding]")."""
    if not grounded or kind in ("rubric", "criteria"):
        return []
    return [Problem(("grounding",), f"a {kind} campaign cannot have a [grounding] table",
                    'remove [grounding], or use kind = "rubric" or "criteria"')]
