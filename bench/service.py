"""The HTTP oracle under load: submit-to-receipt latency, jobs/s and peak RSS through
`jurat serve` (one replica on SQLite, one and two on PostgreSQL), next to `jurat run` on
the same campaign, at two sizes (how cost grows).

    .venv/bin/python bench/service.py [--sizes 1000,10000] [--clients 64] [--latency-ms 20]
                                      [--modes sqlite,pg,pg2] [--no-write]

One campaign (rubric, three sim judges x 5 samples, ``latency_ms`` each, no code checks)
with a JSON Lines dataset of N artifacts. The baseline is `jurat run` on it, one process,
SQLite, its wall time (start-up, checkpoint and proofs included) giving artifacts/s. Then
for each mode a fresh ledger (a new SQLite file, or a new PostgreSQL database on
``JURAT_TEST_PG_URL``'s server) and `jurat serve` process(es) serving the same campaign
file (its dataset is not run there); ``--clients`` asyncio clients, each with its own
contributor token and connection, submit the N artifacts in a closed loop: one job at a
time, long-polling ``GET /v1/jobs/{id}?wait=30`` until it is decided, then reading its
receipt. With two replicas each client keeps to one (as behind a load balancer that
keeps a client on its replica). Reported: jobs/s (N over the time from the first
submission to the last receipt), the p50/p99 of send-to-receipt, each replica's peak RSS
(VmHWM) and the errors (any answer but 202/200, retried). Results go to bench/README.md
between the ``service`` markers.
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


def _text(i: int) -> str:
    return f"Answer {i}: the sum of the first {i} odd numbers is {i * i}."


def _jurat(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jurat", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_baseline(work: Path, env: dict[str, str], n: int) -> float:
    """Wall seconds of `jurat run` over the first ``n`` artifacts of the dataset."""
    db = work / f"run-{n}.db"
    start = time.perf_counter()
    result = _jurat("run", "campaign.toml", "--out", f"out-{n}", "--ledger", f"sqlite:///{db}",
                    "--key", "keys/jurat.key", "--quiet", "--limit", str(n), cwd=work, env=env)
    wall = time.perf_counter() - start
    if result.returncode not in (0, 1, 2):
        raise RuntimeError(f"jurat run exited {result.returncode}:\n{result.stderr[-3000:]}")
    return wall


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
                replicas: int) -> dict[str, Any]:
    tokens = []
    for c in range(clients):
        made = _jurat("token", "create", "--ledger", ledger, "--campaign", "bench-service",
                      "--role", "contributor", "--subject", f"client{c}", cwd=work, env=env)
        if made.returncode != 0:
            raise RuntimeError(made.stderr)
        tokens.append(made.stdout.strip().splitlines()[-1])
    servers: list[tuple[subprocess.Popen[str], str]] = []
    try:
        for r in range(replicas):
            port = _free_port()
            url = f"http://127.0.0.1:{port}"
            server = subprocess.Popen(
                [sys.executable, "-m", "jurat", "serve", "campaign.toml", "--ledger", ledger,
                 "--key", "keys/jurat.key", "--port", str(port), "--replica-id", f"r{r}"],
                cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            servers.append((server, url))
            wait_ready(url, server,
                       why=lambda s=server: s.stderr.read()[-3000:] if s.stderr else "")
        tally = Tally()
        shares = [list(range(c, n, clients)) for c in range(clients)]

        async def main() -> None:
            await asyncio.gather(*(_client(servers[c % replicas][1], tokens[c], shares[c], tally)
                                   for c in range(clients)))

        start = time.perf_counter()
        asyncio.run(main())
        wall = max(tally.done_at) - start
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
    return {"wall": wall, "p50": cuts[49], "p99": cuts[98], "rss": rss,
            "errors": sum(tally.errors.values()), "kinds": dict(tally.errors)}


MODES = {"sqlite": ("1 replica, SQLite", 1), "pg": ("1 replica, PostgreSQL", 1),
         "pg2": ("2 replicas, PostgreSQL", 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--modes", default="sqlite,pg,pg2")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
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
            print(f"jurat run: {n} artifacts …", flush=True)
            base = run_baseline(work, env, n)
            print(f"  {base:.1f} s, {n / base:.1f} artifacts/s", flush=True)
            rows.append(f"| `jurat run` (one process, SQLite, proofs included) | {n} | "
                        f"{base:.1f} | {n / base:.1f} | 1.00x | — | — | — | — |")
            for mode in modes:
                label, replicas = MODES[mode]
                print(f"jurat serve, {label}: {n} jobs from {args.clients} clients …",
                      flush=True)
                with contextlib.ExitStack() as stack:
                    ledger = (f"sqlite:///{work / f'serve-{n}.db'}" if mode == "sqlite"
                              else stack.enter_context(fresh_database()))
                    got = run_service(work, env, n, args.clients, ledger, replicas)
                rss = " / ".join(f"{r:.0f}" for r in got["rss"])
                print(f"  {got['wall']:.1f} s, {n / got['wall']:.1f} jobs/s, p50 "
                      f"{1000 * got['p50']:.0f} ms, p99 {1000 * got['p99']:.0f} ms, peak RSS "
                      f"{rss} MB, errors {got['errors']} {got['kinds']}", flush=True)
                rows.append(f"| `jurat serve`, {label} | {n} | {got['wall']:.1f} | "
                            f"{n / got['wall']:.1f} | {base / got['wall']:.2f}x | "
                            f"{1000 * got['p50']:.0f} | {1000 * got['p99']:.0f} | {rss} | "
                            f"{got['errors']} |")
    text = "\n".join([
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores "
        f"(shared with other work), load average {load[0]:.2f} at the start; 3 sim judges x 5 "
        f"samples at {args.latency_ms} ms; {args.clients} clients, each one job at a time, "
        f"long-polling `?wait={WAIT_S}` until it is decided, then reading its receipt. "
        "`jurat run` and each row below it are on the same campaign and artifacts.",
        "",
        "| mode | artifacts | wall s | artifacts (jobs)/s | vs `jurat run` | "
        "send-to-receipt p50 ms | p99 ms | peak RSS per replica MB | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
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
