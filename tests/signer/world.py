"""A real ledger for the signer and board tests, made by `jurat run` with sim judges.

One ledger, one receipt key pair (``jurat keygen``), four campaigns:

- ``settle-rubric`` (in the registry): ``ok1``…``ok3`` accept, ``bad`` reject, ``sup``
  accept, then run again with ``sup`` changed so that its review v2 supersedes v1;
- ``settle-escalate`` (in the registry): ``esc`` and ``esc2`` escalate (the tier wants four
  votes from three judges); ``esc2`` is then adjudicated accept (``jurat adjudicate``);
- ``settle-criteria`` (in the registry): ``ship``, ``warn`` (a non-blocker "no"),
  ``block`` (a unanimous blocker "no");
- ``unlisted`` (not in the registry): ``stray`` accept.

Every artifact's contributor is ``alice``, whose payout address the registry holds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
CONTRACT = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
REGISTRY = f"""
[recipients]
alice = "{RECIPIENT.lower()}"

[[campaigns]]
id = "settle-rubric"
chain_id = 31337
contract = "{CONTRACT}"
selector = "0xa9059cbb"
dataset = "humaneval-2026"
reward = "1000000000000000000"

[[campaigns]]
id = "settle-escalate"
chain_id = 31337
contract = "{CONTRACT}"
selector = "0xa9059cbb"
dataset = "0x{'ab' * 32}"
reward = "5"

[[campaigns]]
id = "settle-criteria"
chain_id = 1
contract = "{CONTRACT}"
selector = "0x12345678"
dataset = "gsm8k"
reward = "7"
"""

_JUDGES = "".join(
    f'\n[[judges]]\nid = "{name}"\nprovider = "sim"\nreliability = 1.0\nseed = {seed}\n'
    "samples = 3\n" for name, seed in (("a", 1), ("b", 2), ("c", 3))
)
_RUBRIC = """
[campaign]
id = "{id}"
kind = "rubric"
allowed_destinations = ["sim"]
{tier}
[rubric]
version = "r/1"
threshold = 0.5
hard_gates = []
criteria = [{{ id = "correctness", weight = 1.0 }}]
"""
_CRITERIA = """
[campaign]
id = "settle-criteria"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
samples = 3
blocker_samples = 3
blocker_quorum = 0.8
items = [
  { id = "correct", text = "Is the answer correct?", blocker = true },
  { id = "shows-work", text = "Does it show its work?" },
]
"""


def _artifact(id: str, text: str, truth: str) -> str:
    return (f'\n[[artifacts]]\nid = "{id}"\ntext = "{text}"\ncontributor = "alice"\n'
            f"truth = {truth}\n")


@dataclass(frozen=True)
class World:
    """Where everything the tests read lies."""

    root: Path
    keys: Path
    ledger: Path
    out: Path
    sup_v1: Path

    @property
    def url(self) -> str:
        return f"sqlite:///{self.ledger}"

    @property
    def pub(self) -> Path:
        return self.keys / "jurat.pub"

    @property
    def registry(self) -> Path:
        return self.root / "registry.toml"

    def receipt(self, artifact: str) -> Path:
        return self.out / f"{artifact}.sigstore.json"

    def proof(self, artifact: str) -> Path:
        return self.out / f"{artifact}.sigstore.json.proof.json"

    def statement(self, artifact: str) -> dict[str, object]:
        from jurat.receipts import read_statement

        return read_statement(self.receipt(artifact).read_bytes())


def jurat(*args: str, cwd: Path, check_codes: tuple[int, ...] | None = None
          ) -> subprocess.CompletedProcess[str]:
    """``python -m jurat ARGS`` in a child process, its default keys under ``cwd``."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(cwd / ".config"),
           "XDG_STATE_HOME": str(cwd / ".state")}
    done = subprocess.run([sys.executable, "-m", "jurat", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300, env=env)
    if check_codes is not None:
        assert done.returncode in check_codes, (args, done.stdout, done.stderr)
    return done


def build_world(root: Path) -> World:
    """Make the keys, the ledger and the receipts described in the module docstring."""
    keys, out, ledger = root / "keys", root / "out", root / "l.db"
    jurat("keygen", "--out", str(keys), cwd=root, check_codes=(0,))
    out.mkdir()

    def run(campaign: Path) -> None:
        # A receipts directory holds one campaign's receipts (docs/design.md, CLI): each
        # campaign runs into its own, and its receipts and proofs are gathered in ``out``.
        own = root / "runs" / campaign.stem
        jurat("run", str(campaign), "--out", str(own), "--ledger", f"sqlite:///{ledger}",
              "--key", str(keys / "jurat.key"), "--quiet", cwd=root, check_codes=(0, 1, 2))
        for written in own.glob("*.sigstore.json*"):
            shutil.copy(written, out / written.name)
    campaigns = {
        "rubric.toml": _RUBRIC.format(id="settle-rubric", tier="") + _JUDGES
        + "".join(_artifact(f"ok{i}", f"good answer {i}", '"accept"') for i in (1, 2, 3))
        + _artifact("bad", "a wrong answer", '"reject"')
        + _artifact("sup", "first version", '"accept"'),
        "escalate.toml": _RUBRIC.format(
            id="settle-escalate", tier="risk_tier = { votes = 4, min_agreement = 1.0 }\n")
        + _JUDGES + _artifact("esc", "unclear", '"accept"')
        + _artifact("esc2", "unclear too", '"accept"'),
        "criteria.toml": _CRITERIA + _JUDGES
        + _artifact("ship", "2 + 2 = 4", '{ correct = "yes", shows-work = "yes" }')
        + _artifact("warn", "4", '{ correct = "yes", shows-work = "no" }')
        + _artifact("block", "2 + 2 = 5", '{ correct = "no", shows-work = "yes" }'),
        "unlisted.toml": _RUBRIC.format(id="unlisted", tier="") + _JUDGES
        + _artifact("stray", "good answer", '"accept"'),
    }
    for name, text in campaigns.items():
        (root / name).write_text(text)
        run(root / name)
    # esc2: a reviewer settles the escalation; the adjudicated review is v2, an accept.
    job = json.loads(json.dumps(_statement(out / "esc2.sigstore.json")))["predicate"]["inputs"][
        "job_id"]
    jurat("adjudicate", f"sqlite:///{ledger}", job, "--disposition", "accept", "--rationale",
          "the answer is right; the panel was too small", "--reviewer", "bob", "--key",
          str(keys / "jurat.key"), "--out", str(out / "esc2.sigstore.json"), cwd=root,
          check_codes=(0,))
    # sup: keep v1's files, then change the artifact so that the run signs v2.
    sup_v1 = root / "sup-v1"
    sup_v1.mkdir()
    shutil.copy(out / "sup.sigstore.json", sup_v1 / "sup.sigstore.json")
    shutil.copy(out / "sup.sigstore.json.proof.json", sup_v1 / "sup.sigstore.json.proof.json")
    rubric = root / "rubric.toml"
    rubric.write_text(rubric.read_text().replace("first version", "second version"))
    run(rubric)
    (root / "registry.toml").write_text(REGISTRY)
    return World(root=root, keys=keys, ledger=ledger, out=out,
                 sup_v1=sup_v1 / "sup.sigstore.json")


def _statement(path: Path) -> dict[str, object]:
    from jurat.receipts import read_statement

    return read_statement(path.read_bytes())
