"""The HTTP oracle under load: submit-to-receipt latency, jobs/s and peak RSS through
`jurat serve` (one replica on SQLite, one and two on PostgreSQL), next to `jurat run` on
the same campaign, at two sizes (how cost grows).

    .venv/bin/python bench/service.py [--sizes 1000,10000] [--clients 64] [--latency-ms 20]
                                      [--modes sqlite,pg,pg2] [--no-write] [--profile DIR]

One campaign (rubric, three sim judges x 5 samples, ``latency_ms`` each, no code checks)
with a JSON Lines dataset of N artifacts. The baseline is `jurat run` on it, one process,
SQLite, its wall time (start-up, checkpoint and proofs included) giving artifacts/s. Then
for each mode a fresh ledger (a new SQLite file, or a new PostgreSQL database on
``JURAT_TEST_PG_URL``'s server) and `jurat serve` process(es) serving the same campaign
file (its dataset is not run there); ``--clients`` asyncio clients, each with its own
contributor token and connection, submit the N artifacts in a closed loop: one job at a
time, long-polling ``GET /v1/jobs/{id}?wait=30`` until it is decided, then reading its
receipt. With two replicas each client keeps to one (as behind a load balancer that
keeps a client on its replica). The servers run with ``--rate-limit 0`` and
``--max-connections-per-address 0``: this measures throughput, not the front door (64
clients on one address at 20 requests/s each would otherwise meet the defaults). Reported:
jobs/s (N over the time from the first submission to the last receipt), the p50/p99 of
send-to-receipt, CPU per job of the server process(es) and of the clients' process, each
replica's peak RSS (VmHWM) and the errors (any answer but 202/200, retried); for `jurat
run`, its CPU (all its processes) and peak RSS (its largest process). ``--profile DIR``
runs every `jurat run` and `jurat serve` under cProfile (main thread and other threads
apart). Results go to bench/README.md between the ``service`` markers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import quantiles
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

import httpx  # noqa: E402
from _readme import write_section  # noqa: E402

from jurat.runner._shards import MIN_ARTIFACTS_PER_WORKER, default_workers  # noqa: E402
from jurat.service._tokens import TokenStore  # noqa: E402
from tests.service._support import SIM_PANEL  # noqa: E402
from tests.support.postgres import fresh_database  # noqa: E402
from tests.support.ready import wait_ready  # noqa: E402

#: Seconds a long-poll waits at most for the job to be decided.
WAIT_S = 30

CAMPAIGN = """\
[campaign]
id = "bench-service"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "bench/1"
hard_gates = []
criteria = [ {{ id = "correctness", weight = 1.0 }} ]

""" + SIM_PANEL + """
[[datasets]]
path = "items.jsonl"
"""


#: ``--profile DIR``: each `jurat serve` (and `jurat run`) runs under cProfile, its main
#: thread (the event loop) and every other thread (ledger commits, token lookups) apart,
#: written to DIR/<what>-<n>-main.prof and -threads.prof when it exits.
_PROFILED = """\
import cProfile, pstats, runpy, signal, sys, threading
out, sys.argv = sys.argv[1], ["jurat", *sys.argv[2:]]
# uvicorn re-raises the SIGTERM it stopped on: exit through the finally below instead.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
threads = []
_run = threading.Thread.run
def run(self):
    prof = cProfile.Profile()
    threads.append(prof)
    prof.enable()
    try:
        _run(self)
    finally:
        prof.disable()
threading.Thread.run = run
main = cProfile.Profile()
main.enable()
try:
    runpy.run_module("jurat", run_name="__main__")
except SystemExit:
    pass
finally:
    main.disable()
    main.dump_stats(out + "-main.prof")
    if threads:
        pstats.Stats(*threads).dump_stats(out + "-threads.prof")
"""


def _command(profile: Path | None, name: str, *args: str) -> list[str]:
    if profile is None:
        return [sys.executable, "-m", "jurat", *args]
    return [sys.executable, "-c", _PROFILED, str(profile / name), *args]


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _processes(workers: int) -> str:
    if workers == 1:
        return "one process"
    return f"{workers} worker processes and the ledger's writer"


def _text(i: int) -> str:
    return f"Answer {i}: the sum of the first {i} odd numbers is {i * i}."


def _jurat(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jurat", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_baseline(work: Path, env: dict[str, str], n: int, profile: Path | None = None,
                 workers: int | None = None, ledger: str | None = None) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of `jurat run` over the first ``n``
    artifacts of the dataset (``workers``: its ``--workers``; None: its default) on
    ``ledger`` (None: a new SQLite file)."""
    name = f"run-{n}" if workers is None else f"run-{n}-w{workers}"
    if ledger is not None:
        name += "-pg"
    ledger = ledger or f"sqlite:///{work / f'{name}.db'}"
    log = work / f"{name}.log"
    more = () if workers is None else ("--workers", str(workers))
    start = time.perf_counter()
    with log.open("w") as err:
        proc = subprocess.Popen(
            _command(profile, name, "run", "campaign.toml", "--out", f"out-{name}",
                     "--ledger", ledger, "--key", "keys/jurat.key", "--quiet",
                     "--limit", str(n), *more),
            cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 2):
        raise RuntimeError(f"jurat run exited {code}:\n{log.read_text()[-3000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss / 1024}


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    done_at: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)


async def _client(url: str, token: str, items: list[int], tally: Tally) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=WAIT_S + 30) as http:

        async def call(method: str, path: str, ok: int, **kw: object) -> httpx.Response:
            for _ in range(50):
                try:
                    r = await http.request(method, path, **kw)  # type: ignore[arg-type]
                except httpx.TransportError as exc:
                    tally.errors[type(exc).__name__] += 1
                else:
                    if r.status_code == ok:
                        return r
                    tally.errors[str(r.status_code)] += 1
                await asyncio.sleep(0.2)
            raise RuntimeError(f"{method} {path}: no {ok} after 50 tries")

        for i in items:
            sent = time.perf_counter()
            r = await call("POST", "/v1/campaigns/bench-service/jobs", 202,
                           json={"artifact": {"id": f"a{i}", "text": _text(i)}})
            job = r.json()["job_id"]
            while True:
                got = await call("GET", f"/v1/jobs/{job}", 200, params={"wait": WAIT_S})
                status = got.json()["status"]
                if status == "decided":
                    break
                if status == "failed":
                    tally.errors["failed"] += 1
                    break
            await call("GET", f"/v1/jobs/{job}/receipt", 200)
            now = time.perf_counter()
            tally.latencies.append(now - sent)
            tally.done_at.append(now)


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_service(work: Path, env: dict[str, str], n: int, clients: int, ledger: str,
                replicas: int, profile: Path | None = None, mode: str = "serve"
                ) -> dict[str, Any]:
    # A contributor token per client, as `jurat token create` makes them (in-process: 64
    # CLI start-ups would take minutes of this 2-core machine before the clock starts).
    with TokenStore(ledger) as store:
        tokens = [store.create(campaign="bench-service", role="contributor",
                               subject=f"client{c}")[1] for c in range(clients)]
    servers: list[tuple[subprocess.Popen[str], str]] = []
    try:
        for r in range(replicas):
            port = _free_port()
            url = f"http://127.0.0.1:{port}"
            server = subprocess.Popen(
                _command(profile, f"{mode}-{n}-r{r}",
                         "serve", "campaign.toml", "--ledger", ledger,
                 "--key", "keys/jurat.key", "--port", str(port), "--replica-id", f"r{r}",
                 # Throughput, not the front door: no per-token rate limit, and no cap on
                 # connections from one address (every client is 127.0.0.1).
                         "--rate-limit", "0", "--max-connections-per-address", "0",
                         # The bench's panel is sim judges on submissions without truth.
                         "--allow-sim"),
                cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            servers.append((server, url))
            wait_ready(url, server,
                       why=lambda s=server: s.stderr.read()[-3000:] if s.stderr else "")
        tally = Tally()
        shares = [list(range(c, n, clients)) for c in range(clients)]

        async def main() -> None:
            await asyncio.gather(*(_client(servers[c % replicas][1], tokens[c], shares[c], tally)
                                   for c in range(clients)))

        cpu_before = [_cpu_s(s.pid) for s, _ in servers]
        clients_before = time.process_time()
        start = time.perf_counter()
        asyncio.run(main())
        wall = max(tally.done_at) - start
        client_cpu = time.process_time() - clients_before
        cpu = [_cpu_s(s.pid) - b for (s, _), b in zip(servers, cpu_before, strict=True)]
        rss = [_peak_rss_mb(s.pid) for s, _ in servers]
    finally:
        for server, _ in servers:
            server.send_signal(signal.SIGTERM)
        for server, _ in servers:
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
    cuts = quantiles(tally.latencies, n=100)
    return {"wall": wall, "p50": cuts[49], "p99": cuts[98], "rss": rss, "cpu": cpu,
            "client_cpu": client_cpu,
            "errors": sum(tally.errors.values()), "kinds": dict(tally.errors)}


MODES = {"sqlite": ("1 replica, SQLite", 1), "pg": ("1 replica, PostgreSQL", 1),
         "pg2": ("2 replicas, PostgreSQL", 2)}


def _measure_size(work: Path, env: dict[str, str], n: int, modes: list[str],
                  args: argparse.Namespace) -> list[str]:
    """The rows of one size: `jurat run` (its own workers, and one process; on
    PostgreSQL too when a mode uses it), then each mode's `jurat serve`."""
    rows: list[str] = []
    print(f"jurat run: {n} artifacts …", flush=True)
    # `jurat run`'s own choice of worker processes (runner/_shards.py), and one process,
    # as one replica is.
    chosen = max(1, min(default_workers(), n // MIN_ARTIFACTS_PER_WORKER))
    base = run_baseline(work, env, n, args.profile)
    single = base if chosen == 1 else run_baseline(work, env, n, args.profile, workers=1)
    runs = [(f"`jurat run` ({_processes(chosen)}, SQLite, proofs included)", base, base)]
    if chosen != 1:
        runs.append(("`jurat run --workers 1` (one process)", single, base))
    pg_base = None
    if any(mode != "sqlite" for mode in modes):
        with fresh_database() as url:
            pg_base = run_baseline(work, env, n, args.profile, ledger=url)
        runs.append((f"`jurat run` ({_processes(chosen)}, PostgreSQL)", pg_base, pg_base))

    def row(label: str, got: dict[str, Any], same: dict[str, Any], rest: str) -> str:
        return (f"| {label} | {n} | {got['wall']:.1f} | {n / got['wall']:.1f} | "
                f"{base['wall'] / got['wall']:.2f}x | {single['wall'] / got['wall']:.2f}x | "
                f"{same['wall'] / got['wall']:.2f}x | {rest} |")

    for label, got_run, same in runs:
        print(f"  {label}: {got_run['wall']:.1f} s, {n / got_run['wall']:.1f} artifacts/s, "
              f"CPU {got_run['cpu']:.1f} s, peak RSS {got_run['rss']:.0f} MB", flush=True)
        rows.append(row(label, got_run, same, f"— | — | {1000 * got_run['cpu'] / n:.1f} | — | "
                                              f"{got_run['rss']:.0f} | —"))
    for mode in modes:
        label, replicas = MODES[mode]
        print(f"jurat serve, {label}: {n} jobs from {args.clients} clients …", flush=True)
        with contextlib.ExitStack() as stack:
            ledger = (f"sqlite:///{work / f'serve-{n}.db'}" if mode == "sqlite"
                      else stack.enter_context(fresh_database()))
            got = run_service(work, env, n, args.clients, ledger, replicas, args.profile,
                              mode)
        rss = " / ".join(f"{r:.0f}" for r in got["rss"])
        cpu = 1000 * sum(got["cpu"]) / n
        client_cpu = 1000 * got["client_cpu"] / n
        print(f"  {got['wall']:.1f} s, {n / got['wall']:.1f} jobs/s, p50 "
              f"{1000 * got['p50']:.0f} ms, p99 {1000 * got['p99']:.0f} ms, server CPU "
              f"{cpu:.1f} ms/job, clients {client_cpu:.1f} ms/job, peak RSS {rss} MB, "
              f"errors {got['errors']} {got['kinds']}", flush=True)
        same = base if mode == "sqlite" or pg_base is None else pg_base
        rows.append(row(f"`jurat serve`, {label}", got, same,
                        f"{1000 * got['p50']:.0f} | {1000 * got['p99']:.0f} | {cpu:.1f} | "
                        f"{client_cpu:.1f} | {rss} | {got['errors']}"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--modes", default="sqlite,pg,pg2")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="run each jurat run/serve under cProfile, stats written to DIR")
    args = parser.parse_args()
    if args.profile is not None:
        args.profile = args.profile.resolve()
        args.profile.mkdir(parents=True, exist_ok=True)
    sizes = [int(x) for x in args.sizes.split(",")]
    modes = args.modes.split(",")
    load = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="jurat-bench-service-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "XDG_CONFIG_HOME": str(work / "cfg"),
               "XDG_STATE_HOME": str(work / "state")}
        (work / "campaign.toml").write_text(CAMPAIGN.format(samples=5, latency=args.latency_ms))
        with (work / "items.jsonl").open("w") as out:
            for i in range(max(sizes)):
                out.write(json.dumps({"id": f"a{i}", "text": _text(i)}) + "\n")
        keys = _jurat("keygen", "--out", "keys", cwd=work, env=env)
        if keys.returncode != 0:
            raise RuntimeError(keys.stderr)
        for n in sizes:
            rows += _measure_size(work, env, n, modes, args)
    text = "\n".join([
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, "
        f"{os.cpu_count()} cores (shared with other work), load average {load[0]:.2f} at the "
        f"start; 3 sim judges x 5 samples at {args.latency_ms} ms; {args.clients} clients "
        "(one process, on the same cores), each one job at a time, long-polling "
        f"`?wait={WAIT_S}` until it is decided, then reading its receipt; `jurat serve "
        "--rate-limit 0 --max-connections-per-address 0` (this measures throughput, not the "
        "front door's limits). `jurat run` and the rows below it are on the same campaign and "
        "artifacts; `jurat run` picks its worker processes itself (one per core, at most 4, "
        f"one per {MIN_ARTIFACTS_PER_WORKER} artifacts), `--workers 1` is one process as one "
        "replica is; with PostgreSQL modes, `jurat run` on a PostgreSQL ledger too, the "
        "baseline of the same-ledger column for them. CPU ms per job: the server "
        "process(es), and the clients' process; PostgreSQL's own processes are not counted.",
        "",
        "| mode | artifacts | wall s | artifacts (jobs)/s | vs `jurat run` | "
        "vs `--workers 1` | vs `jurat run` on the same ledger | send-to-receipt p50 ms | "
        "p99 ms | server CPU ms/job | client CPU ms/job | peak RSS per replica MB | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
    ])
    print()
    print(text)
    if not args.no_write:
        write_section("service", text)
        print("results written to bench/README.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
