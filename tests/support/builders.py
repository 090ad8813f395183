"""The one set of test builders: answers, judges and panels, votes, gates, policies, statements.

Everything here is built on the model's own constants (``ARCV_SCORE_KEYS``, ``RISK_TIERS``,
``DEFAULT_HARD_GATES`` and the gate ids), and every default is seed 000's worked example: the
rubric with weights [0.45, 0.25, 0.20, 0.10] and a minimum on correctness, scores
[5, 4, 4, 4] (Q = 0.8625), the two usual hard gates. A test names only what it is about.

Layers, each calling the one below:

- answers as a judge returns them: ``arcv`` (seed 000's ARCV Judge Decision v1),
  ``criterion_answer`` (seed 001's yes/no/unsure), ``equivalence_answer`` (seed 002 §4);
- records: ``judge``/``panel``, ``vote``/``votes_by_judge``, ``gate``/``gates``,
  ``criteria_suite``/``policy``, ``artifact``/``pair``/``evidence``;
- whole cases of each kind (``rubric_case`` … ``equivalence_case``), decided with the real
  fold, and ``statement_for``, the receipt statement ``jurat run`` would sign.

``tests/support/fake_openai.py`` keeps its own answer text on purpose: it plays an endpoint
outside jurat, imports nothing from it, and its CPU per request is measured by the bench.
Time comes from ``tests/support/clock.py`` (``FakeClock``, for every ``clock=``/``sleep=``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from jurat.canonical import canonical_json, sha256_digest
from jurat.fold import decide
from jurat.models import (
    ARCV_SCORE_KEYS,
    DEFAULT_HARD_GATES,
    GATE_PYTHON_PARSE,
    GATE_TESTS_PASS,
    RISK_TIERS,
    Artifact,
    CriteriaSuite,
    Criterion,
    EquivalencePolicy,
    EvidenceBundle,
    EvidenceItem,
    GateOutcome,
    GateStatus,
    JudgeConfig,
    Kind,
    Policy,
    RiskTier,
    Rubric,
    Vote,
)
from jurat.receipts import build_statement, replay_fidelity_level_for

# -- constants -------------------------------------------------------------------------------

ZERO_SHA = "0" * 64
#: The artifact every default answer, gate and statement is about.
SOURCE = (
    "def fib(n: int) -> int:\n"
    "    a, b = 0, 1\n"
    "    for _ in range(n):\n"
    "        a, b = b, a + b\n"
    "    return a\n"
)
SOURCE_SHA256 = sha256_digest(SOURCE)
EXPLANATION = "The candidate is correct, its tests pass and edge cases are handled."

#: Seed 000, "Score aggregation and hard gates": the example weights and scores.
SEED_WEIGHTS: dict[str, float] = dict(zip(ARCV_SCORE_KEYS, (0.45, 0.25, 0.20, 0.10), strict=True))
SEED_SCORES = (5, 4, 4, 4)
SEED_Q = 0.8625

#: Seed 000's rubric: the example weights, a minimum on correctness, the two usual hard gates.
SEED_RUBRIC = Rubric(
    version="code-review/1",
    threshold=0.75,
    hard_gates=DEFAULT_HARD_GATES,
    criteria=tuple(
        Criterion(id=key, weight=weight, minimum=3 if key == "correctness" else None)
        for key, weight in SEED_WEIGHTS.items()
    ),
)

_API_KEY_ENV = {"openai-compat": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


# -- answers, as a judge returns them ---------------------------------------------------------


def scores(values: Sequence[int]) -> dict[str, int]:
    """The ARCV score object for values in ``ARCV_SCORE_KEYS`` order."""
    return dict(zip(ARCV_SCORE_KEYS, values, strict=True))


def arcv(
    values: Sequence[int] = SEED_SCORES,
    disposition: str = "accept",
    *,
    preference: str = "A",
    artifact_sha256: str = SOURCE_SHA256,
    evidence_indices: Sequence[int] = (0,),
    hard_gates_pass: bool = True,
    explanation: str = EXPLANATION,
) -> dict[str, Any]:
    """A valid ARCV Judge Decision v1 answer (seed 000's schema), accepting by default."""
    return {
        "artifact_sha256": artifact_sha256,
        "preference": preference,
        "scores": scores(values),
        "hard_gates_pass": hard_gates_pass,
        "disposition": disposition,
        "evidence_indices": list(evidence_indices),
        "explanation": explanation,
    }


def criterion_answer(verdict: str, explanation: str = "checked") -> dict[str, Any]:
    """A binary criterion answer (seed 001): ``yes``, ``no`` or ``unsure``."""
    return {"verdict": verdict, "explanation": explanation}


def equivalence_answer(decision: str, reason: str = "same number") -> dict[str, Any]:
    """An equivalence answer as recorded in a vote (seed 002 §3-4)."""
    return {"decision": decision, "reason": reason}


# -- judges and panels ------------------------------------------------------------------------


def judge(id: str = "A", provider: str = "sim", **fields: Any) -> JudgeConfig:
    """One pinned judge. An SDK provider at its hosted endpoint gets its usual ``api_key_env``;
    with a ``base_url`` (a self-hosted server, the loopback fake) it takes none unless given."""
    fields.setdefault("model", f"{provider.split(':')[0]}-{id.lower()}")
    if fields.get("base_url") is None:
        fields.setdefault("api_key_env", _API_KEY_ENV.get(provider))
    return JudgeConfig(id=id, provider=provider, **fields)


def panel(
    judges: int | str | Sequence[str] = 3, *, samples: int = 5, provider: str = "sim",
    **fields: Any,
) -> tuple[JudgeConfig, ...]:
    """A panel: ``3`` gives judges J0, J1, J2; ``"ABC"`` gives A, B, C. Seeds are 0, 1, 2…"""
    ids = [f"J{i}" for i in range(judges)] if isinstance(judges, int) else list(judges)
    seed = fields.pop("seed", None)
    return tuple(
        judge(name, provider, samples=samples, seed=i if seed is None else seed, **fields)
        for i, name in enumerate(ids)
    )


# -- votes ------------------------------------------------------------------------------------


def vote(
    judge: str, sample: int, answer: dict[str, Any] | None, criterion: str = "rubric", *,
    error: str | None = None, order: str | None = None, **fields: Any,
) -> Vote:
    """One recorded sample; ``error`` is kept only when there is no answer."""
    return Vote(judge=judge, criterion=criterion, sample=sample, answer=answer,
                error=error if answer is None else None, order=order, **fields)


def votes_by_judge(
    answers: Mapping[str, Sequence[dict[str, Any] | None]], criterion: str = "rubric", *,
    error: str = "timeout",
) -> list[Vote]:
    """Each judge's samples in order (sample k is the k-th answer); ``None`` is an errored
    sample with ``error`` as its kind."""
    return [
        vote(j, k, a, criterion, error=error)
        for j, answers_of_j in answers.items()
        for k, a in enumerate(answers_of_j)
    ]


# -- gates ------------------------------------------------------------------------------------


def gate(
    id: str, outcome: GateStatus = "pass", *, required: bool = True, **fields: Any
) -> GateOutcome:
    """One deterministic gate outcome, required by default."""
    return GateOutcome(id=id, outcome=outcome, required=required, **fields)


def gates(ok: bool = True) -> list[GateOutcome]:
    """The seed rubric's two hard gates as the checks record them; ``ok=False`` fails a test."""
    return [
        gate(GATE_PYTHON_PARSE, tool="jurat", tool_version="0.1.0", evidence_index=0),
        gate(
            GATE_TESTS_PASS,
            "pass" if ok else "fail",
            tool="pytest",
            tool_version="9.2.0",
            evidence_index=1,
            detail="3 passed" if ok else "1 of 3 failed",
            data={"passed": 3, "failed": 0, "coverage": 87.5} if ok
            else {"passed": 2, "failed": 1, "coverage": 87.5},
        ),
    ]


# -- policies ---------------------------------------------------------------------------------


def criteria_suite(
    samples: int = 5, *, blocker_samples: int | None = None, quorum: float = 0.8,
    items: Sequence[Criterion] | None = None,
) -> CriteriaSuite:
    """Binary criteria (seed 001): by default blocker ``c1`` and non-blocker ``c2``."""
    return CriteriaSuite(
        samples=samples,
        blocker_samples=samples if blocker_samples is None else blocker_samples,
        blocker_quorum=quorum,
        items=tuple(items) if items is not None
        else (Criterion(id="c1", text="?", blocker=True), Criterion(id="c2", text="?")),
    )


def policy(
    kind: Kind = "rubric", *, judges: int | str | JudgeConfig | Sequence[JudgeConfig] = 3,
    samples: int = 5, tier: RiskTier | str = "standard", id: str = "t", **fields: Any,
) -> Policy:
    """A policy of ``kind`` with its table filled from the seeds, allowing exactly its judges'
    destinations; ``fields`` override. ``judges`` is a ``panel`` spec (``3``, ``"ABC"``), one
    judge, or judges; ``samples`` sizes a built panel and the criteria and equivalence tables."""
    members: tuple[JudgeConfig, ...]
    if isinstance(judges, int | str):
        members = panel(judges, samples=samples)
    elif isinstance(judges, JudgeConfig):
        members = (judges,)
    else:
        members = tuple(judges)
    kw: dict[str, Any] = {
        "id": id,
        "kind": kind,
        "judges": members,
        "risk_tier": RISK_TIERS[tier] if isinstance(tier, str) else tier,
        "allowed_destinations": tuple(dict.fromkeys(j.destination for j in members)),
    }
    if kind in ("rubric", "pairwise"):
        kw["rubric"] = SEED_RUBRIC
    if kind == "criteria":
        kw["criteria"] = criteria_suite(samples)
    if kind == "equivalence":
        kw["equivalence"] = EquivalencePolicy(votes=samples, min_agreement=samples)
    kw.update(fields)
    return Policy(**kw)


# -- artifacts and evidence -------------------------------------------------------------------


def artifact(text: str = SOURCE, *, id: str = "c1", **fields: Any) -> Artifact:
    """A single artifact digested as intake does; by default the seed's Fibonacci."""
    fields.setdefault("media_type", "text/x-python")
    if text == SOURCE:
        fields.setdefault("contributor", "alice")
        fields.setdefault("task", "fib-1")
    return Artifact(id=id, sha256=sha256_digest(text), text=text, **fields)


def pair(a: str, b: str, *, id: str = "p1", **fields: Any) -> Artifact:
    """A pair (pairwise, equivalence); its digest covers both parts, as intake computes it."""
    digest = sha256_digest(canonical_json({"a": sha256_digest(a), "b": sha256_digest(b)}))
    fields.setdefault("media_type", "text/plain")
    return Artifact(id=id, sha256=digest, a=a, b=b, **fields)


def evidence(text: str = SOURCE) -> EvidenceBundle:
    """The bundle ``gates()`` cites: the artifact (index 0) and the tests' run (index 1)."""
    return EvidenceBundle(items=(
        EvidenceItem(kind="artifact", tool="jurat", tool_version="0.1.0",
                     sha256=sha256_digest(text), excerpt=text),
        EvidenceItem(kind="tests", tool="pytest", tool_version="9.2.0", sha256="1" * 64,
                     excerpt="3 passed", gate=GATE_TESTS_PASS),
    ))


# -- whole cases, one per kind ----------------------------------------------------------------


class Case(NamedTuple):
    """What the fold reads for one artifact."""

    policy: Policy
    gates: list[GateOutcome]
    votes: list[Vote]


def rubric_policy(provider: str = "sim") -> Policy:
    """The rubric campaign of the receipt tests: judges A, B, C, 3 samples each."""
    return policy(id="demo-2026-11", judges=panel("ABC", samples=3, provider=provider),
                  allowed_destinations=("sim",))


def rubric_votes() -> list[Vote]:
    """3 judges x 3 samples in dispatch order (interleaved); C's sample 1 timed out twice."""
    by_judge = {"A": (5, 4, 4, 4), "B": (5, 5, 4, 4), "C": (4, 4, 4, 5)}
    out = []
    for sample in range(3):
        for name, values in by_judge.items():
            errored = name == "C" and sample == 1
            out.append(vote(
                name, sample, None if errored else arcv(values, evidence_indices=(0, 1)),
                error="timeout",
                attempts=2 if errored else 1,
                returned_model=None if errored else f"sim-{name.lower()}",
                usage={} if errored else {"input_tokens": 812, "output_tokens": 96},
                dispatch_ms=sample * 3 + "ABC".index(name),
                latency_ms=40,
                prompt_id="jurat.rubric@1",
            ))
    return out


def rubric_case(provider: str = "sim") -> Case:
    """Accepted: Q 0.8625, 3/3 judges agree, one errored sample."""
    return Case(rubric_policy(provider), gates(), rubric_votes())


def criteria_case() -> Case:
    """One judge, a blocker at 4/5 "no" (blocks) and a non-blocker with one malformed answer."""
    suite = criteria_suite(5, items=(
        Criterion(id="cites", text="Cites sources?", blocker=True),
        Criterion(id="short", text="Under 200 words?"),
    ))
    verdicts: dict[str, list[str | None]] = {
        "cites": ["no", "no", "no", "no", "yes"],
        "short": ["yes"] * 4 + [None],
    }
    votes = [
        vote("A", i, None if v is None else criterion_answer(v), c, error="malformed_json")
        for c, vs in verdicts.items()
        for i, v in enumerate(vs)
    ]
    return Case(policy("criteria", id="crit", judges=panel("A"), criteria=suite,
                       allowed_destinations=("sim",)), [], votes)


def pairwise_case() -> Case:
    """3 judges x 2 samples, presented AB then BA, every sample restoring canonical A."""
    votes = [
        vote(j, i, arcv((4, 4, 4, 4), preference="B" if i % 2 else "A", evidence_indices=(0, 1)),
             "pairwise", order="BA" if i % 2 else "AB")
        for j in "ABC"
        for i in range(2)
    ]
    return Case(policy("pairwise", id="pw", judges=panel("ABC", samples=2),
                       allowed_destinations=("sim",)), gates(), votes)


def equivalence_case() -> Case:
    """One stub judge, 3 samples, all EQUIVALENT (min_agreement 2)."""
    votes = [vote("S", i, equivalence_answer("EQUIVALENT"), "equivalence") for i in range(3)]
    stub = judge("S", "stub:always-equivalent", samples=3)
    return Case(policy("equivalence", id="eq", judges=(stub,),
                       equivalence=EquivalencePolicy(votes=3, min_agreement=2),
                       allowed_destinations=("stub",)), [], votes)


# -- statements -------------------------------------------------------------------------------


def statement_for(
    policy: Policy, gate_list: Sequence[GateOutcome], votes: Sequence[Vote], *,
    subject: Artifact | None = None, bundle: EvidenceBundle | None = None, **extra: Any,
) -> dict[str, Any]:
    """The statement ``jurat run`` would sign about ``subject`` (default ``artifact()``):
    the real fold's decision, the panel's honest RF level."""
    return build_statement(
        policy=policy,
        artifact=subject or artifact(),
        gates=list(gate_list),
        votes=list(votes),
        decision=decide(policy, gate_list, votes),
        bundle=bundle or evidence(),
        replay_fidelity_level=replay_fidelity_level_for(policy),
        jurat_version="0.1.0",
        **extra,
    )
