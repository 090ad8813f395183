"""Keys of ``jurat run`` (issue 27): a log key is not a receipt-signing key (``--key
jurat-log.key`` exits 3 before the ledger or any receipt exists, naming the fix), and a
key other than the one that signed a campaign's receipts is refused unless the operator
rotates (``--rotate-key``), after which each printed verify command names the key that
signed what it points at."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

from typer.testing import Result

from jurat.ledger import open_ledger
from tests.support.cli import invoke

from .conftest import CRITERIA, campaign

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "rubric"


def test_the_log_key_is_refused_as_the_receipt_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert invoke("keygen", "--out", str(keys)).exit_code == 0
    shutil.copytree(QUICKSTART, tmp_path / "rubric")
    ledger = tmp_path / "l.db"
    r = invoke("run", str(tmp_path / "rubric" / "campaign.toml"), "--out", str(tmp_path / "out"),
               "--ledger", f"sqlite:///{ledger}", "--key", str(keys / "jurat-log.key"),
               "--quiet")
    assert r.exit_code == 3, r.stdout + r.stderr
    assert "is a log key" in r.stderr and "jurat.key, not jurat-log.key" in r.stderr
    assert not ledger.exists() and not (keys / "jurat-log-log.key").exists()
    # The receipt key still runs.
    ok = invoke("run", str(tmp_path / "rubric" / "campaign.toml"), "--out", str(tmp_path / "out"),
                "--ledger", f"sqlite:///{ledger}", "--key", str(keys / "jurat.key"), "--quiet")
    assert ok.exit_code in (0, 1, 2), ok.stderr


def test_the_chosen_log_key_is_refused_as_the_receipt_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert invoke("keygen", "--out", str(keys)).exit_code == 0
    shutil.copytree(QUICKSTART, tmp_path / "rubric")
    lonely = tmp_path / "lonely.key"  # no public half beside it
    shutil.copy(keys / "jurat-log.key", lonely)
    lonely.chmod(0o600)
    r = invoke("run", str(tmp_path / "rubric" / "campaign.toml"), "--out", str(tmp_path / "out"),
               "--ledger", f"sqlite:///{tmp_path / 'l.db'}", "--key", str(lonely),
               "--log-key", str(keys / "jurat-log.key"), "--quiet")
    assert r.exit_code == 3, r.stdout + r.stderr
    assert "is the log key (--log-key)" in r.stderr


def _keygen(folder: Path) -> str:
    """A key pair by ``jurat keygen``; the key id (hint) it printed."""
    made = invoke("keygen", "--out", str(folder))
    assert made.exit_code == 0, made.output
    return next(ln.split()[-1] for ln in made.stdout.splitlines() if ln.startswith("key hint:"))


def _run_with(root: Path, path: Path, keys: Path, *extra: str) -> Result:
    # One log key throughout: the ledger's checkpoints are the old log key's.
    return invoke("run", str(path), "--out", str(root / "out"), "--ledger",
                  f"sqlite:///{root / 'l.db'}", "--key", str(keys / "jurat.key"),
                  "--log-key", str(root / "old" / "jurat-log.key"), "--quiet", *extra)


def _entries(root: Path) -> int:
    with open_ledger(f"sqlite:///{root / 'l.db'}", create=False) as ledger:
        return sum(1 for _ in ledger.entries())


def _key_id(receipt: Path) -> str:
    hint: str = json.loads(receipt.read_bytes())["verificationMaterial"]["publicKey"]["hint"]
    return hint


def test_another_key_on_a_campaign_s_receipts_is_refused_unless_rotated(
        tmp_path: Path) -> None:
    old_id, new_id = _keygen(tmp_path / "old"), _keygen(tmp_path / "new")
    path = campaign(tmp_path, CRITERIA, "rotate", "always-yes")
    first = _run_with(tmp_path, path, tmp_path / "old")
    assert first.exit_code == 0, first.output
    out = tmp_path / "out"
    # A second artifact, so that the rotated run both reuses a receipt and signs one.
    path.write_text(path.read_text() + '\n[[artifacts]]\nid = "r2"\ntext = "Many thanks."\n')
    before, kept = _entries(tmp_path), (out / "r1.sigstore.json").read_bytes()

    refused = _run_with(tmp_path, path, tmp_path / "new")
    assert refused.exit_code == 3, refused.output
    assert old_id in refused.stderr and new_id in refused.stderr
    assert "--rotate-key" in refused.stderr and "(fix:" in refused.stderr
    assert _entries(tmp_path) == before
    assert not (out / "r2.sigstore.json").exists()
    assert (out / "r1.sigstore.json").read_bytes() == kept

    rotated = _run_with(tmp_path, path, tmp_path / "new", "--rotate-key")
    assert rotated.exit_code == 0, rotated.output
    assert _entries(tmp_path) > before
    # The reused receipt stays the old key's; the new one is the new key's.
    assert (out / "r1.sigstore.json").read_bytes() == kept
    assert _key_id(out / "r1.sigstore.json") == old_id
    assert _key_id(out / "r2.sigstore.json") == new_id
    # One verify command per key, each after the line naming its key id: run for every
    # receipt file, the command printed for its key verifies it.
    lines = rotated.stdout.splitlines()
    commands = {}
    for named, command in zip(lines, lines[1:], strict=False):
        if named.startswith("signed by key id ") and command.startswith("verify:   "):
            commands[named.split()[4]] = shlex.split(command.removeprefix("verify:   "))
    assert set(commands) == {old_id, new_id}, rotated.stdout
    for receipt in sorted(out.glob("*.sigstore.json")):
        argv = commands[_key_id(receipt)]
        assert argv[:2] == ["jurat", "verify"]
        checked = invoke("verify", str(receipt), *argv[3:])
        assert checked.exit_code == 0, checked.output
    # The same command again reuses both receipts, each verified with its own key.
    again = _run_with(tmp_path, path, tmp_path / "new", "--rotate-key")
    assert again.exit_code == 0 and "0 drawn in this run" in again.stdout, again.output
    assert again.stdout.count("verify:   ") == 2
