"""``jurat calibrate`` on the GSM8K equivalence gold: the sim panel's kappa is what its
declared reliability predicts, and a judge that always says EQUIVALENT is flagged.

The pairs are tests/checks/data/gsm8k_subset.jsonl (model solution vs ground truth, with
OpenAI's ``is_correct`` as gold). The sim judges aim at the gold label (``truth``) and
hit it with probability ``reliability``, spreading misses evenly over the two other
decisions (DIFFERENT or ABSTAIN for an EQUIVALENT pair): so each judge's expected
agreement with gold is known in closed form, and the measured kappa must be near it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from jurat.calibrate import UNDECIDED, agreement, load_gold
from jurat.cli import ExitCode
from jurat.errors import ConfigError
from tests.support.cli import invoke, isolate_homes

DATA = Path(__file__).resolve().parents[1] / "checks" / "data" / "gsm8k_subset.jsonl"
RELIABILITY = 0.85

CAMPAIGN = """\
[campaign]
id = "gsm8k-calibration"
kind = "equivalence"
allowed_destinations = ["sim", "stub"]

[equivalence]
votes = 1
min_agreement = 1
deterministic_first = false
reference = "none"

{judges}

[[datasets]]
path = "pairs.jsonl"
"""

SIM_PANEL = "\n".join(
    f'[[judges]]\nid = "sim-{k}"\nprovider = "sim"\nmodel = "sim-{k}"\nseed = {k}\n'
    f"reliability = {RELIABILITY}\n"
    for k in (1, 2, 3)
)
ALWAYS_EQUIVALENT = '[[judges]]\nid = "yes-man"\nprovider = "stub:always-equivalent"\n'


@pytest.fixture(autouse=True)
def _homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)


def _pairs() -> list[dict[str, object]]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def _run(tmp_path: Path, judges: str) -> tuple[Path, Path, Path]:
    """The campaign run with ``judges``: (receipts dir, gold file, public key)."""
    camp = tmp_path / "camp"
    camp.mkdir()
    pairs = _pairs()
    with (camp / "pairs.jsonl").open("w") as rows, (tmp_path / "gold.jsonl").open("w") as gold:
        for p in pairs:
            pid = f"gsm-{p['index']}-{p['model']}"
            label = "EQUIVALENT" if p["is_correct"] else "DIFFERENT"
            rows.write(json.dumps({"id": pid, "a": p["solution"], "b": p["ground_truth"],
                                   "truth": label}) + "\n")
            gold.write(json.dumps({"id": pid, "label": p["is_correct"]}) + "\n")
    (camp / "campaign.toml").write_text(CAMPAIGN.format(judges=judges))
    assert invoke("keygen", "--out", str(tmp_path / "keys")).exit_code == 0
    result = invoke("run", str(camp / "campaign.toml"), "--out", str(tmp_path / "out"),
                    "--ledger", f"sqlite:///{tmp_path / 'ledger.db'}",
                    "--key", str(tmp_path / "keys" / "jurat.key"), "--quiet")
    assert result.exit_code in (ExitCode.OK, ExitCode.ESCALATE), result.output
    return tmp_path / "out", tmp_path / "gold.jsonl", tmp_path / "keys" / "jurat.pub"


def _expected_kappa(prevalence: float, r: float) -> float:
    """Kappa of a judge right with probability r, wrong evenly over the two other labels."""
    miss = (1 - r) / 2
    said_eq = prevalence * r + (1 - prevalence) * miss
    said_diff = (1 - prevalence) * r + prevalence * miss
    chance = prevalence * said_eq + (1 - prevalence) * said_diff
    return (r - chance) / (1 - chance)


def _calibrate(out: Path, gold: Path, key: Path, report: Path) -> tuple[int, dict[str, object]]:
    result = invoke("calibrate", str(out), "--gold", str(gold), "--key", str(key),
                    "--out", str(report))
    return result.exit_code, json.loads(report.read_text())


def test_the_sim_panel_agrees_with_gold_as_its_reliability_predicts(tmp_path: Path) -> None:
    out, gold, key = _run(tmp_path, SIM_PANEL)
    code, report = _calibrate(out, gold, key, tmp_path / "calibration.json")
    pairs = _pairs()
    prevalence = sum(1 for p in pairs if p["is_correct"]) / len(pairs)
    expected = _expected_kappa(prevalence, RELIABILITY)
    raters = {r["rater"]: r for r in report["raters"]}  # type: ignore[union-attr]
    assert list(raters) == ["sim-1", "sim-2", "sim-3", "decision"]
    assert len(report["receipts"]) == len(pairs)  # type: ignore[arg-type]
    assert report["gold_sha256"] == hashlib.sha256(gold.read_bytes()).hexdigest()
    for judge in ("sim-1", "sim-2", "sim-3"):
        r = raters[judge]
        assert r["items"] == len(pairs)
        kappa = r["kappa"]
        assert kappa["low"] <= expected <= kappa["high"], (judge, kappa, expected)
        assert abs(kappa["value"] - expected) < 0.1
        assert r["alpha"]["low"] < r["alpha"]["value"] < r["alpha"]["high"]
        assert r["flags"] == []
        assert 0.75 < r["accuracy"] < 0.95
    # The folded decision (more yes than no among three judges) is more often right than one.
    folded = raters["decision"]
    assert folded["accuracy"] > max(raters[j]["accuracy"] for j in ("sim-1", "sim-2", "sim-3"))
    assert folded["flags"] == []
    assert code == ExitCode.OK


def test_an_always_equivalent_judge_is_flagged(tmp_path: Path) -> None:
    out, gold, key = _run(tmp_path, ALWAYS_EQUIVALENT)
    code, report = _calibrate(out, gold, key, tmp_path / "calibration.json")
    judge = report["raters"][0]  # type: ignore[index]
    assert judge["rater"] == "yes-man"
    assert judge["kappa"]["value"] == 0
    assert any(f.startswith("constant: EQUIVALENT") for f in judge["flags"])
    assert any(f.startswith("chance") for f in judge["flags"])
    assert code == ExitCode.ESCALATE


def test_a_tampered_receipt_stops_the_calibration(tmp_path: Path) -> None:
    out, gold, key = _run(tmp_path, SIM_PANEL)
    receipt = sorted(out.glob("*.sigstore.json"))[0]
    doc = json.loads(receipt.read_bytes())
    payload = bytearray(base64.b64decode(doc["dsseEnvelope"]["payload"]))
    at = payload.index(b'"equivalent":') + len(b'"equivalent":')
    payload[at:at + 4] = b"null" if payload[at:at + 4] != b"null" else b"true"
    doc["dsseEnvelope"]["payload"] = base64.b64encode(bytes(payload)).decode()
    receipt.write_text(json.dumps(doc))
    result = invoke("calibrate", str(out), "--gold", str(gold), "--key", str(key))
    assert result.exit_code == ExitCode.ESCALATE
    assert receipt.name in result.output and "signature" in result.output


def test_a_gold_label_the_kind_does_not_have_is_named(tmp_path: Path) -> None:
    out, gold, key = _run(tmp_path, ALWAYS_EQUIVALENT)
    rows = gold.read_text().splitlines()
    first = json.loads(rows[0])
    rows[0] = json.dumps({"id": first["id"], "label": "maybe"})
    gold.write_text("\n".join(rows) + "\n")
    result = invoke("calibrate", str(out), "--gold", str(gold), "--key", str(key))
    assert result.exit_code == ExitCode.INPUT
    assert "`label`" in result.output and "maybe" in result.output
    assert "EQUIVALENT" in result.output


@pytest.mark.parametrize(
    ("line", "field"),
    [('{"id": "a", "label": "x", "extra": 1}', "extra"), ('{"label": "x"}', "id"),
     ('{"id": "a", "label": 3}', "label"), ("[1]", "JSON object")],
)
def test_a_bad_gold_row_names_its_line_and_field(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text('{"id": "ok", "label": "A"}\n' + line + "\n")
    with pytest.raises(ConfigError) as caught:
        load_gold(path)
    assert f"{path}:2" in str(caught.value) and field in str(caught.value)


def test_undecided_is_a_category_and_never_counts_as_agreement() -> None:
    gold = ["EQUIVALENT"] * 5 + ["DIFFERENT"] * 5
    rated: list[str | None] = [None] * 10
    result = agreement("abstainer", ("EQUIVALENT", "DIFFERENT"), gold, rated)
    assert result.coverage == 0 and result.accuracy == 0
    assert result.categories[-1] == UNDECIDED
    assert result.confusion == ((0, 0, 5), (0, 0, 5), (0, 0, 0))
    assert result.flags  # constant, and no better than chance


def test_perfect_agreement_has_kappa_and_alpha_one() -> None:
    gold = ["A", "B", "tie"] * 10
    result = agreement("oracle", ("A", "B", "tie"), gold, list(gold))
    assert result.kappa.value == pytest.approx(1.0)
    assert result.alpha.value == pytest.approx(1.0)
    assert result.flags == ()
