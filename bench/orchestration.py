"""Judge-call throughput and CPU per call against a loopback OpenAI-compatible server.

    .venv/bin/python bench/orchestration.py [--calls 4000] [--no-write]

The fake server (tests/support/fake_openai.py) runs in its own process so it does not share
the client's interpreter; it answers every request with a valid judge decision after a fixed
latency. Every variant keeps 64 calls in flight, so at 50 ms latency the ceiling is
64 / 0.050 s = 1,280 calls/s. Each variant runs twice: at 50 ms (throughput) and at 0 ms
(client CPU per call, from the client process's CPU time).

Variants, from bare HTTP to the whole ``jurat run``-style workload:

- ``asyncio streams bare``: 64 keep-alive connections of asyncio's streams writing the same
  request bytes and reading each answer by its Content-Length: the ceiling of any client.
- ``aiohttp bare``: aiohttp's ``ClientSession`` posting the same bodies, reading each body.
- ``httpx2 bare``: the SDKs' HTTP client with its default pool posting the same request
  bodies, no prompt rendering, no parsing: the baseline every ratio is against.
- ``openai SDK create()``: the SDK's typed ``chat.completions.create`` path with its default
  client, answer read from the typed response (how the SDK is usually called).
- ``openai SDK post, default pool``: the SDK's own client posting jurat's pre-serialised body.
- ``jurat judge calls``: the openai-compat adapter's ``complete`` with pre-rendered prompts:
  the request body built, the call over jurat's HTTP path (aiohttp since issue 26; a hand-
  written HTTP/1.1 transport under the SDK's client before), the envelope parsed strictly;
  no engine, no validation.
- ``jurat run_samples``: the whole judge phase per artifact: plan, render the prompt (fresh
  delimiters per call), call through the SDK, parse strictly, validate against the ARCV schema
  and the semantic rules, build the vote, emit the ``judge.sample`` telemetry event to NDJSON,
  and record the vote as canonical JSON to a file (the ledger's serialisation cost).

It also measures the sim panel's false-block rate (seed 001: N = 5, quorum 0.8,
reliability 0.85) with and without correlation, and writes everything to
bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.support.fake_openai import FakeOpenAI, echo_judge  # noqa: E402

CONCURRENCY = 64
LATENCY_MS = 50.0
LIMIT = CONCURRENCY / (LATENCY_MS / 1000)


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def _artifacts(n: int) -> list[Any]:
    from jurat.canonical import sha256_digest
    from jurat.models import Artifact

    out = []
    for i in range(n):
        text = f"def solution_{i}(xs):\n    return sorted(xs)\n" + "# padding line\n" * 100
        out.append(
            Artifact(id=f"a{i}", sha256=sha256_digest(text), media_type="text/x-python", text=text)
        )
    return out


def _policy(url: str) -> Any:
    from jurat.models import GATE_TESTS_PASS, Criterion, JudgeConfig, Policy, Rubric

    rubric = Rubric(
        version="bench/1",
        hard_gates=(GATE_TESTS_PASS,),
        criteria=(
            Criterion(id="correctness", weight=0.45, minimum=3),
            Criterion(id="reasoning", weight=0.25),
            Criterion(id="adherence", weight=0.20),
            Criterion(id="presentation", weight=0.10),
        ),
    )
    judge = JudgeConfig(
        id="A",
        provider="openai-compat",
        base_url=url,
        model="bench-model",
        samples=5,
        max_concurrency=CONCURRENCY,
        timeout_s=30,
        retries=0,
    )
    return Policy(
        id="bench", kind="rubric", rubric=rubric, judges=(judge,), allowed_destinations=(url,)
    )


def _request_bodies(url: str, n: int) -> list[bytes]:
    """The bodies jurat sends, rendered once up front (the bare variants do no rendering)."""
    from jurat.judges import render_decision
    from jurat.judges._openai import OpenAICompatJudge
    from jurat.judges._protocol import JudgeCall
    from jurat.models import GATE_TESTS_PASS, EvidenceBundle, GateOutcome

    policy = _policy(url)
    adapter = OpenAICompatJudge(policy.judges[0])
    gates = [GateOutcome(id=GATE_TESTS_PASS, outcome="pass", required=True)]
    bodies = []
    for artifact in _artifacts(min(n, 64)):
        prompt = render_decision(policy.rubric, artifact, EvidenceBundle(), gates)
        call = JudgeCall(
            kind="rubric", prompt=prompt, temperature=0, max_tokens=1024, artifact=artifact
        )
        bodies.append(adapter._body(call, True))
    return [bodies[i % len(bodies)] for i in range(n)]


async def _pump(n: int, one: Callable[[int], Awaitable[Any]]) -> None:
    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def run(i: int) -> None:
        async with semaphore:
            await one(i)

    await asyncio.gather(*(run(i) for i in range(n)))


Caller = tuple[Callable[[int], Awaitable[Any]], Callable[[], Awaitable[None]]]


async def _streams(url: str, n: int) -> Caller:
    """The ceiling: asyncio's streams, one request at a time per kept-alive connection."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    head = (f"POST {parts.path}/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Content-Type: application/json\r\nAuthorization: Bearer x\r\n").encode()
    bodies = _request_bodies(url, n)
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def one(i: int) -> bytes:
        conn = idle.pop() if idle else await asyncio.open_connection(host, port)
        reader, writer = conn
        writer.write(head + b"Content-Length: %d\r\n\r\n" % len(bodies[i]) + bodies[i])
        answer = (await reader.readuntil(b"\r\n\r\n")).lower()
        start = answer.index(b"content-length:") + 15
        body = await reader.readexactly(int(answer[start:answer.index(b"\r\n", start)]))
        idle.append(conn)
        return body

    async def close() -> None:
        for _, writer in idle:
            writer.close()

    return one, close


async def _aiohttp(url: str, n: int) -> Caller:
    import aiohttp

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    bodies = _request_bodies(url, n)
    headers = {"content-type": "application/json", "authorization": "Bearer x"}
    target = url + "/chat/completions"

    async def one(i: int) -> bytes:
        async with session.post(target, data=bodies[i], headers=headers) as response:
            return await response.read()

    return one, session.close


async def _judge_calls(url: str, n: int) -> Caller:
    """The adapter alone, as the engine calls it (whichever jurat is on ``sys.path``)."""
    from jurat.judges import render_decision
    from jurat.judges._openai import OpenAICompatJudge
    from jurat.judges._protocol import JudgeCall
    from jurat.models import GATE_TESTS_PASS, EvidenceBundle, GateOutcome

    policy = _policy(url)
    adapter = OpenAICompatJudge(policy.judges[0])
    gates = [GateOutcome(id=GATE_TESTS_PASS, outcome="pass", required=True)]
    calls = [JudgeCall(kind="rubric", temperature=0, max_tokens=1024, artifact=artifact,
                       prompt=render_decision(policy.rubric, artifact, EvidenceBundle(), gates))
             for artifact in _artifacts(64)]

    async def one(i: int) -> Any:
        raw = await adapter.complete(calls[i % len(calls)])
        if raw.text is None:
            raise RuntimeError(f"no answer: {raw}")
        return raw.text

    return one, adapter.aclose


async def _bare(url: str, n: int) -> Caller:
    import httpx2

    limits = httpx2.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    client = httpx2.AsyncClient(base_url=url, limits=limits)
    bodies = _request_bodies(url, n)
    headers = {"content-type": "application/json", "authorization": "Bearer x"}

    async def one(i: int) -> Any:
        response = await client.post("/chat/completions", content=bodies[i], headers=headers)
        return response.content

    return one, client.aclose


async def _sdk_create(url: str, n: int) -> Caller:
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    bodies = [json.loads(b) for b in _request_bodies(url, n)]

    async def one(i: int) -> Any:
        result = await client.chat.completions.create(**bodies[i])
        return result.choices[0].message.content

    return one, client.close


async def _sdk_post(url: str, n: int) -> Caller:
    import httpx2
    import openai

    limits = httpx2.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    http = httpx2.AsyncClient(limits=limits)
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0, http_client=http)
    bodies = _request_bodies(url, n)
    options: Any = {"headers": {"content-type": "application/json"}}

    async def one(i: int) -> Any:
        response = await client.post(
            "/chat/completions", content=bodies[i], options=options, cast_to=httpx2.Response
        )
        return response.content

    return one, client.close


async def _jurat(url: str, n: int, workdir: Path, engine: Any) -> Callable[[], Awaitable[int]]:
    from jurat.canonical import canonical_json
    from jurat.judges import SampleTelemetry, run_samples
    from jurat.models import GATE_TESTS_PASS, EvidenceBundle, GateOutcome, Vote

    policy = _policy(url)
    gates = [GateOutcome(id=GATE_TESTS_PASS, outcome="pass", required=True)]
    artifacts = _artifacts(n // policy.judges[0].samples)
    ledger = (workdir / "votes.ndjson").open("ab")
    telemetry = SampleTelemetry(workdir / "telemetry.ndjson")
    errors: list[str] = []

    def record(vote: Vote) -> None:
        ledger.write(canonical_json(vote) + b"\n")
        if vote.error is not None:
            errors.append(vote.error)

    async def workload() -> int:
        jobs = [
            run_samples(
                policy,
                artifact,
                EvidenceBundle(),
                gates,
                on_vote=record,
                telemetry=telemetry,
                engine=engine,
            )
            for artifact in artifacts
        ]
        results = await asyncio.gather(*jobs)
        if errors:
            raise RuntimeError(f"{len(errors)} error votes, e.g. {errors[:3]}")
        return sum(len(r) for r in results)

    return workload


async def _measure(name: str, latency_ms: float, calls: int, workdir: Path) -> dict[str, Any]:
    from jurat.judges import Engine

    with FakeOpenAI(echo_judge, latency_ms=latency_ms, process=True) as server:
        warm = 320
        if name == "jurat run_samples":
            engine = Engine(max_concurrency=CONCURRENCY)
            warmup = await _jurat(server.url, warm, workdir, engine)
            await warmup()
            go = await _jurat(server.url, calls, workdir, engine)
            close = engine.aclose
        else:
            factory: Callable[[str, int], Awaitable[Caller]] = {
                "asyncio streams bare": _streams,
                "aiohttp bare": _aiohttp,
                "httpx2 bare": _bare,
                "openai SDK create()": _sdk_create,
                "openai SDK post, default pool": _sdk_post,
                "jurat judge calls": _judge_calls,
            }[name]
            one, close = await factory(server.url, calls)
            await _pump(warm, one)

            async def go() -> int:
                await _pump(calls, one)
                return calls

        before = server.requests
        server_cpu = _proc_cpu(server.pid)
        cpu, wall = time.process_time(), time.perf_counter()
        done = await go()
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        server_cpu = _proc_cpu(server.pid) - server_cpu
        served = server.requests - before
        await close()  # an unclosed client's sockets, once collected, can confuse the loop
    if served != done:
        raise RuntimeError(f"{name}: {done} calls but the server saw {served}")
    return {
        "calls": done,
        "rate": done / wall,
        "cpu_ms": 1000 * cpu / done,
        "server_cpu_ms": 1000 * server_cpu / done,
    }


VARIANTS = (
    "httpx2 bare",
    "asyncio streams bare",
    "aiohttp bare",
    "openai SDK create()",
    "openai SDK post, default pool",
    "jurat judge calls",
    "jurat run_samples",
)


def sim_false_block(items: int, correlation: float, seed: int = 11) -> tuple[int, float]:
    """Blocks of a truly passing blocker at N = 5, quorum 0.8, reliability 0.85."""
    from jurat.fold import fold_criterion, stability_gate
    from jurat.judges import sim_label
    from jurat.models import JudgeConfig

    judge = JudgeConfig(
        id="S", provider="sim", seed=seed, reliability=0.85, correlation=correlation
    )
    blocks = 0
    for i in range(items):
        item = f"{i:064x}"
        votes = [sim_label(judge, item, "blocker", k, "criterion", "yes") for k in range(5)]
        gate = stability_gate(fold_criterion(votes, blocker=True), quorum=0.8)
        blocks += gate == "block"
    return blocks, blocks / items


async def main(calls: int, write: bool) -> None:
    from scipy.stats import binom

    from jurat.fold import false_block_probability

    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for name in VARIANTS:
            results[name] = {
                "50": await _measure(name, LATENCY_MS, calls, workdir),
                "0": await _measure(name, 0.0, calls, workdir),
            }
            r = results[name]
            print(
                f"{name:32s} {r['50']['rate']:7.0f} calls/s at 50 ms, "
                f"{r['0']['cpu_ms']:.3f} ms CPU/call at 0 ms",
                flush=True,
            )
    base = results["httpx2 bare"]
    header = (
        "| variant | calls/s @50 ms | % of 1,280 limit | CPU ms/call @0 ms | "
        "calls/s @0 ms | CPU vs baseline | server CPU ms/call |"
    )
    rows = [header, "|---|---:|---:|---:|---:|---:|---:|"]
    for name in VARIANTS:
        r = results[name]
        rows.append(
            f"| {name} | {r['50']['rate']:,.0f} | {100 * r['50']['rate'] / LIMIT:.0f}% | "
            f"{r['0']['cpu_ms']:.3f} | {r['0']['rate']:,.0f} | "
            f"{r['0']['cpu_ms'] / base['0']['cpu_ms']:.2f}x | {r['0']['server_cpu_ms']:.3f} |"
        )
    table = "\n".join(rows)

    items = 20_000
    expected = false_block_probability(5, 0.8, 0.15)
    lo, hi = binom.interval(0.99, items, expected)
    sim_rows = [
        "| correlation | blocks / 20,000 | measured rate | binomial value | 99% interval |",
        "|---:|---:|---:|---:|---|",
    ]
    for rho in (0.0, 0.1, 0.3):
        blocks, rate = sim_false_block(items, rho)
        sim_rows.append(
            f"| {rho} | {blocks} | {rate:.4f} | {expected:.4f} | "
            f"[{lo / items:.4f}, {hi / items:.4f}] |"
        )
    sim_table = "\n".join(sim_rows)
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores"
    )
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = (
        f"Measured {stamp} on {machine}, {calls} calls per variant, 64 in flight.\n\n"
        f"{table}\n\nsim panel, N = 5, quorum 0.8, reliability 0.85 (seed 001):\n\n{sim_table}\n"
    )
    print()
    print(text)
    if write:
        _write(text)


def _write(text: str) -> None:
    from _readme import write_section  # bench/ is on sys.path when a script runs

    write_section("orchestration", text)
    print("results written to bench/README.md")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(args.calls, not args.no_write))
