"""Helpers for end-to-end runs of the CLI in a temporary directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"


def jurat(*args: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "XDG_CONFIG_HOME": str(cwd / ".config"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "jurat", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=timeout, env=full_env)


def copy_example(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(QUICKSTART / name, target)
    return target / "campaign.toml"


def keys(tmp: Path) -> tuple[Path, Path]:
    out = tmp / "keys"
    if not (out / "jurat.key").exists():
        r = jurat("keygen", "--out", str(out), cwd=tmp)
        assert r.returncode == 0, r.stderr
    return out / "jurat.key", out / "jurat.pub"


def entries(db: Path, kind: str | None = None) -> list[Any]:
    from jurat.errors import LedgerError
    from jurat.ledger import open_ledger

    if not db.exists():
        return []
    try:
        ledger = open_ledger(f"sqlite:///{db}", create=False)  # a reader: never writes
    except LedgerError as exc:
        # A run polled while it starts has created the file but not yet its tables:
        # nothing is recorded yet, which is what the caller polls for.
        if str(exc).startswith("no ledger"):
            return []
        raise
    try:
        return list(ledger.entries(kind=kind))
    finally:
        ledger.close()


def verify(receipt: Path, pub: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return jurat("verify", str(receipt), "--key", str(pub), cwd=cwd)
