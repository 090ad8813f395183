"""Seed 000's reasoning-depth rubric (examples/reasoning-depth/): six criteria beyond the ARCV
four, answered in the general schema, folded over their ids, and verified from the receipt."""

from __future__ import annotations

import shutil
from pathlib import Path

from jurat.judges import ARCV_SCHEMA_ID
from jurat.judges._general import GENERAL_SCHEMA_ID
from jurat.receipts import read_statement

from ._support import jurat, keys, verify

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "reasoning-depth"
IDS = ["assumptions", "logical_validity", "mathematics", "complexity", "correction_quality",
       "calibration"]


def test_reasoning_depth_rubric_runs_and_verifies(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "rd")
    key, pub = keys(tmp_path)
    r = jurat("run", str(tmp_path / "rd" / "campaign.toml"), "--out", str(tmp_path / "out"),
              "--ledger", f"sqlite:///{tmp_path / 'l.db'}", "--key", str(key), "--quiet",
              cwd=tmp_path)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    # Its artifacts do not make the better answers the longer ones (see the campaign).
    assert "bias monitor: no alarm" in r.stdout, r.stdout
    receipts = sorted((tmp_path / "out").glob("*.sigstore.json"))
    assert len(receipts) == 4
    outcomes = {}
    for receipt in receipts:
        v = verify(receipt, pub, tmp_path)
        assert v.returncode == 0, v.stdout + v.stderr
        predicate = read_statement(receipt.read_bytes())["predicate"]
        outcomes[predicate["artifact"]["id"]] = predicate["decision"]["disposition"]
        decision = predicate["decision"]
        assert sorted(decision["scores"]) == sorted(IDS)  # the panel's median per criterion
        valid = [v for v in predicate["votes"] if v["answer"] is not None]
        assert valid and all(sorted(v["answer"]["scores"]) == sorted(IDS) for v in valid)
        assert {v["prompt_id"] for v in predicate["votes"]} == {
            "jurat/judge-decision-general@2"}
    assert outcomes["fib-hand-waving"] == "reject"
    assert outcomes["fib-polished-bug"] == "reject"
    assert outcomes["fib-rigorous"] in ("accept", "escalate")


def test_general_schema_takes_exactly_the_ids() -> None:
    import json

    import pytest

    from jurat.errors import JuratError
    from jurat.judges import validate_answer

    base = {"artifact_sha256": "a" * 64, "preference": "A", "hard_gates_pass": True,
            "disposition": "accept", "evidence_indices": [0],
            "explanation": "A sufficiently long explanation."}
    ids = tuple(IDS)
    ok = {**base, "scores": dict.fromkeys(IDS, 4)}
    assert validate_answer("rubric", json.dumps(ok), artifact_sha256="a" * 64, bundle_size=1,
                           score_ids=ids)["scores"]["calibration"] == 4
    for bad in ({**dict.fromkeys(IDS, 4), "correctness": 5},  # an extra key
                dict.fromkeys(IDS[:-1], 4),  # one missing
                {**dict.fromkeys(IDS, 4), "calibration": 6}):  # out of range
        with pytest.raises(JuratError):
            validate_answer("rubric", json.dumps({**base, "scores": bad}),
                            artifact_sha256="a" * 64, bundle_size=1, score_ids=ids)
    # The ARCV answer is refused for a general rubric, and the ARCV path is unchanged.
    arcv = {**base, "scores": {"correctness": 5, "reasoning": 4, "adherence": 4,
                               "presentation": 4}}
    with pytest.raises(JuratError):
        validate_answer("rubric", json.dumps(arcv), artifact_sha256="a" * 64, bundle_size=1,
                        score_ids=ids)
    validate_answer("rubric", json.dumps(arcv), artifact_sha256="a" * 64, bundle_size=1)
    assert GENERAL_SCHEMA_ID != ARCV_SCHEMA_ID
