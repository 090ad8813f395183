"""Waiting for a server subprocess (`jurat serve`) to answer ``/healthz``."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import httpx


def wait_ready(url: str, proc: subprocess.Popen[str], *, why: Callable[[], str],
               timeout_s: float = 60) -> None:
    """Return once ``url/healthz`` answers 200; RuntimeError with ``why()`` (the server's
    output) when the process exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode}:\n{why()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server was not ready within {timeout_s:g} s:\n{why()}")
        time.sleep(0.1)
