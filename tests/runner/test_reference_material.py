"""Reference material never reaches contributor-visible output (docs/design.md, "Trust
boundaries").

An equivalence campaign whose ``b`` answers are distinctive gold answers is run end to end
through the CLI with the sim judge, the ``numeric-simulated`` stub and a loopback
OpenAI-compatible judge that, like a real model, writes the gold number into NUMERIC_B and
quotes it in its REASON. No receipt payload, report, telemetry line, run output or ledger
entry may contain any of the gold texts, while every decision still verifies.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from jurat.canonical import canonical_json, keyed_digest, sha256_digest
from jurat.receipts import read_statement
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion

from ._support import entries, jurat, keys, verify

#: artifact id -> (a, b, strings of b that must never appear in contributor-visible output)
PAIRS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "settled-different": (
        "So she has 26 left.\n#### 26",
        "Quokka sums 4 * 18457286.5 = 73829146 marbles.\n#### 73,829,146",
        ("Quokka", "18457286", "73829146", "73,829,146"),
    ),
    "settled-equal": (
        "#### 5550123",
        "Numbat counts the stones one by one.\nA: 5,550,123",
        ("Numbat", "5,550,123"),
    ),
    "judged-scale-words": (
        "A: 31 million",
        "Wombat multiplies 91827364 by 1.\nThe answer is 91,827,364.",
        ("Wombat", "91827364", "91,827,364"),
    ),
    "judged-unreadable-b": (
        "#### 12",
        "Bilby: the answer is 64,213,579 or 64,213,580.",
        ("Bilby", "64,213,579", "64213579", "64,213,580", "64213580"),
    ),
    "judged-rounding": (
        "A: 0.33",
        "Echidna splits it three ways: 1/3 each.\nA: 1/3",
        ("Echidna", "three ways"),
    ),
}
SECRETS = sorted({s for _, b, extra in PAIRS.values() for s in (b, *extra)})

_B_BLOCK = re.compile(r"<<<ANSWER B ([0-9a-f]{16})>>>\n(.*?)\n<<<END ANSWER B \1>>>", re.S)
_A_BLOCK = re.compile(r"<<<ANSWER A ([0-9a-f]{16})>>>\n(.*?)\n<<<END ANSWER A \1>>>", re.S)
_LAST = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _last(text: str) -> str:
    found = _LAST.findall(text)
    return found[-1].replace(",", "") if found else "NULL"


def leaky_judge(request: FakeRequest) -> Reply:
    """A model that does what models do: it names both numbers, the reference's included."""
    a, b = _A_BLOCK.search(request.prompt), _B_BLOCK.search(request.prompt)
    assert a is not None and b is not None, request.prompt
    na, nb = _last(a[2]), _last(b[2])
    decision = "EQUIVALENT" if na == nb else "DIFFERENT"
    return completion(
        f"DECISION: {decision}\nREASON: A gives {na}, B says {b[2].splitlines()[0]}\n"
        f"NUMERIC_A: {na}\nNUMERIC_B: {nb}"
    )


CAMPAIGN = """\
[campaign]
id = "gold-eq"
kind = "equivalence"
allowed_destinations = ["sim", "stub", "{url}"]

[equivalence]
votes = 3
min_agreement = 2

[[judges]]
id = "sim"
provider = "sim"
reliability = 0.9
seed = 5

[[judges]]
id = "stub"
provider = "stub:numeric-simulated"

[[judges]]
id = "remote"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
timeout_s = 10
"""


def _campaign(url: str) -> str:
    text = CAMPAIGN.format(url=url)
    for name, (a, b, _) in PAIRS.items():
        text += (
            f"\n[[artifacts]]\nid = {json.dumps(name)}\na = {json.dumps(a)}\n"
            f'b = {json.dumps(b)}\ntruth = "DIFFERENT"\n'
        )
    return text


def _leaks(where: str, text: str) -> list[str]:
    return [f"{where}: {s!r}" for s in SECRETS if s in text]


def test_gold_answers_reach_no_contributor_visible_output(tmp_path: Path) -> None:
    key, pub = keys(tmp_path)
    db, out, telemetry = tmp_path / "l.db", tmp_path / "out", tmp_path / "telemetry.ndjson"
    with FakeOpenAI(behaviour=leaky_judge) as server:
        campaign = tmp_path / "c.toml"
        campaign.write_text(_campaign(server.url))
        run = jurat(
            "run",
            str(campaign),
            "--out",
            str(out),
            "--ledger",
            f"sqlite:///{db}",
            "--key",
            str(key),
            "--telemetry",
            str(telemetry),
            "--quiet",
            cwd=tmp_path,
            env={"FAKE_KEY": "sk-test"},
        )
        assert run.returncode in (0, 1), run.stdout + run.stderr
        prompts = [r.prompt for r in server.received]
    # The judge did read the gold answers: there was something to leak.
    assert len(prompts) == 3 * 3 and all(any(b in p for _, b, _ in PAIRS.values()) for p in prompts)
    report = tmp_path / "report.html"
    rendered = jurat(
        "report", f"sqlite:///{db}", "--html", str(report), "--key", str(pub), cwd=tmp_path
    )
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr

    leaks: list[str] = []
    statements = {}
    for name in PAIRS:
        receipt = out / f"{name}.sigstore.json"
        statement = read_statement(receipt.read_bytes())
        statements[name] = statement["predicate"]
        leaks += _leaks(f"receipt {name}", json.dumps(statement, ensure_ascii=False))
        leaks += _leaks(f"receipt file {name}", receipt.read_text())
        assert verify(receipt, pub, tmp_path).returncode == 0, name
    leaks += _leaks("report", report.read_text())
    lines = telemetry.read_text().splitlines()
    # Three judged pairs, three judges, three samples; then each decision's own event.
    samples = [line for line in lines if json.loads(line)["event"] == "judge.sample"]
    assert len(samples) == 3 * 3 * 3
    assert {json.loads(line)["event"] for line in lines} == {"judge.sample", "judge.decision"}
    for line in lines:
        leaks += _leaks("telemetry", line)
    leaks += _leaks("run output", run.stdout + run.stderr)
    for entry in entries(db):  # the operator's ledger holds the same votes and gates
        leaks += _leaks(f"ledger {entry.kind}", json.dumps(entry.payload, ensure_ascii=False))
    assert not leaks, leaks

    # The decisions are still what the comparison gives, bound to the reference by its keyed
    # digest (issue 36), under the key the run created beside the campaign file.
    secret = (tmp_path / ".jurat" / "gold-eq.reference.key").read_bytes()
    for name in ("settled-different", "settled-equal"):
        pred = statements[name]
        (gate,) = pred["gates"]
        a, b, _ = PAIRS[name]
        assert gate["data"]["reference_hmac"] == keyed_digest(secret, b)
        assert "reference_sha256" not in gate["data"]
        # The same digest the pair's artifact digest is built from (docs/receipt-format.md §11).
        pair = {"a": sha256_digest(a), "b": gate["data"]["reference_hmac"]}
        assert pred["artifact"]["sha256"] == sha256_digest(canonical_json(pair))
        assert pred["votes"] == []
    assert statements["settled-different"]["decision"]["equivalent"] is False
    assert statements["settled-equal"]["decision"]["equivalent"] is True
    for name in ("judged-scale-words", "judged-unreadable-b", "judged-rounding"):
        pred = statements[name]
        assert pred["gates"][0]["outcome"] == "skip"
        assert len(pred["votes"]) == 9
        for vote in pred["votes"]:
            assert vote["prompt_id"] == "jurat/equivalence@1"
            assert vote["answer"] is None or set(vote["answer"]) == {"decision", "numeric_agree"}
        assert {j["prompt_id"] for j in pred["judges"]} == {"jurat/equivalence@1"}
        # What it derives from: seed 002 §4's id, which the changed text no longer carries.
        assert {j["prompt_derived_from"] for j in pred["judges"]} == {
            "invariance-checker/judge/v1"}
        remote = [v["answer"] for v in pred["votes"] if v["judge"] == "remote"]
        assert remote == [{"decision": "DIFFERENT", "numeric_agree": False}] * 3


def test_reference_none_records_both_readings(tmp_path: Path) -> None:
    key, _ = keys(tmp_path)
    text = CAMPAIGN.replace('allowed_destinations = ["sim", "stub", "{url}"]',
                            'allowed_destinations = ["sim"]')
    text = text.split("[[judges]]\nid = \"stub\"")[0].replace(
        "min_agreement = 2\n", 'min_agreement = 2\nreference = "none"\n')
    a, b, _ = PAIRS["settled-different"]
    text += f'\n[[artifacts]]\nid = "two-candidates"\na = {json.dumps(a)}\nb = {json.dumps(b)}\n'
    campaign = tmp_path / "c.toml"
    campaign.write_text(text)
    run = jurat("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
                f"sqlite:///{tmp_path / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    receipt = (tmp_path / "out" / "two-candidates.sigstore.json").read_bytes()
    (gate,) = read_statement(receipt)["predicate"]["gates"]
    assert gate["data"]["reference"] == "none"
    assert gate["data"]["b_value"] == "73829146"
