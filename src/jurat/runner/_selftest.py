"""`jurat selftest`: negative controls (seed 002 §6), canaries and the bias monitor.

A judge's validity cannot be shown by one test (the self-referential trap, seed 002 §6):
it must at least get the obvious cases right, and its answers must not betray an
always-equivalent / always-accept pathology, position bias or a taste for verbosity.

A judge of a campaign is tested as the campaign would use it: only the controls of the
campaign's kind (``CONTROLS_FOR``), and its content sent only where the campaign's
``allowed_destinations`` allow, checked before any request (``selftest_preflight``, the
rule of judges/_destinations.py). A control that does not apply to a judge is "n/a",
never a pass.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from jurat.canonical import canonical_json, sha256_digest
from jurat.errors import JuratError
from jurat.fold import decide
from jurat.judges import (
    CallKind,
    Engine,
    OrderedAnswer,
    equivalent_share,
    first_position_ok,
    order_reversal,
)
from jurat.judges._destinations import Destinations
from jurat.models import (
    RISK_TIERS,
    Artifact,
    CriteriaSuite,
    Criterion,
    EquivalencePolicy,
    EvidenceBundle,
    Frozen,
    JudgeConfig,
    MonitorBounds,
    Policy,
    Rubric,
    Vote,
)
from jurat.models._artifact import PAIR_MEDIA_TYPE, pair_digest
from jurat.models._endpoints import LOCAL_DESTINATIONS
from jurat.models._policy import Kind
from jurat.runner._job import artifact_evidence

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

#: Share of obvious controls a judge must get right: every one (seed 002 §6 expects each
#: control pair to give its answer; a judge that misses an obvious case is not qualified).
CONTROL_PASS_RATE = 1.0
#: The bias bounds the controls hold a judge to: the live monitor's (``[monitor]``
#: defaults, models/_monitor.py), but order consistency at 0.75, since its controls
#: are a handful of artifacts under both orders.
BOUNDS = MonitorBounds(min_order_consistency=0.75)


#: The prompts a campaign of each kind asks its judges: the controls that test them.
CONTROLS_FOR: dict[Kind, tuple[CallKind, ...]] = {
    "equivalence": ("equivalence",),
    "rubric": ("rubric",),
    "criteria": ("criterion",),
    "pairwise": ("pairwise",),
}
#: Without a campaign (the built-in panel, ``--judge``): every kind a judge answers.
ALL_CONTROLS: tuple[CallKind, ...] = ("equivalence", "rubric", "criterion", "pairwise")


class Miss(Frozen):
    """What a failed control asked and got: jurat's own control input, never a judged
    party's, so its text may be shown (capped), beside its digest."""

    input: str
    """The control's input as shown: its text (at most ``_SHOWN`` characters) and sha256."""
    expected: str
    """The answer the control expects (an enum, a rollout, a bound)."""
    actual: str
    """What the judge's votes gave: the answer words and counts, never a judge's prose."""


#: The most characters of a control's input shown.
_SHOWN = 80


def shown_input(*parts: tuple[str, str]) -> str:
    """``label "text"`` for each part (capped), then the sha256 of their canonical JSON."""
    texts = []
    for label, text in parts:
        cut = text if len(text) <= _SHOWN else text[:_SHOWN - 1] + "…"
        texts.append(f"{label} {canonical_json(cut).decode('utf-8')}")
    digest = sha256_digest(canonical_json({label: text for label, text in parts}))
    return f"{', '.join(texts)} (sha256 {digest[:12]}…)"


def vote_words(votes: Sequence[Vote], key: str) -> str:
    """The votes' answers under ``key`` (``decision``, ``verdict``, ``winner``), counted, an
    error counted by its kind: ``no 5/5``, ``EQUIVALENT 1/1``."""
    words = [str(v.answer.get(key)) if v.answer else f"error {v.error}" for v in votes]
    counts = {w: words.count(w) for w in dict.fromkeys(words)}
    return ", ".join(f"{w} {n}/{len(words)}" for w, n in counts.items()) or "no vote"


class Check(Frozen):
    """One row of the selftest table."""

    judge: str
    """The judge's id."""
    name: str
    """The control."""
    result: Literal["pass", "fail", "n/a"]
    """``n/a``: the control does not apply (the judge does not answer its prompts); it is
    neither a pass nor a failure."""
    detail: str
    """What was seen."""
    misses: tuple[Miss, ...] = ()
    """For a failed control: each input it got wrong, with the expected and actual answer."""

    @property
    def ok(self) -> bool:
        """Not a failure (a pass, or not applicable)."""
        return self.result != "fail"


def _check(judge: str, name: str, ok: bool, detail: str,
           misses: Sequence[Miss] = ()) -> Check:
    return Check(judge=judge, name=name, result="pass" if ok else "fail", detail=detail,
                 misses=() if ok else tuple(misses))


class _Controls:
    """One judge's controls: the destinations they may send to and the engine sending."""

    def __init__(self, judge: JudgeConfig, allowed: tuple[str, ...], engine: Engine) -> None:
        self.judge, self.allowed, self.engine = judge, allowed, engine

    def policy(self, **fields: object) -> Policy:
        """A control's policy, allowing what the campaign allows (and nothing else)."""
        return Policy.model_validate({"id": "selftest", "allowed_destinations": self.allowed,
                                      **fields})

    async def votes(self, policy: Policy, artifact: Artifact) -> list[Vote]:
        from jurat.judges import run_samples

        bundle = EvidenceBundle(items=(artifact_evidence(artifact),))
        votes: list[Vote] = await run_samples(policy, artifact, bundle, [], engine=self.engine)
        return votes


def _artifact(id_: str, *, text: str = "", a: str | None = None, b: str | None = None,
              truth: str | dict[str, str] | None = None) -> Artifact:
    if a is not None or b is not None:
        # jurat's own control pairs, shown in its output: no reference material to key.
        digest = pair_digest(sha256_digest(a or ""), sha256_digest(b or ""))
        return Artifact(id=id_, sha256=digest, media_type=PAIR_MEDIA_TYPE, a=a, b=b,
                        truth=truth)
    return Artifact(id=id_, sha256=sha256_digest(text), media_type="text/plain", text=text,
                    truth=truth)


async def _equivalence_controls(c: _Controls) -> list[Check]:
    judge = c.judge
    policy = c.policy(kind="equivalence", judges=(judge.model_copy(update={"samples": 1}),),
                      equivalence=EquivalencePolicy(votes=1, min_agreement=1))
    groups = {"identity → EQUIVALENT": (IDENTITY, "EQUIVALENT"),
              "mismatch → DIFFERENT": (MISMATCH, "DIFFERENT"),
              "missing/non-numeric → ABSTAIN": (ABSTAIN, "ABSTAIN")}
    checks: list[Check] = []
    seen: list[str] = []
    for name, (pairs, expected) in groups.items():
        got = []
        misses = []
        for i, (a, b) in enumerate(pairs):
            votes = await c.votes(policy, _artifact(f"eq{i}", a=a, b=b, truth=expected))
            decision = votes[0].answer.get("decision") if votes[0].answer else "PARSE_ERROR"
            got.append(str(decision))
            if got[-1] != expected:
                misses.append(Miss(input=shown_input(("a", a), ("b", b)), expected=expected,
                                   actual=got[-1] if votes[0].answer else
                                   f"PARSE_ERROR ({votes[0].error})"))
        seen.extend(got)
        hits = got.count(expected)
        checks.append(_check(judge.id, name, hits / len(got) >= CONTROL_PASS_RATE,
                             f"{hits}/{len(got)} as expected ({', '.join(got)})", misses))
    # Over all controls, a parse error included (seed 002 §6): the live monitor's statistic.
    equivalent, _ = equivalent_share(seen)
    eq_rate = equivalent / len(seen)
    checks.append(_check(judge.id, "bias: always-equivalent",
                         eq_rate <= BOUNDS.max_always_equivalent,
                         f"EQUIVALENT on {eq_rate:.0%} of all controls",
                         [Miss(input=f"the {len(seen)} equivalence controls above",
                               expected=f"EQUIVALENT on at most "
                                        f"{BOUNDS.max_always_equivalent:.0%}",
                               actual=f"EQUIVALENT on {eq_rate:.0%}")]))
    return checks


_RUBRIC = Rubric(version="selftest/1", threshold=0.75, criteria=(
    Criterion(id="correctness", weight=0.5, minimum=3), Criterion(id="reasoning", weight=0.5)))


async def _rubric_canaries(c: _Controls) -> list[Check]:
    judge = c.judge
    policy = c.policy(kind="rubric", judges=(judge,), rubric=_RUBRIC,
                      risk_tier=RISK_TIERS["standard"].model_copy(update={"votes": 1}))
    good_votes = await c.votes(policy, _artifact("good", text=GOOD_CODE, truth="accept"))
    bad_votes = await c.votes(policy, _artifact("bad", text=BAD_CODE, truth="reject"))
    good, bad = decide(policy, [], good_votes), decide(policy, [], bad_votes)
    return [
        _check(judge.id, "canary: correct code accepted", good.disposition == "accept",
               f"{good.disposition} (Q {good.q})",
               [Miss(input=shown_input(("code", GOOD_CODE)), expected="accept",
                     actual=f"{good.disposition} (Q {good.q}; votes "
                            f"{vote_words(good_votes, 'decision')})")]),
        _check(judge.id, "bias: always-accept (broken code)", bad.disposition != "accept",
               f"{bad.disposition} (Q {bad.q})",
               [Miss(input=shown_input(("code", BAD_CODE)), expected="not accept",
                     actual=f"{bad.disposition} (Q {bad.q}; votes "
                            f"{vote_words(bad_votes, 'decision')})")]),
    ]


async def _criteria_canaries(c: _Controls) -> list[Check]:
    judge = c.judge
    suite = CriteriaSuite(samples=5, blocker_samples=5, items=(
        Criterion(id="mentions-paris", text="Does the answer name Paris as the capital?",
                  blocker=True),))
    policy = c.policy(kind="criteria", judges=(judge,), criteria=suite)
    criterion = suite.items[0]
    yes_votes = await c.votes(policy, _artifact("yes", text=SHORT_RIGHT,
                                                truth={"mentions-paris": "yes"}))
    no_votes = await c.votes(policy, _artifact("no", text=LONG_WRONG,
                                               truth={"mentions-paris": "no"}))
    yes, no = decide(policy, [], yes_votes), decide(policy, [], no_votes)

    def miss(text: str, expected: str, rollout: str | None, votes: list[Vote]) -> Miss:
        return Miss(input=shown_input(("criterion", criterion.text or criterion.id),
                                      ("output", text)),
                    expected=expected,
                    actual=f"{rollout} (votes {vote_words(votes, 'verdict')})")

    return [
        _check(judge.id, "canary: criterion met → SHIP", yes.rollout == "SHIP",
               f"expected SHIP, got {yes.rollout}",
               [miss(SHORT_RIGHT, "SHIP (verdict yes)", yes.rollout, yes_votes)]),
        _check(judge.id, "canary: blocker missed → BLOCK", no.rollout == "BLOCK",
               f"expected BLOCK, got {no.rollout}",
               [miss(LONG_WRONG, "BLOCK (verdict no)", no.rollout, no_votes)]),
    ]


async def _pairwise_bias(c: _Controls) -> list[Check]:
    judge = c.judge
    policy = c.policy(kind="pairwise", judges=(judge.model_copy(update={"samples": 8}),),
                      rubric=_RUBRIC)
    verbose = verbose_n = 0
    cases = [("A", SHORT_RIGHT, LONG_WRONG), ("B", LONG_WRONG, SHORT_RIGHT),
             ("A", GOOD_CODE, BAD_CODE), ("B", BAD_CODE, GOOD_CODE)]
    answers: list[list[OrderedAnswer]] = []
    for i, (truth, a, b) in enumerate(cases):
        votes = await c.votes(policy, _artifact(f"pw{i}", a=a, b=b, truth=truth))
        answers.append([OrderedAnswer.of(v) for v in votes])
        if LONG_WRONG in (a, b):
            longer = "A" if len(a) > len(b) else "B"
            chosen = [x.canonical for x in answers[-1] if x.canonical in ("A", "B")]
            verbose_n += len(chosen)
            verbose += chosen.count(longer)
    # Position bias and order reversal are measured as the report measures them.
    order = order_reversal(answers)
    rate = order.first_position_rate
    pairs = f"the {len(cases)} pairwise controls (a short right and a long wrong answer, " \
        "correct and broken code, each pair in both orders)"
    checks = [_check(judge.id, "bias: position (first-shown preferred)",
                     first_position_ok(rate, BOUNDS),
                     f"first-shown chosen {order.first_position}/{order.ab_answers}",
                     [Miss(input=pairs, expected="first-shown chosen within the monitor's "
                           "bounds ([monitor] defaults)",
                           actual=f"first-shown chosen {order.first_position}/"
                                  f"{order.ab_answers}")])]
    if order.items:
        same = f"{order.consistent}/{order.items} artifacts: same majority under AB and BA"
        checks.append(_check(judge.id, "order-reversal consistency",
                             order.consistent / order.items >= BOUNDS.min_order_consistency,
                             same,
                             [Miss(input=pairs, expected=f"the same majority under AB and BA "
                                   f"on at least {BOUNDS.min_order_consistency:.0%}",
                                   actual=same)]))
    vrate = verbose / verbose_n if verbose_n else 0.0
    checks.append(_check(judge.id, "bias: verbosity (longer, wrong answer preferred)",
                         verbose_n > 0 and vrate <= 0.5,
                         f"longer chosen {verbose}/{verbose_n}",
                         [Miss(input=shown_input(("short right", SHORT_RIGHT),
                                                 ("long wrong", LONG_WRONG)),
                               expected="the longer, wrong answer chosen at most half the time",
                               actual=f"longer chosen {verbose}/{verbose_n}")]))
    return checks


_PARTS: dict[CallKind, Callable[[_Controls], Awaitable[list[Check]]]] = {
    "equivalence": _equivalence_controls,
    "rubric": _rubric_canaries,
    "criterion": _criteria_canaries,
    "pairwise": _pairwise_bias,
}


def selftest_preflight(
    judges: Sequence[JudgeConfig], allowed: Sequence[str], engine: Engine, *,
    fields: Sequence[str] | None = None, source: str | None = None,
) -> None:
    """Before any request: every judge's endpoint is in ``allowed``, its adapter builds and
    its own checks hold (an API key set). Raises DestinationError or ConfigError (exit 3).

    ``fields`` names each judge where the error should point (``judges[0]``, ``--judge``).
    """
    destinations = Destinations(allowed)
    for index, judge in enumerate(judges):
        field = fields[index] if fields is not None else f"judges[{index}]"
        destinations.check(judge, field=field, source=source)
    for judge in judges:
        engine.judge(judge).preflight()


async def selftest_judge(
    judge: JudgeConfig, *, kinds: Sequence[CallKind] = ALL_CONTROLS,
    allowed: Sequence[str] = LOCAL_DESTINATIONS, engine: Engine | None = None,
) -> list[Check]:
    """The controls of ``kinds`` for one judge; a judge that raises fails the control,
    never passes it; a kind the judge does not answer is "n/a".

    Content goes only where ``allowed`` allows (a campaign's ``allowed_destinations``),
    through ``engine`` (the caller's, which it closes; without one, a fresh one).
    """
    if engine is None:
        async with Engine() as own:
            return await selftest_judge(judge, kinds=kinds, allowed=allowed, engine=own)
    controls = _Controls(judge, tuple(allowed), engine)
    adapter = engine.judge(judge)
    checks: list[Check] = []
    for kind in kinds:
        part = _PARTS[kind]
        if not adapter.supports(kind):
            checks.append(Check(judge=judge.id, name=f"{kind} controls", result="n/a",
                                detail=f"this judge does not answer {kind} prompts"))
            continue
        try:
            checks.extend(await part(controls))
        except JuratError as exc:
            checks.append(_check(judge.id, part.__name__.strip("_").replace("_", " "), False,
                                 f"error: {exc}",
                                 [Miss(input=f"the {kind} controls", expected="answers",
                                       actual=f"error: {exc}")]))
    return checks
