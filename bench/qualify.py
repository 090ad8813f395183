"""Coverage of the qualification's rho interval and implied false-block rate on the sim judge.

    .venv/bin/python bench/qualify.py [--repetitions 100] [--items 200] [--no-write]

Issue 31, must show: on the sim judge (reliability 0.85) with declared correlation 0, 0.1
and 0.3, the estimated rho's 95% interval should cover the declared value in at least 95 of
100 seeded repetitions of a qualification run, and the implied false-block rate should
match the simulated one within its interval. One repetition is one qualification run of
``--items`` criterion items (truth half yes, half no) with 20 samples each (2 windows x
burst 5 + spaced 5: the sim's answers do not depend on time, so these are samples 0-19),
drawn with the sim's own answer function (``sim_label``) and a judge seed per repetition,
then measured with the statistics of ``jurat qualify`` (``jurat.qualify.measure``). The
simulated false-block rate is that of a truly passing blocker at N = 5, quorum 0.8, over
20,000 fresh items of a judge seed no repetition uses.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

from _readme import write_section  # bench/ is on sys.path when a script runs

from jurat.judges import sim_label
from jurat.models import JudgeConfig
from jurat.qualify import Sample, measure

CORRELATIONS = (0.0, 0.1, 0.3)
SAMPLES = 20
N, QUORUM, BUDGET = 5, 0.8, 0.005


def repetition(items: int, correlation: float, seed: int, samples: int = SAMPLES
               ) -> list[Sample]:
    judge = JudgeConfig(id="S", provider="sim", seed=seed, reliability=0.85,
                        correlation=correlation)
    out = []
    for i in range(items):
        item = f"{seed:016x}{i:048x}"
        truth = "yes" if i % 2 == 0 else "no"
        for k in range(samples):
            out.append(Sample(judge="S", item=item, criterion="c", window=2 * k // samples,
                              mode="burst" if k % 2 == 0 else "spaced", sample=k,
                              label=sim_label(judge, item, "c", k, "criterion", truth)))
    return out


def simulated_false_block(correlation: float, items: int = 20_000) -> tuple[int, int]:
    from jurat.fold import fold_criterion, stability_gate

    judge = JudgeConfig(id="S", provider="sim", seed=999_999, reliability=0.85,
                        correlation=correlation)
    blocks = 0
    for i in range(items):
        votes = [sim_label(judge, f"{i:064x}", "b", k, "criterion", "yes") for k in range(N)]
        blocks += stability_gate(fold_criterion(votes, blocker=True), quorum=QUORUM) == "block"
    return blocks, items


def main(repetitions: int, items: int, write: bool) -> None:
    from jurat.fold import wilson_interval

    rows = ["| declared rho | rho covered | mean rho estimate | mean interval width | "
            "simulated false-block [95%] | beta-binomial covers | empirical covers | "
            "binomial value |", "|---:|---:|---:|---:|---|---:|---:|---:|"]
    started = time.perf_counter()
    for correlation in CORRELATIONS:
        blocks, total = simulated_false_block(correlation)
        sim_low, sim_high = wilson_interval(blocks, total)
        covered = bb = emp = 0
        estimates, widths = [], []
        binomial = 0.0
        for r in range(repetitions):
            samples = repetition(items, correlation, seed=1000 + r)
            f = measure("S", "criterion", samples, {(s.item, s.criterion): (
                "yes" if int(s.item[16:], 16) % 2 == 0 else "no") for s in samples},
                campaign_samples=N, quorum=QUORUM, budget=BUDGET)
            assert f.rho.value is not None and f.rho.low is not None and f.rho.high is not None
            covered += f.rho.low <= correlation <= f.rho.high
            estimates.append(f.rho.value)
            widths.append(f.rho.high - f.rho.low)
            rate = blocks / total
            b = f.false_block.beta_binomial
            bb += b.low is not None and b.high is not None and b.low <= rate <= b.high
            e = f.false_block.empirical
            emp += e.low is not None and e.high is not None and e.low <= rate <= e.high
            binomial += f.false_block.binomial / repetitions
        rows.append(
            f"| {correlation} | {covered} / {repetitions} | {sum(estimates) / repetitions:.4f} | "
            f"{sum(widths) / repetitions:.4f} | {blocks / total:.4f} [{sim_low:.4f}, "
            f"{sim_high:.4f}] | {bb} / {repetitions} | {emp} / {repetitions} | "
            f"{binomial:.4f} |")
        print(rows[-1], flush=True)
    elapsed = time.perf_counter() - started
    text = "\n".join([
        f"Sim judge, reliability 0.85; {repetitions} repetitions per declared correlation, "
        f"each a qualification of {items} criterion items x {SAMPLES} samples (judge seeds "
        f"1000-{999 + repetitions}); campaign N = {N}, quorum {QUORUM}. "
        f"{elapsed:.1f} s on {platform.python_implementation()} {platform.python_version()}.",
        "", *rows, "",
        "\"rho covered\": repetitions whose 95% interval holds the declared correlation. "
        "\"covers\": repetitions whose implied false-block interval holds the simulated rate "
        "(beta-binomial: at the corners of the error-rate and rho intervals; empirical: "
        "N-sample draws from the qualification's own items, t interval over items).",
    ])
    if write:
        write_section("qualify", text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    main(args.repetitions, args.items, not args.no_write)
    sys.exit(0)
