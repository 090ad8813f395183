"""Run a tiny campaign in-process and calibrate it: the calibrate tests' one harness."""

from __future__ import annotations

import json
from pathlib import Path

from jurat.cli import ExitCode
from tests.support.cli import invoke


def run_campaign(tmp_path: Path, campaign: str, rows: list[dict[str, object]],
                 gold: list[dict[str, object]]) -> tuple[Path, Path, Path]:
    """``campaign`` over ``rows`` (pairs.jsonl), run and signed: (receipts, gold, public key)."""
    camp = tmp_path / "camp"
    camp.mkdir()
    (camp / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    (camp / "campaign.toml").write_text(campaign)
    assert invoke("keygen", "--out", str(tmp_path / "keys")).exit_code == 0
    result = invoke("run", str(camp / "campaign.toml"), "--out", str(tmp_path / "out"),
                    "--ledger", f"sqlite:///{tmp_path / 'ledger.db'}",
                    "--key", str(tmp_path / "keys" / "jurat.key"), "--quiet")
    assert result.exit_code in (ExitCode.OK, ExitCode.ESCALATE, ExitCode.REJECT), result.output
    return tmp_path / "out", tmp_path / "gold.jsonl", tmp_path / "keys" / "jurat.pub"


def calibrate_json(out: Path, gold: Path, key: Path,
                   report: Path) -> tuple[int, dict[str, object], str]:
    """``jurat calibrate`` on them: (exit code, the JSON report, the terminal output)."""
    result = invoke("calibrate", str(out), "--gold", str(gold), "--key", str(key),
                    "--out", str(report))
    loaded: dict[str, object] = json.loads(report.read_text()) if report.exists() else {}
    return result.exit_code, loaded, result.output
