"""An in-process `jurat serve` (FastAPI's TestClient) over a fresh ledger, its keys, its
tokens, and campaigns written for these tests; and a real one in a subprocess."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from jurat.campaign import load_campaign
from jurat.ledger import open_ledger
from jurat.receipts import keygen, load_private_key
from jurat.service import Service, TokenStore
from jurat.service._app import create_app
from jurat.service._limits import ClientLimits
from tests.support.ready import wait_ready

#: The servers of these tests poll fast with one token: no rate limit unless a test sets one
#: (tests/service/test_client_limits.py does).
UNLIMITED = ClientLimits(rate_per_s=0)

#: In the hidden tests, and so in nothing a contributor can read.
MARKER = "QZX-HIDDEN-4f2a91"

HIDDEN_TESTS = f'''from solution import square


def test_small():
    assert square(3) == 9, "{MARKER}-message"


def test_reference():
    expected = {{"{MARKER}-gold": 144}}
    assert square(12) == expected["{MARKER}-gold"]
'''

GOOD = "def square(x):\n    return x * x\n"
BAD = "def square(x):\n    return x + x\n"

#: Three seeded sim judges, ``{samples}`` samples each, ``{latency}`` ms per call (a
#: ``str.format`` template, as the campaigns that end with it).
SIM_PANEL = "".join(
    f'\n[[judges]]\nid = "{name}"\nprovider = "sim"\nseed = {seed}\n'
    "samples = {samples}\nlatency_ms = {latency}\n"
    for seed, name in enumerate("ABC", start=1)
)

#: The rubric and the hidden tests of the code campaigns: gates that veto.
SQUARE = """
[rubric]
version = "square/1"
hard_gates = ["python.parse", "tests.pass"]
criteria = [ {{ id = "correctness", weight = 1.0 }} ]

[checks.python]
tests = "tests/test_square.py"
limits = {{ wall_s = 20, cpu_s = 10, memory_mb = 256 }}
"""

#: A code campaign: hidden tests with the marker, gates that veto, a sim panel.
CODE = """\
[campaign]
id = "code"
kind = "rubric"
allowed_destinations = ["sim"]
""" + SQUARE + SIM_PANEL

#: Text judged by a sim panel alone: no sandbox, so many jobs are cheap.
TEXT = """\
[campaign]
id = "text"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "essay/1"
hard_gates = []
criteria = [ {{ id = "correctness", weight = 1.0 }} ]

""" + SIM_PANEL

#: Every panel accepts, but the tier needs an adjudication: every good artifact escalates.
CRITICAL = """\
[campaign]
id = "critical"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0, adjudication = true }}
allowed_destinations = ["stub"]
""" + SQUARE + """
[[judges]]
id = "A"
provider = "stub:always-accept"
samples = 1
"""


def write_campaigns(root: Path, *, samples: int = 3, latency: int = 0) -> dict[str, Path]:
    """The three campaigns in ``root``, with the hidden tests beside them."""
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "tests" / "test_square.py").write_text(HIDDEN_TESTS)
    paths = {}
    for name, text in (("code", CODE), ("text", TEXT), ("critical", CRITICAL)):
        path = root / f"{name}.toml"
        path.write_text(text.format(samples=samples, latency=latency))
        paths[name] = path
    return paths


@dataclass
class Env:
    """A served ledger: its URL, keys and a token per (role, subject)."""

    root: Path
    ledger_url: str
    key: Path
    pub: Path
    log_key: Path
    campaigns: dict[str, Path]
    tokens: dict[str, str] = field(default_factory=dict)

    def token(self, role: str, campaign: str = "*", subject: str | None = None) -> str:
        name = f"{role}:{campaign}:{subject}"
        if name not in self.tokens:
            with TokenStore(self.ledger_url) as store:
                self.tokens[name] = store.create(campaign=campaign, role=role,
                                                 subject=subject)[1]
        return self.tokens[name]

    def auth(self, role: str, campaign: str = "*", subject: str | None = None
             ) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(role, campaign, subject)}"}


def make_env(root: Path, **kwargs: Any) -> Env:
    keys = root / "keys"
    keygen(keys)
    from jurat.ledger import log_keygen

    log_key, _ = log_keygen(keys)
    return Env(root=root, ledger_url=f"sqlite:///{root / 'l.db'}", key=keys / "jurat.key",
               pub=keys / "jurat.pub", log_key=Path(log_key),
               campaigns=write_campaigns(root, **kwargs))


@contextlib.contextmanager
def client(env: Env, names: tuple[str, ...] = ("code", "text", "critical"),
           checkpoint_interval: float = 0.2, board: bool = False) -> Iterator[TestClient]:
    """An in-process server of ``names`` over ``env``'s ledger (``board``: with /board/)."""
    from jurat.ledger import load_log_key
    from jurat.service._board import BoardCache

    campaigns = [load_campaign(env.campaigns[n], served=True) for n in names]
    ledger = open_ledger(env.ledger_url)
    tokens = TokenStore(env.ledger_url)
    signer = load_log_key(env.log_key)
    key = load_private_key(env.key)
    public = BoardCache(ledger, key, signer) if board else None
    app = create_app(lambda: Service(campaigns, ledger=ledger, key=key, log_signer=signer,
                                     checkpoint_interval=checkpoint_interval), tokens,
                     board=public, limits=UNLIMITED)
    try:
        with TestClient(app) as http:
            yield http
    finally:
        if public is not None:
            public.close()
        tokens.close()
        ledger.close()


def wait_decided(http: TestClient | httpx.Client, job: str, headers: dict[str, str],
                 timeout: float = 120) -> dict[str, Any]:
    """Poll the job until it is decided (or failed); its last state."""
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = http.get(f"/v1/jobs/{job}", headers=headers).json()
        if body.get("status") in ("decided", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def artifact(id: str, text: str, media_type: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"id": id, "text": text}
    if media_type:
        body["media_type"] = media_type
    return {"artifact": body}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def subprocess_server(env: Env, names: tuple[str, ...], *extra: str
                      ) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A real `jurat serve` (with ``extra`` options) on 127.0.0.1 and a free port;
    SIGKILLed if still running."""
    port = free_port()
    args = [sys.executable, "-m", "jurat", "serve", *(str(env.campaigns[n]) for n in names),
            "--ledger", env.ledger_url, "--key", str(env.key), "--log-key", str(env.log_key),
            "--host", "127.0.0.1", "--port", str(port), "--rate-limit", "0",
            # These campaigns' sim panels are the machinery under test, not a contest's
            # judges: serve them as the demo they are (docs/service.md, "Sim judges").
            "--allow-sim", *extra]
    log = open(env.root / f"serve-{port}.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(args, cwd=env.root, stdout=log, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ,
                                            "XDG_CONFIG_HOME": str(env.root / "cfg")})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc, why=(env.root / f"serve-{port}.log").read_text)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        log.close()
