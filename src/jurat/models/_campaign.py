from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, ValidationInfo, field_validator, model_validator

from jurat.models._artifact import ArtifactSpec, IntakeLimits
from jurat.models._base import Frozen
from jurat.models._budget import Budget, budget_problems
from jurat.models._datasets import DatasetSpec
from jurat.models._monitor import MonitorBounds
from jurat.models._policy import Policy
from jurat.models._problems import Problem, close_match, duplicate_problems, raise_problems
from jurat.models._suite_gate import SuiteGate, suite_gate_problems
from jurat.models._task import (
    TaskSpec,
    task_checks_problems,
    task_kind_problems,
    task_problems,
)
from jurat.models._truth import SIM_LABELS

#: A campaign kind's judge task, as the sim judge names it (judges/_plan.py).
_TASK = {"rubric": "rubric", "pairwise": "pairwise", "criteria": "criterion",
         "equivalence": "equivalence"}


def truth_problems(
    kind: str, criterion_ids: Sequence[str] | None,
    truths: Sequence[str | dict[str, str] | None],
) -> list[Problem]:
    """Every ``truth`` is a label of the campaign's kind (docs/campaign-format.md, "truth").

    The labels are spelled once, for the sim judge, the only reader of ``truth``
    (``SIM_LABELS``, models/_truth.py); matched in any case, as the sim matches them. A table
    of labels (one per criterion id) belongs to criteria campaigns only; its keys are checked
    against ``criterion_ids`` unless that is None (not known). Checked when the campaign is
    loaded, so that a wrong label is refused before anything runs or is written.
    """
    labels = SIM_LABELS[_TASK[kind]]
    shown = ", ".join(f'"{label}"' for label in labels)
    problems: list[Problem] = []

    lowered = {label.lower(): label for label in labels}

    def check(loc: tuple[str | int, ...], value: str) -> None:
        if value.strip().lower() in lowered:
            return
        guess = lowered.get(close_match(value.strip().lower(), lowered) or "")
        problems.append(Problem(
            loc,
            f"truth {value!r} is not a {kind} label" + (
                f"; did you mean {guess!r}?" if guess else "") + f" ({kind} labels: {shown})",
            f"truth = one of {shown}",
        ))

    for index, truth in enumerate(truths):
        loc: tuple[str | int, ...] = ("artifacts", index, "truth")
        if isinstance(truth, str):
            check(loc, truth)
        elif isinstance(truth, dict) and kind != "criteria":
            problems.append(Problem(
                loc, f"a table of labels is for criteria campaigns; a {kind} artifact has "
                "one truth label", f"truth = one of {shown}"))
        elif isinstance(truth, dict):
            for criterion, value in truth.items():
                if criterion_ids is not None and criterion not in criterion_ids:
                    guess = close_match(criterion, criterion_ids)
                    problems.append(Problem(
                        (*loc, criterion),
                        f"{criterion!r} is not a criterion of [criteria] items" + (
                            f"; did you mean {guess!r}?" if guess else ""),
                        f"use the item ids: {', '.join(criterion_ids)}"))
                else:
                    check((*loc, criterion), value)
    return problems


def no_artifacts_problems(artifacts: int, datasets: int) -> list[Problem]:
    """A campaign evaluates something: inline ``[[artifacts]]``, ``[[datasets]]``, or both."""
    if artifacts or datasets:
        return []
    return [Problem(("artifacts",), "the campaign has no artifacts",
                    'add an [[artifacts]] table with id = "c1" and path = "submission.py", or '
                    'a [[datasets]] table with path = "items.jsonl"')]


#: A stage name: what a key signs for and a receipt's ``predicate.stage`` names.
STAGE_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,63}$"


class UpstreamKey(Frozen):
    """One ``[upstream] keys`` entry: a signer's public key and the stage it signs for."""

    path: str = Field(min_length=1)
    """PEM public key (SPKI) of the signer, relative to the campaign file and inside its
    directory."""
    stage: str = Field(pattern=STAGE_PATTERN)
    """The stage this key signs receipts for (``stage1``, ``stage2``): a receipt it signs
    must say it is of this stage (``predicate.stage``), or it is of a foreign stage."""


class UpstreamTrust(Frozen):
    """The ``[upstream]`` table: whose Stage 1/2 receipts the campaign takes, and which
    stages every artifact must bring (seed 000: "a frozen candidate version with
    authenticated Stage 1 and Stage 2 evidence"); checked by runner/_upstream.py for
    `jurat run` and `jurat serve` alike."""

    keys: tuple[UpstreamKey, ...] = Field(min_length=1, max_length=32)
    """The signers' keys, each with the stage it signs for."""
    required: tuple[str, ...] | None = None
    """Stages every artifact must bring a current receipt of; default: every stage of
    ``keys``. ``[]`` makes them all optional (still checked when given)."""

    @field_validator("keys", mode="before")
    @classmethod
    def _not_bare_paths(cls, value: object) -> object:
        # The table's first form listed paths alone; a key must now say what it signs for.
        if isinstance(value, (list, tuple)) and any(isinstance(v, str) for v in value):
            raise ValueError(
                "each key names the stage it signs for: write keys = [{path = "
                '"keys/stage1.pub", stage = "stage1"}] instead of a bare path')
        return value

    @model_validator(mode="after")
    def _required_declared(self) -> UpstreamTrust:
        declared = {k.stage for k in self.keys}
        unknown = [s for s in self.required or () if s not in declared]
        if unknown:
            raise_problems([Problem(
                ("required",), f"stage {unknown[0]!r} is required but no key signs for it",
                "add a key with that stage to keys, or remove it from required")])
        return self

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages every artifact must bring, in the order first declared."""
        if self.required is not None:
            return self.required
        return tuple(dict.fromkeys(k.stage for k in self.keys))


class Campaign(Frozen):
    """A loaded campaign file: the pinned policy plus the artifacts to evaluate."""

    policy: Policy
    """The policy; its digest is pinned into every job and receipt."""
    artifacts: tuple[ArtifactSpec, ...] = ()
    """Inline artifacts (``[[artifacts]]``), in file order."""
    datasets: tuple[DatasetSpec, ...] = ()
    """Files of artifacts (``[[datasets]]``), in file order; read row by row at intake
    (runner/_datasets.py), never held whole, so their rows are not validated here."""
    source: str | None = None
    """Path of the campaign file it was loaded from."""
    base_dir: str = "."
    """Directory relative paths are resolved against; no path may lead outside it."""
    intake: IntakeLimits = IntakeLimits()
    """Size caps intake applies (``[intake]``); not part of the policy or its digest."""
    tasks: tuple[TaskSpec, ...] = ()
    """The tasks artifacts answer (``[[tasks]]``); not part of the policy: each statement is
    bound by its digest into the job identity and the receipt of every artifact that answers
    it (models/_task.py)."""
    upstream: UpstreamTrust | None = None
    """Keys trusted for upstream receipts (``[upstream]``); not part of the policy or its
    digest, like ``intake``."""
    tests_path: str | None = None
    """``[checks.python] tests`` as written: the path intake reads the hidden tests from.
    Not part of the policy, which pins only its digest (the file name is reference
    material, never in a receipt)."""
    monitor: MonitorBounds = MonitorBounds()
    """Bounds of the live bias monitor (``[monitor]``); not part of the policy or its digest:
    an alarm never changes a decision (models/_monitor.py)."""
    budget: Budget | None = None
    """Caps on the campaign's paid calls (``[budget]``); not part of the policy or its
    digest, so raising a cap resumes the same campaign (models/_budget.py)."""
    gate: SuiteGate | None = None
    """The suite gate (``[gate]``) that decides a run's exit status for criteria and rubric
    campaigns; not part of the policy or its digest, and never in a receipt: it reads the
    decisions, it makes none (models/_suite_gate.py)."""

    @property
    def id(self) -> str:
        """Campaign id."""
        return self.policy.id

    @model_validator(mode="after")
    def _unique(self, info: ValidationInfo) -> Campaign:
        # One pass: a campaign (or a dataset) may hold hundreds of thousands of artifacts.
        policy = self.policy
        items = [c.id for c in policy.criteria.items] if policy.criteria is not None else []
        # A served campaign (`jurat serve`) gets its artifacts over HTTP: it may list none.
        served = bool(info.context and info.context.get("served"))
        raise_problems(
            ([] if served else no_artifacts_problems(len(self.artifacts), len(self.datasets)))
            + duplicate_problems([a.id for a in self.artifacts], "artifacts", "artifact")
            + truth_problems(policy.kind, items, [a.truth for a in self.artifacts])
            + task_problems(self.tasks, [a.task for a in self.artifacts])
            + task_kind_problems(self.tasks, policy.kind)
            + task_checks_problems(self.tasks, policy.python)
            + ([] if served else claim_artifact_problems(policy, self))
            + budget_problems(self.budget, policy.judges, policy.subject, served=served)
            + suite_gate_problems(self.gate, policy.kind))
        return self


def claim_artifact_problems(policy: Policy, campaign: Campaign) -> list[Problem]:
    """Every grounded claim names an ``[[artifacts]]`` entry (a claim of no artifact would
    never be asked, and a typo would silently drop it from coverage)."""
    if policy.grounding is None:
        return []
    known = [a.id for a in campaign.artifacts]
    problems = []
    for index, claim in enumerate(policy.grounding.claims):
        if claim.artifact in known:
            continue
        guess = close_match(claim.artifact, known)
        problems.append(Problem(
            ("grounding", "claims", index, "artifact"),
            f"claim {claim.id!r} names artifact {claim.artifact!r}, which is not an "
            "[[artifacts]] id" + (f"; did you mean {guess!r}?" if guess else ""),
            f'artifact = "{guess}"' if guess else "use the id of an [[artifacts]] entry"))
    return problems
