"""A running `jurat serve` whose receipts a test settles with a real `jurat signer`: the
receipts and proofs it saved, by artifact id."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.service._support import Env

#: Seconds to wait for a checkpoint that covers a decided job (the server signs one every
#: couple of seconds).
PROOF_WAIT_S = 60


@dataclass(frozen=True)
class Served:
    """The server's environment, its URL, the signer's registry, and the jobs submitted."""

    env: Env
    url: str
    registry: Path
    jobs: dict[str, str]
    """Artifact id -> job id."""

    def receipt(self, artifact: str) -> Path:
        return self.env.root / f"{artifact}.sigstore.json"

    def proof(self, artifact: str) -> Path:
        return self.env.root / f"{artifact}.sigstore.json.proof.json"

    def save(self, http: httpx.Client, artifact: str, headers: dict[str, str]) -> None:
        """The job's latest receipt, and its proof once a checkpoint covers it."""
        job = self.jobs[artifact]
        self.receipt(artifact).write_bytes(
            http.get(f"/v1/jobs/{job}/receipt", headers=headers).content)
        deadline = time.monotonic() + PROOF_WAIT_S
        while (proof := http.get(f"/v1/jobs/{job}/proof", headers=headers)).status_code != 200:
            assert time.monotonic() < deadline, proof.text
            time.sleep(0.05)
        self.proof(artifact).write_text(proof.text)

    def ask(self, signer: Any, artifact: str) -> tuple[int, dict[str, Any]]:
        """The signer's answer to the artifact's receipt and proof."""
        code, answer = signer.ask(self.receipt(artifact), self.proof(artifact))
        return code, answer
