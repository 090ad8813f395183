"""`jurat selftest`: negative controls (seed 002 §6), canaries and the bias monitor.

A judge's validity cannot be shown by one test (the self-referential trap, seed 002 §6):
it must at least get the obvious cases right, and its answers must not betray an
always-equivalent / always-accept pathology, position bias or a taste for verbosity.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jurat.canonical import canonical_json, sha256_digest
from jurat.errors import JuratError
from jurat.fold import decide
from jurat.judges import OrderedAnswer, order_reversal
from jurat.models import (
    RISK_TIERS,
    Artifact,
    CriteriaSuite,
    Criterion,
    EquivalencePolicy,
    EvidenceBundle,
    JudgeConfig,
    Policy,
    Rubric,
    Vote,
)
from jurat.runner._job import artifact_evidence

if TYPE_CHECKING:
    from jurat.judges import CallKind

# Seed 002 §6: identity pairs, clear mismatches, and missing / non-numeric answers.
IDENTITY = [("200", "200"), ("The answer is 42.", "The answer is 42."), ("3/4", "3/4"),
            ("x = 17", "x = 17")]
MISMATCH = [("200", "7"), ("The answer is 42.", "The answer is 1,000,000."), ("3/4", "12"),
            ("x = 17", "x = -5")]
ABSTAIN = [("", "200"), ("I don't know.", "42"), ("banana", "12"), ("200", "")]

GOOD_CODE = "def add(a: int, b: int) -> int:\n    return a + b\n"
BAD_CODE = "def add(a, b):\n    return a - b  # subtracts\n"
SHORT_RIGHT = "Paris."
LONG_WRONG = ("After careful consideration of many historical, cultural and geographic factors, "
              "weighing every source at length, the capital of France is clearly Lyon, a city "
              "of great importance whose significance cannot be overstated in any respect.")

#: Share of first-presented preferences beyond which a judge shows position bias.
POSITION_BIAS_LIMIT = 0.25
#: Share of obvious controls a judge must get right.
CONTROL_PASS_RATE = 0.75


@dataclass
class Check:
    """One row of the selftest table."""

    judge: str
    name: str
    ok: bool
    detail: str


def _artifact(id_: str, *, text: str = "", a: str | None = None, b: str | None = None,
              truth: str | dict[str, str] | None = None) -> Artifact:
    if a is not None or b is not None:
        digest = sha256_digest(canonical_json({"a": sha256_digest(a or ""),
                                               "b": sha256_digest(b or "")}))
        return Artifact(id=id_, sha256=digest, media_type="application/vnd.jurat.pair+json",
                        a=a, b=b, truth=truth)
    return Artifact(id=id_, sha256=sha256_digest(text), media_type="text/plain", text=text,
                    truth=truth)


async def _votes(policy: Policy, artifact: Artifact) -> list[Vote]:
    from jurat.judges import run_samples

    bundle = EvidenceBundle(items=(artifact_evidence(artifact),))
    votes: list[Vote] = await run_samples(policy, artifact, bundle, [])
    return votes


async def _equivalence_controls(judge: JudgeConfig) -> list[Check]:
    policy = Policy(id="selftest", kind="equivalence", judges=(judge.model_copy(
        update={"samples": 1}),), equivalence=EquivalencePolicy(votes=1, min_agreement=1))
    groups = {"identity → EQUIVALENT": (IDENTITY, "EQUIVALENT"),
              "mismatch → DIFFERENT": (MISMATCH, "DIFFERENT"),
              "missing/non-numeric → ABSTAIN": (ABSTAIN, "ABSTAIN")}
    checks: list[Check] = []
    seen: list[str] = []
    for name, (pairs, expected) in groups.items():
        got = []
        for i, (a, b) in enumerate(pairs):
            votes = await _votes(policy, _artifact(f"eq{i}", a=a, b=b, truth=expected))
            decision = votes[0].answer.get("decision") if votes[0].answer else "PARSE_ERROR"
            got.append(str(decision))
        seen.extend(got)
        hits = got.count(expected)
        checks.append(Check(judge.id, name, hits / len(got) >= CONTROL_PASS_RATE,
                            f"{hits}/{len(got)} as expected ({', '.join(got)})"))
    eq_rate = seen.count("EQUIVALENT") / len(seen)
    checks.append(Check(judge.id, "bias: always-equivalent", eq_rate < 0.9,
                        f"EQUIVALENT on {eq_rate:.0%} of all controls"))
    return checks


def _rubric_policy(judge: JudgeConfig) -> Policy:
    rubric = Rubric(version="selftest/1", threshold=0.75, criteria=(
        Criterion(id="correctness", weight=0.5, minimum=3),
        Criterion(id="reasoning", weight=0.5)))
    return Policy(id="selftest", kind="rubric", judges=(judge,), rubric=rubric,
                  risk_tier=RISK_TIERS["standard"].model_copy(update={"votes": 1}))


async def _rubric_canaries(judge: JudgeConfig) -> list[Check]:
    policy = _rubric_policy(judge)
    good = decide(policy, [], await _votes(policy, _artifact("good", text=GOOD_CODE,
                                                              truth="accept")))
    bad = decide(policy, [], await _votes(policy, _artifact("bad", text=BAD_CODE,
                                                             truth="reject")))
    return [
        Check(judge.id, "canary: correct code accepted", good.disposition == "accept",
              f"{good.disposition} (Q {good.q})"),
        Check(judge.id, "bias: always-accept (broken code)", bad.disposition != "accept",
              f"{bad.disposition} (Q {bad.q})"),
    ]


async def _criteria_canaries(judge: JudgeConfig) -> list[Check]:
    suite = CriteriaSuite(samples=5, blocker_samples=5, items=(
        Criterion(id="mentions-paris", text="Does the answer name Paris as the capital?",
                  blocker=True),))
    policy = Policy(id="selftest", kind="criteria", judges=(judge,), criteria=suite)
    yes = decide(policy, [], await _votes(policy, _artifact(
        "yes", text=SHORT_RIGHT, truth={"mentions-paris": "yes"})))
    no = decide(policy, [], await _votes(policy, _artifact(
        "no", text=LONG_WRONG, truth={"mentions-paris": "no"})))
    return [
        Check(judge.id, "canary: criterion met → SHIP", yes.rollout == "SHIP", str(yes.rollout)),
        Check(judge.id, "canary: blocker missed → BLOCK", no.rollout == "BLOCK", str(no.rollout)),
    ]


async def _pairwise_bias(judge: JudgeConfig) -> list[Check]:
    policy = Policy(id="selftest", kind="pairwise", judges=(judge.model_copy(
        update={"samples": 8}),), rubric=_rubric_policy(judge).rubric)
    verbose = verbose_n = 0
    cases = [("A", SHORT_RIGHT, LONG_WRONG), ("B", LONG_WRONG, SHORT_RIGHT),
             ("A", GOOD_CODE, BAD_CODE), ("B", BAD_CODE, GOOD_CODE)]
    answers: list[list[OrderedAnswer]] = []
    for i, (truth, a, b) in enumerate(cases):
        votes = await _votes(policy, _artifact(f"pw{i}", a=a, b=b, truth=truth))
        answers.append([OrderedAnswer.of(v) for v in votes])
        if LONG_WRONG in (a, b):
            longer = "A" if len(a) > len(b) else "B"
            chosen = [x.canonical for x in answers[-1] if x.canonical in ("A", "B")]
            verbose_n += len(chosen)
            verbose += chosen.count(longer)
    # Position bias and order reversal are measured as the report measures them.
    order = order_reversal(answers)
    rate = order.first_position_rate
    checks = [Check(judge.id, "bias: position (first-shown preferred)",
                    rate is not None and abs(rate - 0.5) <= POSITION_BIAS_LIMIT,
                    f"first-shown chosen {order.first_position}/{order.ab_answers}")]
    if order.items:
        same = f"{order.consistent}/{order.items} artifacts: same majority under AB and BA"
        checks.append(Check(judge.id, "order-reversal consistency",
                            order.consistent / order.items >= CONTROL_PASS_RATE, same))
    vrate = verbose / verbose_n if verbose_n else 0.0
    checks.append(Check(judge.id, "bias: verbosity (longer, wrong answer preferred)",
                        verbose_n > 0 and vrate <= 0.5, f"longer chosen {verbose}/{verbose_n}"))
    return checks


async def selftest_judge(judge: JudgeConfig) -> list[Check]:
    """Every control for one judge; a judge that raises fails the control, never passes it."""
    from jurat.judges import make_judge

    checks: list[Check] = []
    adapter = make_judge(judge)
    parts: tuple[tuple[CallKind, Callable[[JudgeConfig], Awaitable[list[Check]]]], ...] = (
        ("equivalence", _equivalence_controls), ("rubric", _rubric_canaries),
             ("criterion", _criteria_canaries), ("pairwise", _pairwise_bias))
    for kind, part in parts:
        if not adapter.supports(kind):
            checks.append(Check(judge.id, f"{kind} controls", True,
                                f"not applicable: this judge does not answer {kind} prompts"))
            continue
        try:
            checks.extend(await part(judge))
        except JuratError as exc:
            checks.append(Check(judge.id, part.__name__.strip("_").replace("_", " "), False,
                                f"error: {exc}"))
    return checks
