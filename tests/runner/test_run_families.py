"""`jurat run`: three judges on one model family escalate at the standard tier and say why;
the same panel as three families accepts (seed 000, docs/receipt-format.md §8.7 case 1a)."""

from __future__ import annotations

import json
from pathlib import Path

from jurat.receipts import read_statement

from ._support import copy_example, jurat, keys, verify


def _decision(tmp: Path, campaign: Path, artifact: str) -> dict:  # type: ignore[type-arg]
    key, pub = keys(tmp)
    r = jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
              f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    receipt = tmp / "out" / f"{artifact}.sigstore.json"
    assert verify(receipt, pub, tmp).returncode == 0
    pred = read_statement(receipt.read_bytes())["predicate"]
    assert pred["fold_rule"] == "jurat.fold/v2"
    return pred  # type: ignore[no-any-return]


def test_one_family_escalates_three_families_accept(tmp_path: Path) -> None:
    three, one = tmp_path / "three", tmp_path / "one"
    three.mkdir()
    one.mkdir()
    pred = _decision(three, copy_example("rubric", three), "c1-canonical")
    assert pred["decision"]["disposition"] == "accept"
    assert pred["decision"]["independent_families"] == 3
    assert "model_family" not in json.dumps(pred["campaign"]["policy"])

    campaign = copy_example("rubric", one)
    campaign.write_text(campaign.read_text().replace(
        'provider = "sim"\n', 'provider = "sim"\nmodel_family = "qwen2.5"\n'))
    pred = _decision(one, campaign, "c1-canonical")
    d = pred["decision"]
    assert d["disposition"] == "escalate"
    assert (d["independent_votes"], d["independent_families"]) == (3, 1)
    assert d["reasons"] == [
        "3 votes from 1 model family; the standard tier needs 3 independent families"]


def _refused(tmp: Path, campaign: Path) -> str:
    key, _ = keys(tmp)
    r = jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
              f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp)
    assert r.returncode == 3, r.stdout + r.stderr
    assert not (tmp / "l.db").exists()
    return r.stderr


def test_one_model_declared_as_three_families_is_refused(tmp_path: Path) -> None:
    # Issue 27: three sim judges with one model and one seed, declared fam1..fam3, were
    # accepted as three independent witnesses. Families may join models, never split one.
    campaign = copy_example("rubric", tmp_path)
    text = campaign.read_text()
    for n in (1, 2, 3):
        text = text.replace(f"seed = {n}\n", f'seed = 7\nmodel_family = "fam{n}"\n')
    campaign.write_text(text)
    said = _refused(tmp_path, campaign)
    assert "'sim-a' and 'sim-b' are one model" in said and "two families" in said
    assert 'model_family = "fam1"' in said


def test_one_endpoint_and_model_declared_as_two_families_is_refused(tmp_path: Path) -> None:
    campaign = copy_example("rubric", tmp_path)
    text = campaign.read_text()
    for judge in ("sim-a", "sim-b"):
        text = text.replace(
            f'id = "{judge}"\nprovider = "sim"\n',
            f'id = "{judge}"\nprovider = "openai-compat"\nbase_url = "http://127.0.0.1:9/v1"\n'
            f'model = "qwen2.5"\nmodel_family = "{judge}-family"\n')
    text = text.replace('allowed_destinations = [',
                        'allowed_destinations = ["http://127.0.0.1:9/v1", ')
    campaign.write_text(text)
    said = _refused(tmp_path, campaign)
    assert "'sim-a' and 'sim-b' are one model" in said
