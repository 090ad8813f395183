"""`jurat run` end to end on the rubric quickstart, with sim judges and stubs."""

from __future__ import annotations

import json
from pathlib import Path

from jurat.receipts import read_statement

from ._support import copy_example, entries, jurat, keys, verify


def _run(campaign: Path, tmp: Path, *extra: str):  # type: ignore[no-untyped-def]
    key, _ = keys(tmp)
    return jurat("run", str(campaign), "--out", str(tmp / "out"), "--ledger",
                 f"sqlite:///{tmp / 'l.db'}", "--key", str(key), "--quiet", *extra, cwd=tmp)


def _decision(tmp: Path, artifact: str) -> dict:  # type: ignore[type-arg]
    signed = (tmp / "out" / f"{artifact}.sigstore.json").read_bytes()
    return read_statement(signed)["predicate"]["decision"]  # type: ignore[no-any-return]


def test_quickstart_rubric_run_verifies_and_vetoes(tmp_path: Path) -> None:
    campaign = copy_example("rubric", tmp_path)
    r = _run(campaign, tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr  # c3 fails its test: a reject
    _, pub = keys(tmp_path)
    receipts = sorted((tmp_path / "out").glob("*.sigstore.json"))
    assert [p.name.split(".")[0] for p in receipts] == [
        "c1-canonical", "c2-accumulate", "c3-off-by-one", "c4-lint", "c5-hostile"]
    for receipt in receipts:
        v = verify(receipt, pub, tmp_path)
        assert v.returncode == 0, v.stdout + v.stderr
    c3 = _decision(tmp_path, "c3-off-by-one")
    assert c3["disposition"] == "reject" and "tests.pass" in c3["gates_failed"]
    c5 = _decision(tmp_path, "c5-hostile")
    assert c5["disposition"] == "reject"
    assert _decision(tmp_path, "c1-canonical")["disposition"] in ("accept", "escalate")
    pred = read_statement((tmp_path / "out" / "c1-canonical.sigstore.json").read_bytes())[
        "predicate"]
    assert pred["replay_fidelity_level"] in ("RF-1", "RF-2")
    assert {j["provider"] for j in pred["judges"]} == {"sim"}
    assert len(pred["votes"]) == 15


def test_always_accept_judge_never_accepts_a_failing_test(tmp_path: Path) -> None:
    campaign = copy_example("rubric", tmp_path)
    text = campaign.read_text().replace('provider = "sim"\n', 'provider = "stub:always-accept"\n')
    text = text.replace('allowed_destinations = ["sim"]', 'allowed_destinations = ["stub"]')
    campaign.write_text(text)
    r = _run(campaign, tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert _decision(tmp_path, "c3-off-by-one")["disposition"] == "reject"
    assert _decision(tmp_path, "c5-hostile")["disposition"] == "reject"
    assert _decision(tmp_path, "c1-canonical")["disposition"] == "accept"


def test_second_run_reuses_receipts_and_changed_artifact_supersedes(tmp_path: Path) -> None:
    campaign = copy_example("rubric", tmp_path)
    assert _run(campaign, tmp_path).returncode == 2
    first = (tmp_path / "out" / "c1-canonical.sigstore.json").read_bytes()
    samples = len(entries(tmp_path / "l.db", "sample_recorded"))
    r = _run(campaign, tmp_path)
    assert r.returncode == 2
    assert (tmp_path / "out" / "c1-canonical.sigstore.json").read_bytes() == first
    assert len(entries(tmp_path / "l.db", "sample_recorded")) == samples  # nothing resampled
    src = campaign.parent / "contributions" / "c1_canonical.py"
    src.write_text(src.read_text() + "\n# a comment changes the bytes\n")
    assert _run(campaign, tmp_path).returncode == 2
    second = read_statement((tmp_path / "out" / "c1-canonical.sigstore.json").read_bytes())
    review = second["predicate"]["review"]
    from jurat.canonical import sha256_digest

    assert review["version"] == 2 and review["supersedes"] == sha256_digest(first)
    assert len(entries(tmp_path / "l.db", "supersession")) == 1
    # The report lists both review versions, the earlier one tagged.
    page = tmp_path / "report.html"
    shown = jurat("report", f"sqlite:///{tmp_path / 'l.db'}", "--html", str(page), cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "superseded by v2" in page.read_text()


def test_replay_and_report(tmp_path: Path) -> None:
    campaign = copy_example("rubric", tmp_path)
    assert _run(campaign, tmp_path).returncode == 2
    _, pub = keys(tmp_path)
    r = jurat("replay", str(tmp_path / "l.db"), "--key", str(pub), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all decisions re-derive" in r.stdout
    html = tmp_path / "r.html"
    r = jurat("report", str(tmp_path / "l.db"), "--html", str(html), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "c3-off-by-one" in html.read_text()


def test_telemetry_has_one_event_per_sample(tmp_path: Path) -> None:
    campaign = copy_example("rubric", tmp_path)
    path = tmp_path / "t.ndjson"
    assert _run(campaign, tmp_path, "--telemetry", str(path)).returncode == 2
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    samples = [e for e in events if e.get("event") == "judge.sample"]
    assert len(samples) == len(entries(tmp_path / "l.db", "sample_recorded"))
