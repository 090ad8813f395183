"""Running ``jurat run`` in-process against a loopback judge, and reading its summary."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurat.ledger import open_ledger
from jurat.receipts import read_statement
from tests.support.cli import invoke
from tests.support.fake_openai import FakeOpenAI


@dataclass
class Run:
    """One ``jurat run`` and what it left behind."""

    code: int
    out: str
    err: str
    dir: Path
    requests: list[str | None]
    """The artifact digest each request to the judge asked about."""

    def predicate(self, artifact: str) -> dict[str, Any]:
        signed = (self.dir / "out" / f"{artifact}.sigstore.json").read_bytes()
        predicate: dict[str, Any] = read_statement(signed)["predicate"]
        return predicate

    def ledger_text(self) -> str:
        with open_ledger(f"sqlite:///{self.dir / 'l.db'}", create=False) as ledger:
            return json.dumps([e.payload for e in ledger.entries()])

    def has_ledger(self) -> bool:
        return (self.dir / "l.db").exists()

    def samples(self) -> int:
        with open_ledger(f"sqlite:///{self.dir / 'l.db'}", create=False) as ledger:
            return sum(1 for _ in ledger.entries(kind="sample_recorded"))


def run(root: Path, campaign: Path, server: FakeOpenAI | None, *extra: str) -> Run:
    keys = root / "keys"
    if not (keys / "jurat.key").exists():
        assert invoke("keygen", "--out", str(keys)).exit_code == 0
    before = len(server.received) if server is not None else 0
    r = invoke("run", str(campaign), "--out", str(root / "out"), "--ledger",
               f"sqlite:///{root / 'l.db'}", "--key", str(keys / "jurat.key"), "--quiet",
               *extra)
    asked = [req.digest for req in server.received[before:]] if server is not None else []
    return Run(r.exit_code, r.stdout, r.stderr, root, asked)


def row(out: str, artifact: str) -> list[str]:
    """The summary table's cells for ``artifact``."""
    line = next(ln for ln in out.splitlines() if ln.startswith(f"│ {artifact} "))
    return [cell.strip() for cell in line.strip("│").split("│")]


def block(out: str, artifact: str) -> list[str]:
    """The reasons printed under ``artifact``, one stripped line each."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"  {artifact}  "))
    found = []
    for ln in lines[start + 1:]:
        if not ln.startswith("    ") or ln.strip() == "judges":  # the next table's title
            break
        found.append(ln.strip())
    return found
