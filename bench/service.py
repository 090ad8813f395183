"""The HTTP oracle under load: submit-to-receipt latency and jobs/s through `jurat serve`,
next to `jurat run` on the same campaign.

    .venv/bin/python bench/service.py [--artifacts 400] [--clients 4] [--latency-ms 20]
                                      [--no-write]

One campaign (rubric, three sim judges x 5 samples, ``latency_ms`` each, no code checks)
with a JSON Lines dataset of N artifacts. The baseline is `jurat run` on it, one process,
its wall time (start-up, checkpoint and proofs included) giving artifacts/s. Then a
`jurat serve` process on a fresh ledger serves the same campaign file (its dataset is not
run there), and ``--clients`` asyncio clients, each with its own contributor token and
HTTP connection pool, submit the same N artifacts, each keeping ``IN_FLIGHT`` jobs in
flight (a closed loop: a client submits its next job when it has read a receipt) and
polling its jobs every 100 ms until their receipt is served. Reported: jobs/s (N over the
time from the first submission to the last receipt) and the p50/p99 of the time from
sending a job to reading its receipt (to within the polling interval). Results go to
bench/README.md between the ``service`` markers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import quantiles

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

import httpx  # noqa: E402
from _readme import write_section  # noqa: E402

from tests.service._support import SIM_PANEL  # noqa: E402
from tests.support.ready import wait_ready  # noqa: E402

POLL_S = 0.1
#: Jobs each client keeps in flight (submitted, receipt not yet read): a closed loop, so the
#: latency measured is the service's, not a queue the benchmark built in front of it.
IN_FLIGHT = 8

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


def run_baseline(work: Path, env: dict[str, str]) -> float:
    """Wall seconds of `jurat run` over the dataset."""
    start = time.perf_counter()
    result = _jurat("run", "campaign.toml", "--out", "out", "--ledger",
                    f"sqlite:///{work / 'run.db'}", "--key", "keys/jurat.key", "--quiet",
                    cwd=work, env=env)
    wall = time.perf_counter() - start
    if result.returncode not in (0, 1, 2):
        raise RuntimeError(f"jurat run exited {result.returncode}:\n{result.stderr[-3000:]}")
    return wall


async def _client(url: str, token: str, items: list[int], latencies: list[float],
                  done_at: list[float]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    slots = asyncio.Semaphore(IN_FLIGHT)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http:

        async def one(i: int) -> None:
            async with slots:
                await job(i)

        async def job(i: int) -> None:
            sent = time.perf_counter()
            r = await http.post("/v1/campaigns/bench-service/jobs",
                                json={"artifact": {"id": f"a{i}", "text": _text(i)}})
            r.raise_for_status()
            job = r.json()["job_id"]
            while True:
                got = await http.get(f"/v1/jobs/{job}/receipt")
                if got.status_code == 200:
                    break
                if got.status_code != 409:
                    raise RuntimeError(f"receipt of {job}: {got.status_code} {got.text}")
                await asyncio.sleep(POLL_S)
            now = time.perf_counter()
            latencies.append(now - sent)
            done_at.append(now)

        await asyncio.gather(*(one(i) for i in items))


def run_service(work: Path, env: dict[str, str], n: int, clients: int) -> dict[str, float]:
    ledger = f"sqlite:///{work / 'serve.db'}"
    tokens = []
    for c in range(clients):
        made = _jurat("token", "create", "--ledger", ledger, "--campaign", "bench-service",
                      "--role", "contributor", "--subject", f"client{c}", cwd=work, env=env)
        tokens.append(made.stdout.strip().splitlines()[-1])
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "jurat", "serve", "campaign.toml", "--ledger", ledger,
         "--key", "keys/jurat.key", "--port", str(port)], cwd=work, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_ready(url, server, why=lambda: server.stderr.read()[-3000:] if server.stderr else "")
        latencies: list[float] = []
        done_at: list[float] = []
        shares = [list(range(c, n, clients)) for c in range(clients)]

        async def main() -> None:
            await asyncio.gather(*(_client(url, tokens[c], shares[c], latencies, done_at)
                                   for c in range(clients)))

        start = time.perf_counter()
        asyncio.run(main())
        wall = max(done_at) - start
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    cuts = quantiles(latencies, n=100)
    return {"wall": wall, "p50": cuts[49], "p99": cuts[98]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--artifacts", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    n = args.artifacts
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="jurat-bench-service-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "XDG_CONFIG_HOME": str(work / "cfg"),
               "XDG_STATE_HOME": str(work / "state")}
        (work / "campaign.toml").write_text(CAMPAIGN.format(samples=5, latency=args.latency_ms))
        with (work / "items.jsonl").open("w") as out:
            for i in range(n):
                out.write(json.dumps({"id": f"a{i}", "text": _text(i)}) + "\n")
        keys = _jurat("keygen", "--out", "keys", cwd=work, env=env)
        if keys.returncode != 0:
            raise RuntimeError(keys.stderr)
        print(f"jurat run: {n} artifacts …", flush=True)
        base = run_baseline(work, env)
        print(f"  {base:.1f} s, {n / base:.1f} artifacts/s", flush=True)
        print(f"jurat serve: {n} jobs from {args.clients} clients …", flush=True)
        served = run_service(work, env, n, args.clients)
        print(f"  {served['wall']:.1f} s, {n / served['wall']:.1f} jobs/s, p50 "
              f"{1000 * served['p50']:.0f} ms, p99 {1000 * served['p99']:.0f} ms", flush=True)
    text = "\n".join([
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
        f"load average {load[0]:.2f} at the start; {n} artifacts, 3 sim judges x 5 samples "
        f"at {args.latency_ms} ms, SQLite ledger; {args.clients} clients, each with "
        f"{IN_FLIGHT} jobs in flight, polling every {int(POLL_S * 1000)} ms.",
        "",
        "| mode | artifacts | wall s | artifacts (jobs)/s | vs `jurat run` | "
        "submit-to-receipt p50 ms | p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| `jurat run` (one process, proofs included) | {n} | {base:.1f} | {n / base:.1f} | "
        "1.00x | — | — |",
        f"| `jurat serve`, {args.clients} HTTP clients | {n} | {served['wall']:.1f} | "
        f"{n / served['wall']:.1f} | {base / served['wall']:.2f}x | "
        f"{1000 * served['p50']:.0f} | {1000 * served['p99']:.0f} |",
    ])
    print()
    print(text)
    if not args.no_write:
        write_section("service", text)
        print("results written to bench/README.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
