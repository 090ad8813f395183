"""Fixtures of the signer tests: the ledger world, and real `jurat signer serve` processes."""

from __future__ import annotations

import json
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

import pytest

from tests.signer.world import World, build_world, jurat


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("world"))


@pytest.fixture(scope="session")
def settlement(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A settlement key made by `jurat signer keygen`, and the address it printed."""
    root = tmp_path_factory.mktemp("settlement")
    done = jurat("signer", "keygen", "--out", str(root / "skey"), cwd=root, check_codes=(0,))
    return root / "skey" / "settlement.key", done.stdout.strip().splitlines()[-1]


@dataclass
class Running:
    """One `jurat signer serve` process and how to talk to it."""

    socket: Path
    state: Path
    args: list[str]
    cwd: Path
    proc: subprocess.Popen[str] | None = None
    stderr: list[str] = field(default_factory=list)

    def start(self) -> Running:
        env = {**os.environ, "XDG_CONFIG_HOME": str(self.cwd / ".config")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jurat", "signer", "serve", *self.args], cwd=self.cwd,
            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"signer exited {self.proc.returncode}: "
                                     f"{self.proc.stderr.read() if self.proc.stderr else ''}")
            if self.socket.exists():
                try:
                    with socket.socket(socket.AF_UNIX) as probe:
                        probe.connect(str(self.socket))
                    return self
                except OSError:
                    pass
            time.sleep(0.05)
        raise AssertionError("the signer did not listen within 60 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stderr:
                self.stderr.append(self.proc.stderr.read())
        self.proc = None

    def send(self, request: dict[str, Any] | bytes) -> dict[str, Any]:
        """One request line over the socket, as any client could send it."""
        line = request if isinstance(request, bytes) else json.dumps(request).encode()
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(120)
            conn.connect(str(self.socket))
            conn.sendall(line + b"\n")
            with conn.makefile("rb") as reader:
                answer: dict[str, Any] = json.loads(reader.readline())
        return answer

    def ask(self, receipt: Path, proof: Path | None = None
            ) -> tuple[int, dict[str, Any]]:
        """`jurat signer request RECEIPT --socket S [--proof P]`: its exit status and line."""
        args = ["signer", "request", str(receipt), "--socket", str(self.socket)]
        if proof is not None:
            args += ["--proof", str(proof)]
        done = jurat(*args, cwd=self.cwd)
        lines = done.stdout.strip().splitlines()
        assert len(lines) == 1, (done.stdout, done.stderr)
        return done.returncode, json.loads(lines[0])


@pytest.fixture
def start_signer(world: World, settlement: tuple[Path, str], tmp_path: Path
                 ) -> Iterator[Any]:
    """``start_signer(ledger=False, receipt_keys=None, state=None, registry=None, extra=())``:
    a running signer with its own state in tmp_path; every one started is stopped after the
    test.
    ``ledger`` is True for the world's ledger or another ledger's URL; ``registry`` and
    ``receipt_keys`` default to the world's; ``extra``: more `signer serve` options."""
    started: list[Running] = []

    def start(*, ledger: bool | str = False, receipt_keys: list[Path] | None = None,
              state: Path | None = None, registry: Path | None = None,
              extra: tuple[str, ...] = ()) -> Running:
        sock = tmp_path / f"s{len(started)}.sock"
        state = state or tmp_path / "signer-state.db"
        args = ["--socket", str(sock), "--registry", str(registry or world.registry), "--key",
                str(settlement[0]), "--state", str(state)]
        for key in receipt_keys or [world.pub]:
            args += ["--receipt-key", str(key)]
        if ledger:
            args += ["--ledger", world.url if ledger is True else ledger]
        args += extra
        running = Running(socket=sock, state=state, args=args, cwd=tmp_path).start()
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
