"""A real OpenAI-compatible HTTP/1.1 server on 127.0.0.1 for tests and benchmarks.

``FakeOpenAI`` listens on a free loopback port and answers every request with a scripted
``Reply``: a queue (``script``) first, then a ``behaviour`` callable. It speaks enough of
HTTP/1.1 (keep-alive, Content-Length bodies) for the ``openai`` and ``anthropic`` SDKs and
for plain httpx; it is a hand-written asyncio protocol because a framework server costs
more CPU per request than the client under test (measured in bench/orchestration.py).

Two modes:

- thread mode (default): the server runs its own event loop in a daemon thread, so it
  serves both sync and async tests; ``received`` keeps every request.
- process mode (``process=True``): the server runs in a child Python process so it does
  not share the client's GIL (the benchmark). The behaviour must then be an importable
  module-level function (such as ``echo_judge``); ``requests`` asks the child for its count.

Usage::

    with FakeOpenAI(behaviour=echo_judge, latency_ms=50) as server:
        client = openai.AsyncOpenAI(base_url=server.url, api_key="x")
        ...
        assert server.requests == 10
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FakeOpenAI",
    "FakeRequest",
    "Reply",
    "anthropic_message",
    "arcv_decision",
    "completion",
    "echo_judge",
    "reply_json",
]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    411: "Length Required",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}

_DIGEST = re.compile(rb"artifact_sha256 to echo: ([0-9a-f]{64})")
_SCHEMA_NAME = re.compile(rb'"name": ?"([a-z0-9_]+)"')


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = (("content-type", "application/json"),)
    delay_s: float = 0.0
    """Extra delay before answering, on top of the server's latency."""
    hang: bool = False
    """Never answer (the connection stays open until the client gives up)."""
    drop: bool = False
    """Close the connection without answering."""
    trickle_s: float | None = None
    """Send the headers, then one body byte every ``trickle_s`` seconds (slow drip)."""


@dataclass
class FakeRequest:
    """One received request."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    _json: Any = field(default=None, repr=False)

    def json(self) -> Any:
        if self._json is None:
            self._json = json.loads(self.body) if self.body else {}
        return self._json

    @property
    def prompt(self) -> str:
        """Every message's text, joined: what the model would read."""
        data = self.json()
        parts = [str(data.get("system", ""))]
        for message in data.get("messages", []):
            content = message.get("content", "")
            if isinstance(content, list):
                content = " ".join(str(c.get("text", "")) for c in content)
            parts.append(str(content))
        return "\n".join(parts)

    @property
    def digest(self) -> str | None:
        """The artifact digest the prompt asks the judge to echo."""
        match = _DIGEST.search(self.body)
        return match.group(1).decode() if match else None


Behaviour = Callable[[FakeRequest], "Reply | dict[str, Any]"]


def reply_json(obj: Any, status: int = 200, **kwargs: Any) -> Reply:
    """A JSON reply."""
    return Reply(status=status, body=json.dumps(obj).encode(), **kwargs)


def completion(
    content: str | None,
    *,
    model: str = "fake-model-2026",
    finish_reason: str = "stop",
    refusal: str | None = None,
    usage: dict[str, int] | None = None,
    fingerprint: str | None = "fp_fake",
    choices: list[Any] | None = None,
    **kwargs: Any,
) -> Reply:
    """A chat.completion reply whose first message carries ``content``."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_800_000_000,
        "model": model,
        "system_fingerprint": fingerprint,
        "choices": choices
        if choices is not None
        else [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage or {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
    }
    return reply_json(body, **kwargs)


def anthropic_message(
    blocks: list[dict[str, Any]],
    *,
    model: str = "claude-fake-1",
    stop_reason: str = "tool_use",
    usage: dict[str, int] | None = None,
    **kwargs: Any,
) -> Reply:
    """An Anthropic Messages API reply."""
    body = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 120, "output_tokens": 40},
    }
    return reply_json(body, **kwargs)


def arcv_decision(digest: str | None, **overrides: Any) -> dict[str, Any]:
    """A valid ARCV Judge Decision v1 (accept), with fields overridden."""
    answer: dict[str, Any] = {
        "artifact_sha256": digest or "0" * 64,
        "preference": "A",
        "scores": {"correctness": 5, "reasoning": 4, "adherence": 4, "presentation": 4},
        "hard_gates_pass": True,
        "disposition": "accept",
        "evidence_indices": [0],
        "explanation": "The candidate is correct and its tests pass.",
    }
    answer.update(overrides)
    return answer


_EQUIVALENT = "DECISION: EQUIVALENT\nREASON: same number\nNUMERIC_A: 200\nNUMERIC_B: 200"
_VERDICT_YES = json.dumps({"verdict": "yes", "explanation": "The output does this."})


def echo_judge(request: FakeRequest) -> Reply | dict[str, Any]:
    """A well-behaved judge: a valid answer of the kind the request asks for.

    Rubric and pairwise requests get an accepting decision echoing the prompt's digest;
    criterion requests get ``yes``; anything else the equivalence line format. The kind is
    read from the structured-output schema name, else from the prompt text. Requests to
    ``/v1/messages`` get the Anthropic shape (a forced tool call).
    """
    body = request.body
    match = _SCHEMA_NAME.search(body) if b"json_schema" in body or b"input_schema" in body else None
    name = match.group(1).decode() if match else ""
    # Without structured output, answer as a model would: by what the prompt asks for.
    if "criterion" in name or (not name and b"binary criterion" in body):
        content = _VERDICT_YES
    elif "arcv" in name or (not name and b"ARCV Judge Decision v1" in body):
        content = json.dumps(arcv_decision(request.digest))
    else:
        content = _EQUIVALENT
    if request.path.endswith("/messages"):
        if name:
            block = {"type": "tool_use", "id": "tu_1", "name": name, "input": json.loads(content)}
            return anthropic_message([block])
        return anthropic_message([{"type": "text", "text": content}], stop_reason="end_turn")
    return completion(content)


def _serialise(reply: Reply | dict[str, Any]) -> Reply:
    return reply if isinstance(reply, Reply) else reply_json(reply)


class _Protocol(asyncio.Protocol):
    def __init__(self, server: _Server) -> None:
        self.server = server
        self.buffer = b""
        self.pending: tuple[str, str, dict[str, str]] | None = None
        self.need = 0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server.connections.add(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.server.connections.discard(self.transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            if self.pending is None:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = self.buffer[:end].decode("latin-1").split("\r\n")
                self.buffer = self.buffer[end + 4 :]
                method, target, _ = head[0].split(" ", 2)
                headers: dict[str, str] = {}
                for line in head[1:]:
                    key, _, value = line.partition(":")
                    headers[key.strip().lower()] = value.strip()
                if "chunked" in headers.get("transfer-encoding", ""):
                    self._write(Reply(status=411, body=b'{"error":"chunked bodies unsupported"}'))
                    return
                self.pending = (method, target, headers)
                self.need = int(headers.get("content-length", "0"))
            if len(self.buffer) < self.need:
                return
            body, self.buffer = self.buffer[: self.need], self.buffer[self.need :]
            method, target, headers = self.pending
            self.pending = None
            self.server.handle(self, FakeRequest(0, method, target, headers, body))

    def _write(self, reply: Reply) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if reply.drop:
            transport.close()
            return
        head = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
        head.extend(f"{k}: {v}" for k, v in reply.headers)
        head.append(f"content-length: {len(reply.body)}")
        head.append("\r\n")
        if reply.trickle_s is None:
            transport.write("\r\n".join(head).encode("latin-1") + reply.body)
            return
        transport.write("\r\n".join(head).encode("latin-1"))
        task = asyncio.get_running_loop().create_task(self._trickle(reply.body, reply.trickle_s))
        self.server.tasks.add(task)
        task.add_done_callback(self.server.tasks.discard)

    async def _trickle(self, body: bytes, every: float) -> None:
        for i in range(len(body)):
            await asyncio.sleep(every)
            if self.transport is None or self.transport.is_closing():
                return
            self.transport.write(body[i : i + 1])


class _Server:
    """The scripted server state; lives on the server's event loop."""

    def __init__(
        self,
        behaviour: Behaviour | None,
        script: Iterable[Reply | dict[str, Any] | Behaviour],
        latency_s: float,
        keep: bool,
    ) -> None:
        self.behaviour = behaviour or echo_judge
        self.script: deque[Reply | dict[str, Any] | Behaviour] = deque(script)
        self.latency_s = latency_s
        self.keep = keep
        self.count = 0
        self.received: list[FakeRequest] = []
        self.connections: set[asyncio.Transport] = set()
        self.tasks: set[asyncio.Task[None]] = set()

    def handle(self, conn: _Protocol, request: FakeRequest) -> None:
        request.index = self.count
        self.count += 1
        if self.keep:
            self.received.append(request)
        try:
            item = self.script.popleft() if self.script else self.behaviour
            reply = _serialise(item(request) if callable(item) else item)
        except Exception as exc:  # a broken behaviour is the test's bug: answer 599 loudly
            reply = reply_json({"error": f"behaviour raised {exc!r}"}, status=599)
        if reply.hang:
            return
        delay = self.latency_s + reply.delay_s
        if delay > 0:
            asyncio.get_running_loop().call_later(delay, conn._write, reply)
        else:
            conn._write(reply)


async def _serve(server: _Server, ready: Callable[[int], None], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    listener = await loop.create_server(
        lambda: _Protocol(server), "127.0.0.1", 0, reuse_address=True, backlog=1024
    )
    ready(listener.sockets[0].getsockname()[1])
    try:
        await stop.wait()
    finally:
        listener.close()
        for task in list(server.tasks):
            task.cancel()
        await asyncio.gather(*server.tasks, return_exceptions=True)
        for transport in list(server.connections):
            transport.abort()
        await listener.wait_closed()


def _spec(behaviour: Behaviour | None) -> str:
    target = behaviour or echo_judge
    module, name = getattr(target, "__module__", None), getattr(target, "__qualname__", "")
    if not module or module == "__main__" or "<" in name:
        raise ValueError("process mode needs a module-level behaviour function (e.g. echo_judge)")
    return f"{module}:{name}"


def _child_main() -> None:
    """Entry point of the server process: serve until stdin says stop (or closes)."""
    import importlib

    module, _, name = sys.argv[1].partition(":")
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    server = _Server(target, (), float(sys.argv[2]), keep=False)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        stdin = sys.stdin.buffer

        def command() -> None:
            line = stdin.readline().strip()
            if line == b"count":
                sys.stdout.write(f"{server.count}\n")
                sys.stdout.flush()
            else:  # "stop", or EOF when the parent went away
                stop.set()

        loop.add_reader(stdin.fileno(), command)

        def ready(port: int) -> None:
            sys.stdout.write(f"{port}\n")
            sys.stdout.flush()

        await _serve(server, ready, stop)

    asyncio.run(main())


class FakeOpenAI:
    """An OpenAI-compatible server on 127.0.0.1:<free port>; a context manager."""

    def __init__(
        self,
        behaviour: Behaviour | None = None,
        *,
        script: Iterable[Reply | dict[str, Any] | Behaviour] = (),
        latency_ms: float = 0.0,
        process: bool = False,
        keep_requests: bool = True,
    ) -> None:
        self._behaviour = behaviour
        self._latency_s = latency_ms / 1000
        self._process = process
        self._server = _Server(behaviour, script, self._latency_s, keep_requests and not process)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._child: subprocess.Popen[bytes] | None = None
        self._child_lock = threading.Lock()
        self.port = 0

    @property
    def url(self) -> str:
        """The OpenAI-style base URL (``…/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        """The bare origin (Anthropic's SDK appends ``/v1/messages`` itself)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> int:
        """How many requests arrived (all of them, whatever was answered)."""
        if self._child is not None:
            return int(self._ask(b"count"))
        return self._server.count

    @property
    def pid(self) -> int | None:
        """The server process id (process mode), e.g. to measure its CPU time."""
        return self._child.pid if self._child is not None else None

    def _ask(self, command: bytes) -> bytes:
        child = self._child
        assert child is not None and child.stdin is not None and child.stdout is not None
        with self._child_lock:
            child.stdin.write(command + b"\n")
            child.stdin.flush()
            return child.stdout.readline().strip()

    @property
    def received(self) -> list[FakeRequest]:
        """Every request received (thread mode only)."""
        return self._server.received

    @property
    def behaviour(self) -> Behaviour:
        """What answers once the script is empty (thread mode; settable)."""
        return self._server.behaviour

    @behaviour.setter
    def behaviour(self, behaviour: Behaviour) -> None:
        self._server.behaviour = behaviour

    def push(self, *replies: Reply | dict[str, Any] | Behaviour) -> None:
        """Queue replies to serve before falling back to the behaviour (thread mode)."""
        if self._process:
            raise RuntimeError("push works in thread mode; a server process has its behaviour")
        self._server.script.extend(replies)  # deque.extend is atomic: safe across threads

    def start(self) -> FakeOpenAI:
        if self._process:
            self._start_process()
        else:
            self._start_thread()
        return self

    def _start_thread(self) -> None:
        started = threading.Event()

        def ready(port: int) -> None:
            self.port = port
            started.set()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._stop = asyncio.Event()
            try:
                loop.run_until_complete(_serve(self._server, ready, self._stop))
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("fake OpenAI server did not start")

    def _start_process(self) -> None:
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        code = "from tests.support.fake_openai import _child_main; _child_main()"
        self._child = subprocess.Popen(
            [sys.executable, "-c", code, _spec(self._behaviour), str(self._latency_s)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=root,
        )
        assert self._child.stdout is not None
        line = self._child.stdout.readline().strip()
        if not line.isdigit():
            self._child.kill()
            self._child = None
            raise RuntimeError("fake OpenAI server process did not start")
        self.port = int(line)

    def stop(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            assert child.stdin is not None
            try:
                child.stdin.write(b"stop\n")
                child.stdin.close()
                child.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                child.kill()
                child.wait()
        if self._loop is not None and self._stop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
