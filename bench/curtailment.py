"""Benchmark exact curtailment (``[criteria] curtail = true``, ``jurat.curtail/v1``).

    .venv/bin/python bench/curtailment.py [--items N] [--no-write]

In process, not through ``jurat run`` (20,000 items x 4 configurations through the CLI, with
a ledger and a signed receipt each, would measure the ledger and the signer): a criteria
panel of three ``sim`` judges (reliability 0.85, and 0.95 for comparison; seeds 1-3) judges
one blocker criterion and one non-blocker criterion (5 samples) per item, with the blocker
at N = 5 and at N = 11 samples and quorum 0.8 (seed 001). Half the items have truth "yes"
and half "no", per criterion, independently. For every item:

- *full*: every planned sample is drawn with the sim judge's own answer function
  (``sim_label``: the label a ``sim`` sample answers, a function of seed, item, criterion
  and sample only), and folded with ``jurat.fold.decide`` (``jurat.fold/v2``);
- *curtailed*: the same answers, drawn through the engine's curtailment path
  (``jurat.judges._curtail.draw_curtailed``: waves of ``fewest_to_settle`` samples, stopping
  at the first ``settled`` prefix), folded with ``decide`` on a policy with ``curtail = true``.

It reports whether every rollout and every (judge, criterion) verdict and gate are identical,
and the fraction of judge calls saved. The sim answers of one sample do not depend on which
other samples were drawn, so the two runs see the same answers where both draw.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sys
import time
from dataclasses import dataclass, field

from _readme import write_section  # bench/ is on sys.path when a script runs

from jurat.canonical import sha256_digest
from jurat.fold import decide
from jurat.judges import PlannedSample, plan_samples
from jurat.judges._curtail import curtailed_groups, draw_curtailed
from jurat.judges._sim import sim_label
from jurat.models import Artifact, CriteriaSuite, Criterion, JudgeConfig, Policy, Vote

RELIABILITY = 0.85
QUORUM = 0.8


@dataclass
class Row:
    reliability: float
    blocker_n: int
    items: int
    planned: int
    drawn: int
    planned_blocker: int
    drawn_blocker: int
    rollouts_same: int
    outcomes_same: int
    outcomes: int
    waves: int
    seconds: float
    by_truth: dict[str, list[int]] = field(default_factory=dict)  # truth -> [planned, drawn]


def _policy(blocker_n: int, reliability: float, *, curtail: bool) -> Policy:
    judges = tuple(
        JudgeConfig(id=f"sim-{s}", provider="sim", reliability=reliability, seed=s)
        for s in (1, 2, 3)
    )
    suite = CriteriaSuite(
        samples=5, blocker_samples=blocker_n, blocker_quorum=QUORUM, curtail=curtail,
        items=(Criterion(id="correct", text="?", blocker=True),
               Criterion(id="shows-work", text="?")),
    )
    return Policy(id="bench-curtailment", kind="criteria", judges=judges, criteria=suite,
                  allowed_destinations=("sim",))


def _artifact(i: int) -> Artifact:
    text = f"bench item {i}"
    truth = {"correct": "yes" if i % 2 == 0 else "no",
             "shows-work": "yes" if (i // 2) % 2 == 0 else "no"}
    return Artifact(id=f"i{i}", sha256=sha256_digest(text), text=text, truth=truth,
                    media_type="text/plain")


def _vote(planned: PlannedSample, artifact: Artifact) -> Vote:
    truth = artifact.truth.get(planned.criterion) if isinstance(artifact.truth, dict) else None
    label = sim_label(planned.judge, artifact.sha256, planned.criterion, planned.sample,
                      "criterion", truth)
    return Vote(judge=planned.judge.id, criterion=planned.criterion, sample=planned.sample,
                answer={"verdict": label, "explanation": "sim"})


async def _curtailed(policy: Policy, artifact: Artifact) -> tuple[list[Vote], int]:
    drawn: dict[tuple[str, str, int], Vote] = {}
    waves = 0

    async def draw(planned: PlannedSample) -> None:
        drawn[planned.key] = _vote(planned, artifact)

    groups, _ = curtailed_groups(policy, plan_samples(policy, artifact))
    for group in groups:
        before = len(drawn)
        await draw_curtailed(group, drawn.get, draw, quorum=QUORUM)
        waves += len(drawn) > before
    ordered = [drawn[p.key] for g in groups for p in g if p.key in drawn]
    return ordered, waves


def bench(blocker_n: int, items: int, reliability: float = RELIABILITY) -> Row:
    full_policy = _policy(blocker_n, reliability, curtail=False)
    cut_policy = _policy(blocker_n, reliability, curtail=True)
    row = Row(reliability, blocker_n, items, 0, 0, 0, 0, 0, 0, 0, 0, 0.0)
    started = time.perf_counter()
    for i in range(items):
        artifact = _artifact(i)
        full_votes = [_vote(p, artifact) for p in plan_samples(full_policy, artifact)]
        cut_votes, _ = asyncio.run(_curtailed(cut_policy, artifact))
        full = decide(full_policy, (), full_votes)
        cut = decide(cut_policy, (), cut_votes)
        assert cut.curtailment is not None
        row.planned += len(full_votes)
        row.drawn += len(cut_votes)
        row.planned_blocker += sum(1 for v in full_votes if v.criterion == "correct")
        row.drawn_blocker += sum(1 for v in cut_votes if v.criterion == "correct")
        row.rollouts_same += cut.rollout == full.rollout
        truths = artifact.truth if isinstance(artifact.truth, dict) else {}
        for votes, slot in ((full_votes, 0), (cut_votes, 1)):
            for v in votes:
                row.by_truth.setdefault(truths[v.criterion], [0, 0])[slot] += 1
        for f, c in zip(full.criteria, cut.criteria, strict=True):
            row.outcomes += 1
            row.outcomes_same += (f.verdict, f.gate) == (c.verdict, c.gate)
            if c.drawn is not None:
                row.waves += 1
    row.seconds = time.perf_counter() - started
    return row


def table(rows: list[Row]) -> str:
    lines = [
        "| reliability | blocker N | items | calls planned | calls drawn | saved | "
        "blocker calls saved | saved, truth yes | saved, truth no | rollouts identical | "
        "criterion outcomes identical | outcomes curtailed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.reliability} | {r.blocker_n} | {r.items:,} | {r.planned:,} | {r.drawn:,} | "
            f"{1 - r.drawn / r.planned:.1%} | {1 - r.drawn_blocker / r.planned_blocker:.1%} | "
            f"{1 - r.by_truth['yes'][1] / r.by_truth['yes'][0]:.1%} | "
            f"{1 - r.by_truth['no'][1] / r.by_truth['no'][0]:.1%} | "
            f"{r.rollouts_same:,}/{r.items:,} | {r.outcomes_same:,}/{r.outcomes:,} | "
            f"{r.waves:,}/{r.outcomes:,} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    # The asked-for panel (0.85), and a higher-agreement one to show how the saving grows.
    rows = [bench(n, args.items, rel) for rel in (RELIABILITY, 0.95) for n in (5, 11)]
    seconds = sum(r.seconds for r in rows)
    text = (
        f"{table(rows)}\n\n"
        "Panel: three `sim` judges, reliability as shown, correlation 0, seeds 1-3; one "
        f"blocker (N as shown, quorum {QUORUM}) and one non-blocker (N = 5) per item; truth "
        "half yes, half no per criterion. In process: the sim answer function, the engine's "
        "curtailment path and `decide` (`jurat.fold/v2`), no ledger or signing. "
        f"{seconds:.1f} s on Python {platform.python_version()}, {platform.machine()}."
    )
    print(text)
    identical = all(r.rollouts_same == r.items and r.outcomes_same == r.outcomes for r in rows)
    if not args.no_write:
        write_section("curtailment", text)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
