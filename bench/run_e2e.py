"""A whole `jurat run`, as a user runs it, against a loopback OpenAI-compatible server.

    .venv/bin/python bench/run_e2e.py [--artifacts 2000] [--samples 5] [--ledger sqlite|pg]
                                      [--old-src DIR] [--profile FILE] [--no-baseline]
                                      [--no-breakdown] [--no-single] [--no-write]

One `jurat run` command (start-up, intake of a JSON Lines dataset, judge calls, ledger,
receipts, the checkpoint and every receipt's inclusion proof included; with its default
worker processes, then again with ``--workers 1`` unless ``--no-single``), by default
2,000 artifacts x 5 samples = 10,000 judge calls, against the fake server of
tests/support/fake_openai.py in its own process at 50 ms latency; the judge has
``max_concurrency = 64``, so the limit is 64 / 0.050 s = 1,280 calls/s. Reported: calls/s
and its share of the limit, the run process's CPU time per call (user + system, from
``wait4``), the server's, and the same run's baselines from bench/orchestration.py, each
in a fresh interpreter of its own: asyncio's bare streams writing the same request bytes
(the ceiling: every ratio is against it), aiohttp's bare ``ClientSession``, the bare
`httpx2` client the SDKs use, jurat's judge calls alone (the adapter's ``complete``) and
jurat's judge phase (``run_samples``).

``--old-src DIR`` measures another jurat in the same run for comparison: DIR is the
``src`` of a git worktree (``git worktree add /tmp/jurat-old <commit>``), put first on
``PYTHONPATH`` for its whole runs (interleaved with this tree's) and its judge-call
variants.

Then, unless ``--no-breakdown``, the same campaign runs once more in this process with
the run's main steps timed (``STEPS``: CPU time of the thread running each), which says
where the CPU goes without a profiler's distortion. ``--profile FILE`` also runs the
`jurat run` process under cProfile, writes the stats to FILE and prints the heaviest
functions (the profiler slows Python code down more than C code: read its shares, not
its times). Results go to bench/README.md between the ``run_e2e`` markers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

import orchestration  # noqa: E402  (bench/ is on sys.path when a script runs)
from _readme import write_section  # noqa: E402

from tests.support.fake_openai import FakeOpenAI, echo_judge  # noqa: E402

CONCURRENCY = 64
PG_ROOT = os.environ.get("JURAT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")

CAMPAIGN = """\
[campaign]
id = "bench-e2e"
kind = "rubric"
allowed_destinations = ["{url}"]

[rubric]
version = "bench/1"
threshold = 0.5
criteria = [
  {{ id = "correctness", weight = 0.45 }},
  {{ id = "reasoning", weight = 0.25 }},
  {{ id = "adherence", weight = 0.2 }},
  {{ id = "presentation", weight = 0.1 }},
]

[[judges]]
id = "A"
provider = "openai-compat"
base_url = "{url}"
model = "bench-model"
api_key_env = "BENCH_API_KEY"
samples = {samples}
max_concurrency = {concurrency}
timeout_s = 30
retries = 0

[[datasets]]
path = "items.jsonl"
"""


def write_dataset(path: Path, n: int) -> None:
    """``n`` short answers, about a kilobyte each, as JSON Lines."""
    with path.open("w") as out:
        for i in range(n):
            text = f"Answer {i}: the sum is {i + 1}, because {i} + 1 = {i + 1}.\n" + (
                "The working is shown step by step.\n" * 24)
            out.write(json.dumps({"id": f"a{i:06d}", "text": text, "task": f"t{i % 50}"}))
            out.write("\n")


def _env(work: Path, src: Path = ROOT / "src") -> dict[str, str]:
    return {**os.environ, "XDG_CONFIG_HOME": str(work / "cfg"),
            "XDG_STATE_HOME": str(work / "state"), "BENCH_API_KEY": "x",
            "PYTHONPATH": str(src)}


def timed(cmd: list[str], *, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run ``cmd``; its wall time, CPU time (user + system) and peak RSS, from wait4.

    ``wait4`` gives this child's own resource use (``RUSAGE_CHILDREN`` would fold in
    every child so far); its output is drained by threads meanwhile, so it never blocks.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    output: list[bytes] = []
    reader = threading.Thread(target=lambda: output.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mib": usage.ru_maxrss / 1024, "code": proc.returncode,
            "output": b"".join(output).decode(errors="replace")}


def _pg_database() -> tuple[str, Any]:
    """A fresh PostgreSQL database for one run, and a function that drops it."""
    import sqlalchemy as sa

    name = f"jurat_bench_{uuid.uuid4().hex[:10]}"
    engine = sa.create_engine(PG_ROOT.replace("postgresql://", "postgresql+psycopg://", 1),
                              isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = PG_ROOT.rsplit("/", 1)[0] + f"/{name}"

    def drop() -> None:
        with engine.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        engine.dispose()

    return url, drop


def run_jurat(work: Path, url: str, *, artifacts: int, samples: int, ledger: str,
              profile: Path | None, workers: int | None = None,
              src: Path = ROOT / "src") -> dict[str, Any]:
    """One whole `jurat run` of the jurat in ``src`` against the server at ``url``."""
    camp = work / "camp"
    camp.mkdir()
    (camp / "campaign.toml").write_text(CAMPAIGN.format(
        url=url, samples=samples, concurrency=CONCURRENCY))
    write_dataset(camp / "items.jsonl", artifacts)
    env = _env(work, src)
    keys = work / "keys"
    subprocess.run([sys.executable, "-m", "jurat", "keygen", "--out", str(keys)], env=env,
                   check=True, capture_output=True)
    drop = None
    if ledger == "pg":
        ledger_url, drop = _pg_database()
    else:
        ledger_url = f"sqlite:///{work / 'ledger.db'}"
    cmd = [sys.executable]
    if profile is not None:
        cmd += ["-m", "cProfile", "-o", str(profile)]
    cmd += ["-m", "jurat", "run", str(camp / "campaign.toml"), "--out", str(work / "out"),
            "--ledger", ledger_url, "--key", str(keys / "jurat.key"), "--quiet"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    try:
        result = timed(cmd, cwd=work, env=env)
        result["receipts"] = sum(1 for _ in (work / "out").glob("*.sigstore.json"))
        result["proofs"] = sum(1 for _ in (work / "out").glob("*.proof.json"))
    finally:
        if drop is not None:
            drop()
    if result["code"] not in (0, 1, 2):
        raise RuntimeError(f"jurat run exited {result['code']}:\n{result['output'][-3000:]}")
    found = re.search(r"^processes: (\d+)", result["output"], re.M)
    result["processes"] = int(found.group(1)) if found else 1
    return result


def measure_run(args: argparse.Namespace, root: Path, workers: int | None = None,
                src: Path = ROOT / "src") -> dict[str, Any]:
    """One measured run in a new directory under ``root``, which the caller deletes only
    after its last run (see ``main``)."""
    calls = args.artifacts * args.samples
    work = Path(tempfile.mkdtemp(dir=root))
    with FakeOpenAI(echo_judge, latency_ms=args.latency_ms, process=True) as server:
        before = server.requests
        server_cpu = orchestration._proc_cpu(server.pid)
        result = run_jurat(work, server.url, artifacts=args.artifacts,
                           samples=args.samples, ledger=args.ledger, profile=args.profile,
                           workers=workers, src=src)
        result["server_cpu"] = orchestration._proc_cpu(server.pid) - server_cpu
        served = server.requests - before
    if served != calls or result["receipts"] != args.artifacts:
        raise RuntimeError(f"expected {calls} calls and {args.artifacts} receipts, got "
                           f"{served} calls and {result['receipts']} receipts")
    result["calls"] = calls
    return result


def startup(src: Path = ROOT / "src") -> float:
    """Wall time of importing what `jurat run` imports, in a fresh interpreter: the
    start-up floor of any run."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import jurat.cli._run"], check=True,
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(src)})
        best = min(best, time.perf_counter() - start)
    return best


def print_profile(path: Path, top: int = 30) -> None:
    """Where the profiled run's time went: the heaviest functions, by own and total time."""
    import pstats

    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


#: The steps ``--breakdown`` times: (module, class or "", function, what it is). Each is
#: called once per artifact, per sample or per ledger entry; its CPU time is taken on the
#: thread that runs it (the ledger's commits run on their own thread).
STEPS = (
    ("jurat.runner._run", "", "iter_placed", "read and intake dataset rows"),
    ("jurat.ledger._store", "Ledger", "entries", "read the job's history (for a resume)"),
    ("jurat.judges._engine", "", "interpret", "validate each answer (strict JSON, ARCV schema)"),
    ("jurat.ledger._group", "", "prepare", "check and canonicalise each ledger entry"),
    ("jurat.ledger._store", "Ledger", "_commit",
     "commit thread: write the batches (SQL, Merkle nodes)"),
    ("jurat.runner._run", "", "decide", "fold"),
    ("jurat.ledger._store", "Ledger", "next_review", "read the receipt's review slot"),
    ("jurat.runner._run", "", "decision_statement", "build the statement"),
    ("jurat.runner._run", "", "sign_statement",
     "check the statement (re-derives the fold) and sign the receipt (DSSE, ECDSA P-256)"),
)


def breakdown(url: str, artifacts: int, samples: int) -> list[tuple[str, float]]:
    """Where a run's CPU goes: the same campaign run in this process, each step of
    ``STEPS`` timed in CPU seconds of the thread running it, then the checkpoint and the
    proofs; what no step covers is the judge calls themselves (HTTP, engine, prompts,
    telemetry) and asyncio. Returns (step, CPU ms per artifact)."""
    import importlib

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from jurat.campaign import load_campaign
    from jurat.ledger import LogSigner, open_ledger
    from jurat.receipts import keygen, load_private_key
    from jurat.runner import Progress, RunOptions, run_campaign_async

    spent: dict[str, float] = dict.fromkeys((label for *_, label in STEPS), 0.0)
    undo = []
    for module, cls, name, label in STEPS:
        owner: Any = importlib.import_module(module)
        owner = getattr(owner, cls) if cls else owner
        original = getattr(owner, name)
        generator = name in ("entries", "iter_placed")

        def timed_call(*a: Any, _f: Any = original, _label: str = label,
                       _generator: bool = generator, **k: Any) -> Any:
            start = time.thread_time()
            try:
                result = _f(*a, **k)
                return iter(list(result)) if _generator else result  # time the reading
            finally:
                spent[_label] += time.thread_time() - start

        setattr(owner, name, timed_call)
        undo.append((owner, name, original))
    os.environ["BENCH_API_KEY"] = "x"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            camp = work / "camp"
            camp.mkdir()
            (camp / "campaign.toml").write_text(CAMPAIGN.format(
                url=url, samples=samples, concurrency=CONCURRENCY))
            write_dataset(camp / "items.jsonl", artifacts)
            private, _ = keygen(work / "keys")
            campaign = load_campaign(camp / "campaign.toml")
            seqs: list[int] = []
            with open_ledger(f"sqlite:///{work / 'ledger.db'}") as ledger:
                cpu = time.process_time()
                asyncio.run(run_campaign_async(
                    campaign, RunOptions(out_dir=work / "out", quiet=True), ledger=ledger,
                    key=load_private_key(private), progress=Progress(),
                    on_result=lambda r, _: seqs.append(r.receipt_seq or 0)))
                run_cpu = time.process_time() - cpu
                start = time.process_time()
                note = ledger.checkpoint(LogSigner(Ed25519PrivateKey.generate()))
                spent["sign one checkpoint (checks every new entry)"] = (
                    time.process_time() - start)
                start = time.process_time()
                for i in range(0, len(seqs), 1000):
                    ledger.prove_entries(seqs[i:i + 1000], note)
                spent["prove every receipt (prove_entries)"] = time.process_time() - start
    finally:
        for owner, name, original in undo:
            setattr(owner, name, original)
    timed = sum(v for k, v in spent.items() if not k.startswith(("sign one", "prove every")))
    spent["the rest: judge calls (HTTP, engine, prompts, telemetry), the jobs' own "
          "code, asyncio"] = run_cpu - timed
    return [(label, 1000 * value / artifacts) for label, value in spent.items()]


#: The ceiling every ratio is against, and bench/orchestration.py's variants measured here;
#: those that run jurat's code are measured for ``--old-src`` too.
CEILING = "asyncio streams bare"
BASELINES = (CEILING, "aiohttp bare", "httpx2 bare")
JURAT_VARIANTS = ("jurat judge calls", "jurat run_samples")


def variant(name: str, calls: int, latency_ms: float) -> dict[str, Any]:
    """One of bench/orchestration.py's variants in this interpreter (``--variant``)."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(orchestration._measure(name, latency_ms, calls, Path(tmp)))


def baselines(calls: int, latency_ms: float, old: Path | None) -> dict[str, dict[str, Any]]:
    """The variants, each in a fresh interpreter (each starts its own server): with
    ``old``, jurat's own ones once more with that jurat first on ``sys.path``."""
    runs: list[tuple[str, Path | None]] = [(name, None) for name in BASELINES]
    for name in JURAT_VARIANTS:
        runs += [(name, None)] + ([(name, old)] if old is not None else [])
    out = {}
    for name, src in runs:
        cmd = [sys.executable, __file__, "--variant", name, "--calls", str(calls),
               "--latency-ms", str(latency_ms)] + (["--src", str(src)] if src else [])
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        label = f"{name}, {_label(src)}" if name in JURAT_VARIANTS else name
        out[label] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"  {label}: {out[label]['rate']:,.0f} calls/s", flush=True)
    return out


def _label(src: Path | None) -> str:
    """How a table names the jurat in ``src`` (None: this tree), by its commit."""
    commit = subprocess.run(["git", "-C", str(src or ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or str(src or ROOT)
    return f"this tree ({commit})" if src is None else f"--old-src ({commit})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--artifacts", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--ledger", choices=("sqlite", "pg"), default="sqlite")
    parser.add_argument("--profile", type=Path, help="also run under cProfile, stats here")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--no-breakdown", action="store_true",
                        help="skip the in-process run that times each step")
    parser.add_argument("--no-single", action="store_true",
                        help="skip the same run in one process (--workers 1)")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--repeat", type=int, default=3,
                        help="whole runs to measure; the table shows the median (default 3)")
    parser.add_argument("--old-src", type=Path,
                        help="another jurat's src (a worktree) to measure in the same run")
    parser.add_argument("--variant", help=argparse.SUPPRESS)  # one baseline, in this process
    parser.add_argument("--calls", type=int, default=10_000, help=argparse.SUPPRESS)
    parser.add_argument("--src", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        if args.src is not None:
            sys.path.insert(0, str(args.src.resolve()))
        print(json.dumps(variant(args.variant, args.calls, args.latency_ms)))
        return 0
    if args.old_src is not None:
        args.old_src = args.old_src.resolve()
    print(f"jurat run: {args.artifacts} artifacts x {args.samples} samples = "
          f"{args.artifacts * args.samples} calls, {args.latency_ms:g} ms, {CONCURRENCY} "
          f"connections, {args.ledger} ledger", flush=True)
    # jurat's modules from cached bytecode, as in any installed copy (an environment with
    # PYTHONDONTWRITEBYTECODE set, as this machine's sessions have, would otherwise
    # compile every module at every start-up: a tenth of a second here).
    for src in [ROOT / "src"] + ([args.old_src] if args.old_src else []):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
    # Every run's files are kept until the last run has been measured: this machine's ext4
    # has no journal, and without one ext4 skips every inode freed in the last minute or
    # more when it creates a file (``recently_deleted``), so the 4,000 files a run leaves,
    # deleted just before the next run, made that run's file creations cost a second of
    # system CPU more (bench/README.md, "Whole runs").
    root = Path(tempfile.mkdtemp(prefix="jurat-bench-e2e-"))
    try:
        return _measure_all(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _measure_all(args: argparse.Namespace, root: Path) -> int:
    limit = CONCURRENCY / (args.latency_ms / 1000)
    calls = args.artifacts * args.samples
    profile, args.profile = args.profile, None
    load = os.getloadavg()
    # The machine is shared and one run varies by a few percent: the median of several,
    # this tree's and --old-src's interleaved, so that both see the same drift.
    trees: list[tuple[str, Path]] = [(_label(None), ROOT / "src")]
    if args.old_src is not None:
        trees.append((_label(args.old_src), args.old_src))
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
    for _ in range(max(1, args.repeat)):
        for label, src in trees:
            runs[label].append(measure_run(args, root, src=src))
            last = runs[label][-1]
            print(f"  {label}: {last['wall']:.2f} s, {calls / last['wall']:,.0f} calls/s, "
                  f"{1000 * last['cpu'] / calls:.3f} ms CPU/call, peak RSS "
                  f"{last['rss_mib']:.0f} MiB, {last['processes']} processes", flush=True)
    medians = {}
    for label, measured in runs.items():
        measured.sort(key=lambda r: r["wall"])
        medians[label] = measured[len(measured) // 2]
    run = medians[trees[0][0]]
    walls = "; ".join(f"{label}: " + ", ".join(f"{r['wall']:.2f}" for r in measured)
                      for label, measured in runs.items())
    single = None
    if run["processes"] > 1 and not args.no_single:
        single = measure_run(args, root, workers=1)
        print(f"  --workers 1: {calls / single['wall']:,.0f} calls/s", flush=True)
    rows: dict[str, dict[str, Any]] = {}
    if not args.no_baseline:
        rows = baselines(calls, args.latency_ms, args.old_src)
    starts = {label: startup(src) for label, src in trees}
    base = rows.get(CEILING)
    header = (f"| variant | wall s | calls/s | % of {limit:,.0f} limit | client CPU ms/call | "
              "server CPU ms/call | calls/s vs ceiling |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|"]

    def row(name: str, wall: float, rate: float, cpu_ms: float, server_ms: float) -> None:
        ratio = f"{rate / base['rate']:.2f}" if base else "-"
        lines.append(f"| {name} | {wall:.2f} | {rate:,.0f} | {100 * rate / limit:.0f}% | "
                     f"{cpu_ms:.3f} | {server_ms:.3f} | {ratio} |")

    for name, r in rows.items():
        row(name + (" (the ceiling)" if name == CEILING else ""), r["calls"] / r["rate"],
            r["rate"], r["cpu_ms"], r["server_cpu_ms"])
    median = f", median of {len(runs[trees[0][0]])}" if args.repeat > 1 else ""
    for label, measured in medians.items():
        processes = (f", {measured['processes']} worker processes"
                     if measured["processes"] > 1 else "")
        row(f"whole `jurat run`, {label} ({args.ledger}{processes}{median})", measured["wall"],
            calls / measured["wall"], 1000 * measured["cpu"] / calls,
            1000 * measured["server_cpu"] / calls)
    if single is not None:
        row(f"whole `jurat run --workers 1`, {trees[0][0]} ({args.ledger})", single["wall"],
            calls / single["wall"], 1000 * single["cpu"] / calls,
            1000 * single["server_cpu"] / calls)
    machine = f"{platform.python_implementation()} {platform.python_version()}, " \
              f"{os.cpu_count()} cores"
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    imports = "; ".join(f"{label} {seconds:.2f} s" for label, seconds in starts.items())
    text = (
        f"Measured {stamp} on {machine}: {args.artifacts} artifacts x {args.samples} samples "
        f"= {calls:,} judge calls at {args.latency_ms:g} ms, {CONCURRENCY} connections. "
        f"The first rows are bench/orchestration.py's variants, each in a fresh interpreter, "
        f"measured in this run (the ceiling: asyncio's bare streams writing the same request "
        f"bytes). A `jurat run` row is the command from start to exit (its worker processes' "
        f"CPU included; the whole runs took {walls} s, interleaved): {run['receipts']} "
        f"receipts and {run['proofs']} inclusion proofs written, peak RSS "
        f"{run['rss_mib']:.0f} MiB (the largest process); a fresh interpreter importing what "
        f"`jurat run` imports takes {imports}. Load average before: {load[0]:.2f} "
        f"{load[1]:.2f} {load[2]:.2f} (the machine is shared: its speed varies by the hour, "
        f"so compare the ratios of one run, not absolute rates across runs).\n\n"
        + "\n".join(lines) + "\n")
    print()
    print(text, flush=True)  # before the breakdown, which a failure there must not lose
    if not args.no_breakdown:
        print("timing each step of the same run, in-process …", flush=True)
        with FakeOpenAI(echo_judge, latency_ms=args.latency_ms, process=True) as server:
            steps = breakdown(server.url, args.artifacts, args.samples)
        total = sum(ms for _, ms in steps)
        text += ("\nWhere the CPU goes (`--breakdown`: the same campaign run in-process, each "
                 "step timed in CPU time of the thread running it; the ledger's commits run on "
                 "their own thread but hold the interpreter's lock for their Python part):\n\n"
                 "| step | CPU ms per artifact | share |\n|---|---:|---:|\n")
        text += "".join(f"| {label} | {ms:.2f} | {100 * ms / total:.0f}% |\n"
                        for label, ms in sorted(steps, key=lambda item: -item[1]))
        text += f"| total | {total:.2f} | 100% |\n"
        print(text[text.index("\nWhere the CPU goes"):])
    if profile is not None:
        args.profile = profile
        print(f"profiling a second run into {profile} …", flush=True)
        measure_run(args, root)
        print_profile(profile)
    # Only the default workload on the default ledger is the table bench/README.md shows.
    if not args.no_write and (args.artifacts, args.samples, args.ledger) == (2000, 5, "sqlite"):
        write_section("run_e2e", text)
        print("results written to bench/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
