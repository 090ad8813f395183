"""HumanEval canonical solutions through the whole pipeline, local executor vs Ray workers.

    .venv/bin/python bench/ray_humaneval.py [--problems K] [--workers 1,2,4] [--no-write]

One `jurat run` command per arm over the first K problems (default 96 of 164: the whole
bench then takes a few minutes on this machine): every candidate's default checks
(parse, import policy, ruff, its own HumanEval tests sandboxed under coverage,
complexity) and one `sim` judge sample, a PostgreSQL ledger (a fresh database per arm),
signed receipts, one checkpoint and the proofs. Arms:

``local``     the default executor, one process (``--workers 1``).
``ray N``     ``--executor ray`` on a Ray cluster started for the arm: a head node
              without CPUs and N worker nodes of one CPU each, all on this machine
              (tests/ray/cluster.py); started before the clock starts, stopped after.

CPU is read from a cgroup v1 ``cpuacct`` group the benchmark puts itself in first, so
that every process it starts is counted wherever it is reparented: the `jurat run`
driver, the Ray cluster (GCS, raylets, workers, agents) and every sandbox. It is the
group's usage over the run alone (the clusters start before the clock); PostgreSQL's
own CPU is not counted in any arm. The candidates are HumanEval's
canonical solutions, reference data, never untrusted input.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _readme import write_section  # bench/ is on sys.path when a script runs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.ray.cluster import LocalCluster, local_cluster  # noqa: E402
from tests.support.postgres import fresh_database  # noqa: E402

DATA = HERE.parent / "tests" / "checks" / "data" / "HumanEval.jsonl.gz"
#: Seconds the idle cluster's background CPU is measured for.
IDLE_S = 5.0

CAMPAIGN = """\
[campaign]
id = "he-ray"
kind = "rubric"
allowed_destinations = ["sim"]
risk_tier = { votes = 1, min_agreement = 0.5 }

[rubric]
version = "r/1"
threshold = 0.5
hard_gates = ["python.parse", "tests.pass"]
criteria = [{ id = "correctness", weight = 1.0 }]

[checks.python]

[[judges]]
id = "a"
provider = "sim"
reliability = 1.0
samples = 1
max_concurrency = 8

[[datasets]]
path = "items.jsonl"
"""


@dataclass
class Arm:
    name: str
    workers: int
    wall_s: float
    cpu_s: float
    accepted: int
    receipts: int
    idle_cpu: float = 0.0
    """The idle cluster's own CPU, in cores (seconds per second), measured before the run."""


def build(camp: Path, k: int) -> None:
    from jurat.checks import humaneval_to_files, load_humaneval

    camp.mkdir(parents=True)
    (camp / "c.toml").write_text(CAMPAIGN)
    with (camp / "items.jsonl").open("w") as out:
        for i, problem in enumerate(load_humaneval(DATA)[:k]):
            source, tests = humaneval_to_files(problem)
            (name, text), = tests.items()
            folder = camp / "tests" / f"p{i:03d}"
            folder.mkdir(parents=True)
            (folder / name).write_text(text)
            out.write(json.dumps({"id": f"he{i:03d}", "text": source,
                                  "media_type": "text/x-python", "truth": "accept",
                                  "tests": f"tests/p{i:03d}/{name}"}) + "\n")


class CpuGroup:
    """A cpuacct cgroup holding this process and so everything it starts from now on."""

    def __init__(self) -> None:
        self.path = Path("/sys/fs/cgroup/cpuacct") / f"jurat-ray-bench-{os.getpid()}"
        self.path.mkdir()
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        (self.path.parent / "cgroup.procs").write_text(str(os.getpid()))
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)  # the last killed processes are still leaving


def run_arm(work: Path, camp: Path, key: Path, workers: int,
            cluster: LocalCluster | None, cpu: CpuGroup) -> Arm:
    name = "local" if cluster is None else f"ray {workers}"
    out = work / f"out-{name.replace(' ', '')}"
    extra = ["--workers", "1"] if cluster is None else [
        "--executor", "ray", "--ray-address", cluster.address]
    idle = 0.0
    if cluster is not None:
        # What the cluster costs doing nothing (raylets, GCS, agents): its background.
        time.sleep(2)
        start = cpu.seconds()
        time.sleep(IDLE_S)
        idle = (cpu.seconds() - start) / IDLE_S
    with fresh_database() as url:
        before = cpu.seconds()
        started = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-m", "jurat", "run", str(camp / "c.toml"), "--out", str(out),
             "--ledger", url, "--key", str(key), "--quiet", *extra],
            cwd=work, capture_output=True, text=True,
            env={**os.environ, "XDG_CONFIG_HOME": str(work / ".config"),
                 "XDG_STATE_HOME": str(work / "state")})
        wall = time.perf_counter() - started
        used = cpu.seconds() - before
    if r.returncode not in (0, 1, 2):
        raise SystemExit(f"{name}: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr}")
    line = next((x for x in r.stdout.splitlines() if x.startswith("outcomes:")), "")
    accepted = int(line.split("accept ")[1].split(",")[0]) if "accept " in line else -1
    receipts = len(list(out.glob("*.sigstore.json")))
    return Arm(name, workers, wall, used, accepted, receipts, idle)


def table(arms: list[Arm], k: int) -> str:
    """One row per arm. "Ray overhead per job": the arm's CPU minus the idle cluster's
    background over its wall time, minus the local arm's CPU, per candidate."""
    local = arms[0]
    rows = ["| arm | processes running jobs | wall s | candidates/s | vs local "
            "| CPU s | CPU ms per candidate | idle cluster, cores | Ray overhead per job, "
            "CPU ms | accepted | receipts |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for arm in arms:
        extra = "-"
        if arm is not local:
            net = arm.cpu_s - arm.idle_cpu * arm.wall_s - local.cpu_s
            extra = f"{1000 * net / k:+.0f}"
        rows.append(
            f"| {arm.name} | {arm.workers} | {arm.wall_s:.1f} | {k / arm.wall_s:.2f} "
            f"| {local.wall_s / arm.wall_s:.2f}x | {arm.cpu_s:.1f} "
            f"| {1000 * arm.cpu_s / k:.0f} | {arm.idle_cpu:.2f} | {extra} "
            f"| {arm.accepted}/{k} | {arm.receipts} |")
    return "\n".join(rows)


def import_cost() -> float:
    """CPU seconds a fresh interpreter spends importing what a Ray task runs: each Ray
    worker process pays it once, before its first job."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import jurat.runner._ray_task"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=96)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    k = args.problems
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="jurat-ray-bench-") as tmp:
        work = Path(tmp)
        camp = work / "camp"
        build(camp, k)
        keygen = subprocess.run([sys.executable, "-m", "jurat", "keygen", "--out",
                                 str(work / "keys")], capture_output=True, text=True)
        assert keygen.returncode == 0, keygen.stderr
        key = work / "keys" / "jurat.key"
        cpu = CpuGroup()
        try:
            arms = [run_arm(work, camp, key, 1, None, cpu)]
            print(table(arms, k), flush=True)
            for n in [int(x) for x in args.workers.split(",")]:
                with local_cluster(n) as cluster:
                    arms.append(run_arm(work, camp, key, n, cluster, cpu))
                print(table(arms, k), flush=True)
        finally:
            cpu.close()
    import ray

    imported = import_cost()
    text = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: the first {k} of "
        f"164 HumanEval canonical solutions, one `jurat run` per arm (PostgreSQL ledger, a "
        f"fresh database each; default checks with the sandboxed tests; one `sim` sample); "
        f"CPython {platform.python_version()}, Ray {ray.__version__}, {os.cpu_count()} "
        f"cores; load average before: {' '.join(f'{x:.2f}' for x in load)} (shared "
        f"machine). Ray arms: a head without CPUs plus N worker nodes of one CPU, all on "
        f"this machine, started before the clock; CPU: every process of the arm (a cpuacct "
        f"cgroup), the cluster's and the sandboxes' included.\n\n"
        f"{table(arms, k)}\n\nImporting what a task runs costs a fresh Ray worker process "
        f"{imported:.2f} s of CPU, once, before its first job (included above).\n")
    print(text)
    if not args.no_write:
        write_section("ray_humaneval", text)


if __name__ == "__main__":
    main()
