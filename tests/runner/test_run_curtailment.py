"""`jurat run` with `[criteria] curtail = true`: the same rollouts as drawing every sample,
fewer calls, and receipts that `jurat verify` re-derives (docs/receipt-format.md §8.5)."""

from __future__ import annotations

from pathlib import Path

from jurat.receipts import read_statement

from ._support import copy_example, jurat, keys, verify


def _run(campaign: Path, tmp: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    key, pub = keys(tmp)
    r = jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
              f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    out = {}
    for path in sorted((tmp / "out").glob("*.sigstore.json")):
        assert verify(path, pub, tmp).returncode == 0, path
        out[path.name] = read_statement(path.read_bytes())["predicate"]
    return out


def test_curtailed_run_decides_as_the_full_run_with_fewer_calls(tmp_path: Path) -> None:
    full_dir, cut_dir = tmp_path / "full", tmp_path / "cut"
    full_dir.mkdir()
    cut_dir.mkdir()
    full = _run(copy_example("criteria", full_dir), full_dir)
    campaign = copy_example("criteria", cut_dir)
    campaign.write_text(campaign.read_text().replace(
        "blocker_quorum = 0.8\n", "blocker_quorum = 0.8\ncurtail = true\n"))
    cut = _run(campaign, cut_dir)
    assert full.keys() == cut.keys() and len(full) == 6
    drawn = planned = 0
    for name, pred in cut.items():
        d, f = pred["decision"], full[name]["decision"]
        assert d["rollout"] == f["rollout"]
        assert [(c["verdict"], c["gate"]) for c in d["criteria"]] == [
            (c["verdict"], c["gate"]) for c in f["criteria"]]
        assert "curtailment" not in f and pred["campaign"]["policy"]["criteria"]["curtail"]
        assert d["curtailment"]["rule"] == "jurat.curtail/v1"
        assert d["curtailment"]["drawn"] == len(pred["votes"])
        assert d["curtailment"]["planned"] == len(full[name]["votes"])
        drawn += d["curtailment"]["drawn"]
        planned += d["curtailment"]["planned"]
    assert drawn < planned
