"""Every exit status of the contract (docs/design.md, "CLI"), produced end to end.

0 accepted/shipped, 1 escalate/warn/undecided or a verification that did not hold
(``replay`` without ``--key`` among them), 2 reject/block, 3 configuration or input
error (nothing written), 4 a failure during the run, never 1.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from jurat.cli import ExitCode
from jurat.errors import LedgerError
from jurat.ledger import GroupCommit, open_ledger

from .conftest import CRITERIA, EQUIVALENCE, campaign, jurat


def _run(path: Path, tmp_path: Path, key: Path, *extra: str) -> tuple[int, str, str]:
    db = tmp_path / "ledger.db"
    result = jurat("run", str(path), "--out", str(tmp_path / "out"), "--ledger",
                   f"sqlite:///{db}", "--key", str(key), "--quiet", *extra)
    return result.exit_code, result.stdout, result.stderr


def _entries(tmp_path: Path) -> list[str]:
    db = tmp_path / "ledger.db"
    if not db.exists():
        return []
    with open_ledger(f"sqlite:///{db}", create=False) as ledger:
        return [e.kind for e in ledger.entries()]


def test_the_contract_numbers() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 130]
    names = ["OK", "ESCALATE", "REJECT", "INPUT", "RUN_FAILURE", "INTERRUPTED"]
    assert [c.name for c in ExitCode] == names


@pytest.mark.parametrize(
    ("template", "stub", "code", "word"),
    [
        (EQUIVALENCE, "always-equivalent", ExitCode.OK, "equivalent"),
        (CRITERIA, "always-yes", ExitCode.OK, "SHIP"),
        (EQUIVALENCE, "always-abstain", ExitCode.ESCALATE, "undecided"),
        (CRITERIA, "always-no", ExitCode.REJECT, "BLOCK"),
    ],
    ids=["equivalent", "ship", "undecided", "block"],
)
def test_run_exits_with_the_decision(
    tmp_path: Path, signing_key: tuple[Path, Path], template: str, stub: str,
    code: ExitCode, word: str,
) -> None:
    path = campaign(tmp_path, template, stub, stub)
    status, out, err = _run(path, tmp_path, signing_key[0])
    assert status == code, out + err
    assert word in out
    assert (tmp_path / "out").is_dir() and "receipt" in _entries(tmp_path)


def test_run_input_error_exits_3_and_writes_nothing(
    tmp_path: Path, signing_key: tuple[Path, Path]
) -> None:
    path = campaign(tmp_path, CRITERIA, "typo", "always-yes")
    path.write_text(path.read_text().replace("blocker_samples", "blocker_sampels"))
    status, out, err = _run(path, tmp_path, signing_key[0])
    assert status == ExitCode.INPUT, out + err
    message = " ".join(err.split())
    assert "error:" in message and "blocker_sampels" in message and "fix:" in message
    assert _entries(tmp_path) == []


def test_run_with_an_unreadable_key_exits_3(tmp_path: Path) -> None:
    path = campaign(tmp_path, CRITERIA, "nokey", "always-yes")
    status, out, err = _run(path, tmp_path, tmp_path / "missing.key")
    assert status == ExitCode.INPUT, out + err
    assert _entries(tmp_path) == []


def test_a_ledger_failing_mid_run_exits_4_not_1(
    tmp_path: Path, signing_key: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = GroupCommit.append

    async def append(self: GroupCommit, kind: str, *args: object, **kwargs: object) -> object:
        if kind == "sample_recorded":
            raise LedgerError("disk full while appending (injected)")
        return await original(self, kind, *args, **kwargs)  # type: ignore[arg-type]

    # A run writes through the ledger's group commit (runner/_run.py).
    monkeypatch.setattr(GroupCommit, "append", append)
    # always-abstain would be an escalate (1): the failure must not read as one.
    path = campaign(tmp_path, EQUIVALENCE, "broken", "always-abstain")
    status, out, err = _run(path, tmp_path, signing_key[0])
    assert status == ExitCode.RUN_FAILURE, out + err
    assert "error: disk full while appending (injected)" in " ".join(err.split())
    monkeypatch.undo()
    kinds = _entries(tmp_path)
    assert "job_received" in kinds and "receipt" not in kinds


def test_an_internal_error_exits_4_without_a_traceback(
    tmp_path: Path, signing_key: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("a bug jurat has not met yet")

    monkeypatch.setattr("jurat.cli._run.run_campaign_async", boom)
    path = campaign(tmp_path, CRITERIA, "bug", "always-yes")
    status, out, err = _run(path, tmp_path, signing_key[0])
    assert status == ExitCode.RUN_FAILURE, out + err
    assert "internal error: RuntimeError: a bug jurat has not met yet" in " ".join(err.split())


def test_replay_exits_1_without_a_key_and_0_with_it(
    tmp_path: Path, signing_key: tuple[Path, Path]
) -> None:
    path = campaign(tmp_path, CRITERIA, "replayed", "always-yes")
    assert _run(path, tmp_path, signing_key[0])[0] == ExitCode.OK
    db = str(tmp_path / "ledger.db")
    unsigned = jurat("replay", db)
    assert unsigned.exit_code == ExitCode.ESCALATE, unsigned.output
    assert "signatures: NOT checked" in unsigned.output
    assert "no signature was checked" in unsigned.output
    signed = jurat("replay", db, "--key", str(signing_key[1]))
    assert signed.exit_code == ExitCode.OK, signed.output
    assert jurat("replay", str(tmp_path / "typo.db")).exit_code == ExitCode.INPUT


def test_verify_exits_0_held_1_not_held_3_unreadable(
    tmp_path: Path, signing_key: tuple[Path, Path]
) -> None:
    path = campaign(tmp_path, CRITERIA, "verified", "always-yes")
    assert _run(path, tmp_path, signing_key[0])[0] == ExitCode.OK
    receipt = tmp_path / "out" / "r1.sigstore.json"
    assert jurat("verify", str(receipt), "--key", str(signing_key[1])).exit_code == 0
    other = jurat("keygen", "--out", str(tmp_path / "other"))
    assert other.exit_code == ExitCode.OK
    wrong = jurat("verify", str(receipt), "--key", str(tmp_path / "other" / "jurat.pub"))
    assert wrong.exit_code == ExitCode.ESCALATE
    missing = jurat("verify", str(tmp_path / "nope.json"), "--key", str(signing_key[1]))
    assert missing.exit_code == ExitCode.INPUT


def test_keygen_refusing_to_overwrite_exits_3(signing_key: tuple[Path, Path]) -> None:
    again = jurat("keygen", "--out", str(signing_key[0].parent))
    assert again.exit_code == ExitCode.INPUT
    assert "refusing to overwrite" in again.stderr


@pytest.mark.parametrize(
    "args",
    [(), ("verify",), ("run", "--bogus", "x.toml"), ("no-such-command",), ("log", "prove", "x")],
    ids=["no-command", "missing-argument", "unknown-option", "unknown-command", "sub-group"],
)
def test_usage_errors_exit_3_not_2(args: tuple[str, ...]) -> None:
    # click's own status for a usage error is 2, which here would read as a reject.
    assert jurat(*args).exit_code == ExitCode.INPUT


def test_log_verify_exits_0_and_1_on_tampering(
    tmp_path: Path, signing_key: tuple[Path, Path]
) -> None:
    path = campaign(tmp_path, CRITERIA, "logged", "always-yes")
    assert _run(path, tmp_path, signing_key[0])[0] == ExitCode.OK
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    log_pub = str(signing_key[0].with_name("jurat-log.pub"))
    assert jurat("log", "verify", url, "--log-key", log_pub).exit_code == ExitCode.OK
    # Tamper below the ledger: drop its append-only triggers, delete an entry.
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        triggers = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'")]
        for trigger in triggers:
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DELETE FROM jurat_entries WHERE seq = 1")
    tampered = jurat("log", "verify", url, "--log-key", log_pub)
    assert tampered.exit_code == ExitCode.ESCALATE, tampered.output
    assert "ledger verification failed" in tampered.stderr
