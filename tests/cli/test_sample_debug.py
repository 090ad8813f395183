"""The operator debug record (issue 28): a real-model-shaped failure (an answer in prose, a
wrong schema, a body cut short) is kept in the ledger with its raw answer and the failing
JSON path, `jurat sample` prints it marked as judge text, and no receipt holds it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from jurat.ledger import decode_receipt, open_ledger
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion

from ._run_support import Run, run
from .conftest import jurat

CAMPAIGN = """\
[campaign]
id = "debug"
kind = "criteria"
allowed_destinations = ["{url}"]

[criteria]
samples = 1
blocker_samples = 1
items = [{{ id = "polite", text = "Is the reply polite?", blocker = true }}]

[[judges]]
id = "j"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
retries = 0
timeout_s = 10
"""

ARTIFACT = """
[[artifacts]]
id = "{id}"
text = "reply {id}"
"""

#: What the judge sends for each artifact: what real models were seen to send.
ANSWERS = {
    "prose": "Sure! The reply seems polite to me. PROSE-MARK-7f3a",
    "schema": '{"verdict": "maybe", "explanation": "SCHEMA-MARK-91c2"}',
    "cut": '{"verdict": "yes", "explanation": "CUT-MARK-44d0 the reply is',
}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")


def misbehaving(request: FakeRequest) -> Reply:
    for artifact, answer in ANSWERS.items():
        if f"reply {artifact}" in request.prompt:
            return completion(answer)
    return completion('{"verdict": "yes", "explanation": "fine"}')


def judged(root: Path) -> Run:
    """One run of the campaign against the misbehaving judge (tests/report reuses it)."""
    with FakeOpenAI(behaviour=misbehaving) as server:
        path = root / "campaign.toml"
        path.write_text(CAMPAIGN.format(url=server.url)
                        + "".join(ARTIFACT.format(id=a) for a in ANSWERS))
        result = run(root, path, server)
    # The judge answered, badly: decided (a failed blocker sample is unsure), not an outage.
    assert result.code in (1, 2), result.out + result.err
    return result


def sample(root: Path, job: str, *options: str) -> tuple[int, str]:
    r = jurat("sample", f"sqlite:///{root / 'l.db'}", job, *options)
    return r.exit_code, r.stdout + r.stderr


def test_each_failure_is_printed_with_its_raw_answer_and_json_path(tmp_path: Path) -> None:
    result = judged(tmp_path)
    expected = {"prose": ("malformed_json", "(root)"), "schema": ("schema_violation", "verdict"),
                "cut": ("malformed_json", "(root)")}
    for artifact, (kind, path) in expected.items():
        vote = result.predicate(artifact)["votes"][0]
        code, out = sample(tmp_path, artifact, "--judge", "j", "--criterion", "polite",
                           "--sample", str(vote["sample"]))
        assert code == 0, out
        assert f"failure: {kind}, JSON path {path}" in out
        # The raw answer whole, marked as what a judge wrote.
        assert f"[written by a judge]\n{ANSWERS[artifact]}" in out
        assert f"answer ({len(ANSWERS[artifact])} bytes, finish stop):" in out
        # The request sent, with the candidate's text inside its data block.
        assert "[written by the candidate]" in out and f"reply {artifact}" in out
    _, schema = sample(tmp_path, "schema", "--judge", "j", "--criterion", "polite",
                       "--sample", "0")
    assert "'maybe' is not one of ['yes', 'no', 'unsure']" in schema


def test_no_receipt_holds_the_raw_answers(tmp_path: Path) -> None:
    judged(tmp_path)
    receipts = [p.read_bytes() for p in (tmp_path / "out").glob("*.sigstore.json")]
    assert len(receipts) == len(ANSWERS)
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        receipts += [decode_receipt(e.payload) for e in ledger.entries(kind="receipt")]
        debug = [e.payload["debug"] for e in ledger.entries(kind="sample_recorded")]
    assert sorted(d["answer"] for d in debug) == sorted(ANSWERS.values())  # kept: the ledger
    for signed in receipts:
        # The statement is base64 inside the envelope: look in both.
        statement = base64.b64decode(json.loads(signed)["dsseEnvelope"]["payload"])
        for text in (signed, statement):
            for mark in (b"PROSE-MARK", b"SCHEMA-MARK", b"CUT-MARK", b"seems polite"):
                assert mark not in text


def test_a_sample_no_option_matches_lists_the_jobs_samples_and_exits_3(tmp_path: Path) -> None:
    judged(tmp_path)
    code, out = sample(tmp_path, "schema")  # its only sample: printed whole
    assert code == 0 and "failure: schema_violation, JSON path verdict" in out, out
    code, out = sample(tmp_path, "nope")
    assert code == 3 and "JOB 'nope'" in out and "(fix:" in out
    code, out = sample(tmp_path, "schema", "--judge", "other")
    assert code == 3, out
    assert "--judge j --criterion polite --sample 0: schema_violation at verdict" in out
