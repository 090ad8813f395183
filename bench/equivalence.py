"""Benchmark the deterministic equivalence pass against GSM8K's gold `is_correct` labels.

    .venv/bin/python bench/equivalence.py [--data PATH] [--workers N] [--no-write]

Every model solution in ``gsm8k_example_model_solutions.jsonl.gz`` (every question x every
model key) is paired with its question's ground truth, and both the pass and the seed's naive
``numericMatch`` baseline (last integer of each text, compared with a tolerance) decide the
pair in the same run. ``is_correct`` in that file says whether the model's final answer equals
the ground truth's, which is exactly the question the pass answers.

A second table rewrites each model solution's final "A: n" line into other phrasings of the
same number (seed 002: "\\boxed{200}", "answer: 200", ...), moves it to the top (answer
first, working after it), and changes it to n+1 (a negative control), and reports how often
each comparator keeps its outcome on the original pair, using ``invariance_verdict``.

A third table times the hostile inputs of ``tests/checks/adversarial_answers.py`` (the tests
assert the cap each one stops at; how long that takes is measured here, not asserted).

The numbers are printed and written between the markers in ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import platform
import re
import runpy
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from _readme import write_section  # bench/ is on sys.path when a script runs

from jurat.checks import (
    InvarianceVerdict,
    deterministic_equivalence,
    invariance_verdict,
)
from jurat.fold import wilson_interval

HERE = Path(__file__).resolve().parent
# The full GSM8K solution set lives in the team's shared data folder beside the repository
# (too large to vendor); tests use the small subset in tests/checks/data.
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "gsm8k_example_model_solutions.jsonl.gz"
HOSTILE = HERE.parent / "tests" / "checks" / "adversarial_answers.py"
README = HERE / "README.md"

Pair = tuple[str, str, str, str, bool]  # id, model solution, ground truth, transform, gold


# ----------------------------------------------------------------------------- baseline

_LAST_INT = re.compile(r"-?\d+")
NUMERIC_MATCH_TOLERANCE = 1e-6


def numeric_match(a: str, b: str) -> bool | None:
    """The seed's numericMatch: the last integer of each text, equal within a tolerance.

    Undecided (None) only when a text has no integer at all; otherwise it always decides.
    """
    ma, mb = _LAST_INT.findall(a), _LAST_INT.findall(b)
    if not ma or not mb:
        return None
    return abs(int(ma[-1]) - int(mb[-1])) <= NUMERIC_MATCH_TOLERANCE


# ----------------------------------------------------------------------------- transforms

_A_LINE = re.compile(r"^A: (?P<n>-?[\d,]*\.?\d+)[ \t]*$", re.MULTILINE)


def _rewrite(solution: str, make: Callable[[str], str]) -> str | None:
    """Replace the last "A: n" line with ``make(n)``; None if there is no plain one.

    A replacement starting with "^" goes to the top of the solution instead (the answer
    written first, the working after it: the case the seed says numericMatch gets wrong).
    """
    found = list(_A_LINE.finditer(solution))
    if not found:
        return None
    m = found[-1]
    line = make(m["n"])
    if line.startswith("^"):
        return line[1:] + "\n" + solution[: m.start()].rstrip("\n") + solution[m.end() :]
    return solution[: m.start()] + line + solution[m.end() :]


def _plus_one(n: str) -> str:
    digits = n.replace(",", "")
    if "." in digits:
        return f"A: {float(digits) + 1:g}"
    return f"A: {int(digits) + 1}"


# Meaning-preserving rewrites of the final answer line (expected: same outcome), and one
# destructive rewrite (expected: the outcome of an equal pair flips to different).
TRANSFORMS: dict[str, Callable[[str], str]] = {
    "boxed": lambda n: f"The final answer is $\\boxed{{{n}}}$.",
    "answer-colon": lambda n: f"answer: {n}",
    "answer-is": lambda n: f"So the answer is {n}.",
    "hash": lambda n: f"#### {n}",
    "dollar": lambda n: f"A: ${n}" if not n.startswith("-") else f"A: -${n[1:]}",
    "trailing-zero": lambda n: f"A: {n}.0" if "." not in n else f"A: {n}0",
    "units": lambda n: f"A: {n} units",
    "answer-first": lambda n: f"^The answer is {n}. Here is why:",
    "plus-one (control)": _plus_one,
}


# ----------------------------------------------------------------------------- running


def load_pairs(path: Path) -> tuple[list[Pair], int, list[str]]:
    rows = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8")]
    models = sorted(k for k, v in rows[0].items() if isinstance(v, dict) and "solution" in v)
    pairs: list[Pair] = []
    for i, row in enumerate(rows):
        for model in models:
            sol = row[model]
            pid = f"{i}/{model}"
            pairs.append((pid, sol["solution"], row["ground_truth"], "", sol["is_correct"]))
    return pairs, len(rows), models


# (pass outcome, pass method, seconds, numericMatch outcome, pass detail, pair id)
Result = tuple[bool | None, str, float, bool | None, str, str]


def _judge(pair: Pair) -> Result:
    pid, solution, truth, _transform, _gold = pair
    start = time.perf_counter()
    check = deterministic_equivalence(solution, truth)
    elapsed = time.perf_counter() - start
    return (
        check.equivalent,
        check.method,
        elapsed,
        numeric_match(solution, truth),
        check.detail,
        pid,
    )


def run(pairs: Sequence[Pair], workers: int) -> list[Result]:
    if workers <= 1:
        return [_judge(p) for p in pairs]
    # fork would inherit the parent's imports; spawn keeps each worker's math-verify state
    # (and its SIGALRM timeout, which needs each worker's main thread) its own.
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        return pool.map(_judge, pairs, chunksize=64)


# ----------------------------------------------------------------------------- hostile inputs

# (input name, characters, the pass's detail on it, best seconds of HOSTILE_REPEAT)
Hostile = tuple[str, int, str, float]
HOSTILE_REPEAT = 3


def time_hostile(path: Path = HOSTILE, repeat: int = HOSTILE_REPEAT) -> list[Hostile]:
    """Each hostile input against "5", in this process (math-verify's timeout needs the main
    thread): the best of ``repeat`` runs, so a busy neighbour inflates it least."""
    inputs: dict[str, str] = runpy.run_path(str(path))["ADVERSARIAL"]
    rows: list[Hostile] = []
    for name, text in inputs.items():
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            check = deterministic_equivalence(text, "5")
            best = min(best, time.perf_counter() - start)
        rows.append((name, len(text), check.detail.removeprefix("a: "), best))
    return rows


def hostile_report(rows: Sequence[Hostile], median_pair: float) -> list[str]:
    worst = max(rows, key=lambda r: r[3])
    out = [
        f"Hostile inputs ({HOSTILE.relative_to(HERE.parent)}, each against \"5\"; best of "
        f"{HOSTILE_REPEAT} runs in the main process; the ratio is to the median GSM8K pair). "
        f"Worst: {worst[0]}, {1000 * worst[3]:.1f} ms.",
        "",
        "| input | characters | outcome | ms | x median pair |",
        "|---|---:|---|---:|---:|",
    ]
    for name, chars, outcome, seconds in rows:
        shown = outcome if len(outcome) <= 60 else outcome[:59] + "…"
        shown = shown.replace("|", "\\|")
        ratio = seconds / median_pair if median_pair else float("nan")
        out.append(f"| {name} | {chars:,} | {shown} | {1000 * seconds:.2f} | {ratio:,.0f} |")
    return out


# ----------------------------------------------------------------------------- reporting


def pct(x: float) -> str:
    return f"{100 * x:.2f}%"


@dataclass(frozen=True)
class Summary:
    name: str
    pairs: int
    settled: int
    agree: int
    low: float
    high: float
    confusion: Counter[tuple[str, str]]

    @property
    def left(self) -> int:
        return self.pairs - self.settled

    @property
    def agreement(self) -> float:
        return self.agree / self.settled if self.settled else float("nan")


_COLUMN = {True: "equivalent", False: "different", None: "left to judge"}


def summarise(name: str, outcomes: Sequence[bool | None], gold: Sequence[bool]) -> Summary:
    both = list(zip(outcomes, gold, strict=True))
    settled = [(o, g) for o, g in both if o is not None]
    agree = sum(1 for o, g in settled if o == g)
    low, high = wilson_interval(agree, len(settled)) if settled else (0.0, 0.0)
    confusion = Counter(("gold correct" if g else "gold wrong", _COLUMN[o]) for o, g in both)
    return Summary(name, len(both), len(settled), agree, low, high, confusion)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--workers", type=int, default=2, help="at most 2 on the shared box")
    parser.add_argument("--no-write", action="store_true", help="do not update the README")
    args = parser.parse_args(argv)
    workers = max(1, min(args.workers, 2))

    pairs, questions, models = load_pairs(args.data)
    gold = [p[4] for p in pairs]
    wall = time.perf_counter()
    results = run(pairs, workers)
    wall = time.perf_counter() - wall
    ours = summarise("deterministic pass (math-verify)", [r[0] for r in results], gold)
    base = summarise("numericMatch baseline", [r[3] for r in results], gold)
    base_start = time.perf_counter()
    for p in pairs:
        numeric_match(p[1], p[2])
    base_per_pair = (time.perf_counter() - base_start) / len(pairs)
    per_pair = [r[2] for r in results]
    methods = Counter(r[1] for r in results)
    wrong = [
        (r[5], r[4]) for r, g in zip(results, gold, strict=True) if r[0] is not None and r[0] != g
    ]
    left = [(r[5], r[4]) for r in results if r[0] is None]

    # Invariance under rewrites of the final answer line.
    inv_rows: list[tuple[str, InvarianceVerdict, InvarianceVerdict]] = []
    transformed: list[Pair] = []
    originals: list[tuple[bool | None, bool | None]] = []
    names: list[str] = []
    for (pid, sol, truth, _t, g), r in zip(pairs, results, strict=True):
        for tname, make in TRANSFORMS.items():
            new = _rewrite(sol, make)
            if new is None:
                continue
            transformed.append((pid, new, truth, tname, g))
            originals.append((r[0], r[3]))
            names.append(tname)
    inv_wall = time.perf_counter()
    inv_results = run(transformed, workers)
    inv_wall = time.perf_counter() - inv_wall
    for tname in TRANSFORMS:
        control = tname.endswith("(control)")
        ours_kept: list[bool | None] = []
        base_kept: list[bool | None] = []
        for (o_ours, o_base), res, nm in zip(originals, inv_results, names, strict=True):
            if nm != tname:
                continue
            sides: tuple[tuple[bool | None, bool | None, list[bool | None]], ...] = (
                (o_ours, res[0], ours_kept),
                (o_base, res[3], base_kept),
            )
            for orig, after, kept in sides:
                if control:
                    # Only originally-equal pairs have a known expected outcome: different.
                    if orig is True:
                        kept.append(None if after is None else after is False)
                else:
                    kept.append(None if orig is None or after is None else after == orig)
        inv_rows.append((tname, invariance_verdict(ours_kept), invariance_verdict(base_kept)))

    hostile = time_hostile()
    lines = report(
        ours,
        base,
        questions,
        models,
        per_pair,
        base_per_pair,
        wall,
        workers,
        methods,
        wrong,
        left,
        inv_rows,
        len(transformed),
        inv_wall,
    )
    lines += ["", *hostile_report(hostile, statistics.median(per_pair))]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_readme(text)
        print(f"\nwrote {README.relative_to(HERE.parent)}")
    return 0 if ours.settled and ours.agreement >= 0.99 else 1


def report(
    ours: Summary,
    base: Summary,
    questions: int,
    models: list[str],
    per_pair: list[float],
    base_per_pair: float,
    wall: float,
    workers: int,
    methods: Counter[str],
    wrong: list[tuple[str, str]],
    left: list[tuple[str, str]],
    inv_rows: list[tuple[str, InvarianceVerdict, InvarianceVerdict]],
    n_transformed: int,
    inv_wall: float,
) -> list[str]:
    out = [
        f"GSM8K example model solutions: {questions} questions x {len(models)} model keys "
        f"({', '.join(models)}) = {ours.pairs} pairs (model solution, ground truth); "
        "every pair, no sampling.",
        f"math-verify {version('math-verify')}, Python {platform.python_version()}, "
        f"{workers} worker process(es), wall {wall:.1f} s.",
        "",
        "| comparator | pairs | settled | left to the judge "
        "| agrees with gold on settled | Wilson 95% |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for s in (ours, base):
        out.append(
            f"| {s.name} | {s.pairs} | {s.settled} ({pct(s.settled / s.pairs)}) "
            f"| {s.left} ({pct(s.left / s.pairs)}) "
            f"| {s.agree}/{s.settled} = {pct(s.agreement)} | [{pct(s.low)}, {pct(s.high)}] |"
        )
    out += [
        "",
        "Confusion matrices (rows: gold `is_correct`; columns: the comparator's outcome):",
        "",
    ]
    for s in (ours, base):
        out += [
            f"{s.name}:",
            "",
            "| gold | equivalent | different | left to judge |",
            "|---|---:|---:|---:|",
        ]
        for row in ("gold correct", "gold wrong"):
            cells = " | ".join(str(s.confusion[(row, col)]) for col in _COLUMN.values())
            out.append(f"| {row} | {cells} |")
        out.append("")
    srt = sorted(per_pair)
    ms = [1000 * x for x in (statistics.fmean(srt), statistics.median(srt))]
    out += [
        "Time per pair (deterministic pass, measured inside the worker): "
        f"mean {ms[0]:.2f} ms, median {ms[1]:.2f} ms, "
        f"p99 {1000 * srt[int(0.99 * (len(srt) - 1))]:.2f} ms, max {1000 * srt[-1]:.1f} ms; "
        f"numericMatch {1e6 * base_per_pair:.1f} µs per pair.",
        "",
        "Outcome by method: " + ", ".join(f"{m} {n}" for m, n in methods.most_common()) + ".",
        "",
        f"Settled pairs that disagree with gold: {len(wrong)}.",
    ]
    out += [f"- {pid}: {detail}" for pid, detail in wrong[:20]]
    out += ["", f"Pairs left to the judge ({len(left)}):", ""]
    out += [f"- `{pid}`: {detail}" for pid, detail in left[:30]]
    out += [
        "",
        f"Invariance: the final `A: n` line of each model solution rewritten ({n_transformed} "
        f"rewritten pairs, wall {inv_wall:.1f} s). *Kept* = the outcome on the rewritten pair "
        "equals the outcome on the original pair; for the control (n+1) the expectation is "
        "that a pair that was equivalent becomes different. *Undecided* = the original or the "
        "rewritten pair was left to the judge.",
        "",
        "| rewrite | pass: kept / decided | undecided | Wilson 95% "
        "| numericMatch: kept / decided | undecided | Wilson 95% |",
        "|---|---:|---:|---|---:|---:|---|",
    ]
    for tname, vo, vb in inv_rows:
        halves: list[str] = []
        for v in (vo, vb):
            prop = "n/a" if v.proportion is None else pct(v.proportion)
            iv = "n/a" if v.interval is None else f"[{pct(v.interval[0])}, {pct(v.interval[1])}]"
            halves.append(f"{v.preserved}/{v.decided} = {prop} | {v.undecided} | {iv}")
        out.append(f"| {tname} | {halves[0]} | {halves[1]} |")
    return out


def write_readme(text: str) -> None:
    write_section("equivalence", text)


if __name__ == "__main__":
    sys.exit(main())
