"""The operator debug record (issue 28): a real-model-shaped failure (an answer in prose, a
wrong schema, a body cut short) is kept in the ledger with its raw answer and the failing
JSON path, `jurat sample` prints it marked as judge text, and no receipt holds it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from jurat.errors import JudgeOutputError
from jurat.judges import RAW_CAP, SampleDebug
from jurat.judges._anthropic import parse_message
from jurat.judges._openai import parse_chat_completion
from jurat.ledger import decode_receipt, open_ledger
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion, reply_json

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


#: HTTP 200 bodies no answer can be read from: prose instead of a chat.completion, a JSON
#: envelope cut off mid-way, and envelopes whose choices are missing or whose content is
#: not text.
_CUT = completion('{"verdict": "yes", "explanation": "fine"}').body
BODIES = {
    "body-prose": b"Sure! BODY-PROSE-MARK the reply is polite.",
    "body-cut": _CUT[: len(_CUT) // 2],
    "body-nochoices": reply_json({"id": "x", "choices": [], "note": "NOCHOICE-MARK"}).body,
    "body-content": reply_json({"choices": [{"message": {"content": ["CONTENT-MARK"]},
                                             "finish_reason": "stop"}]}).body,
}


def bad_bodies(request: FakeRequest) -> Reply:
    for artifact, body in BODIES.items():
        if f"reply {artifact}" in request.prompt:
            return Reply(body=body)
    return completion('{"verdict": "yes", "explanation": "fine"}')


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


def test_an_unusable_body_is_kept_whole_with_the_envelope_path(tmp_path: Path) -> None:
    """A body no answer can be read from is the sample's answer in the debug record (not
    "0 bytes (no text)"), with the envelope member at fault; jurat's own message is not
    printed as a judge's; no receipt holds the body."""
    with FakeOpenAI(behaviour=bad_bodies) as server:
        path = tmp_path / "campaign.toml"
        path.write_text(CAMPAIGN.format(url=server.url)
                        + "".join(ARTIFACT.format(id=a) for a in BODIES))
        result = run(tmp_path, path, server)
    assert result.code in (1, 2), result.out + result.err
    expected = {"body-prose": ("malformed_response", "(root)"),
                "body-cut": ("malformed_response", "(root)"),
                "body-nochoices": ("empty_response", "choices"),
                "body-content": ("malformed_response", "choices/0/message/content")}
    for artifact, (kind, where) in expected.items():
        code, out = sample(tmp_path, artifact, "--judge", "j", "--criterion", "polite",
                           "--sample", "0")
        assert code == 0, out
        assert f"failure: {kind}, JSON path {where}" in out, out
        body = BODIES[artifact]
        assert (f"response body, unusable envelope ({len(body)} bytes, finish not reported):"
                f"\n[written by a judge]\n{body.decode()}") in out, out
        # jurat's own words, unmarked.
        assert "message:\nthe provider's envelope was unusable" in out, out
        assert "(no text)" not in out and "JSON path (none" not in out
    receipts = [p.read_bytes() for p in (tmp_path / "out").glob("*.sigstore.json")]
    assert len(receipts) == len(BODIES)
    for signed in receipts:
        statement = base64.b64decode(json.loads(signed)["dsseEnvelope"]["payload"])
        for text in (signed, statement):
            for mark in (b"BODY-PROSE-MARK", b"NOCHOICE-MARK", b"CONTENT-MARK",
                         b"chatcmpl-fake"):
                assert mark not in text


def test_a_body_above_the_cap_is_kept_cut_with_its_whole_size() -> None:
    body = b"\xff" + b"x" * (RAW_CAP * 2)  # not UTF-8 at the start, twice the cap
    raw = parse_chat_completion(body)
    assert (raw.envelope_error, raw.envelope_path, raw.envelope_bytes) == (
        "malformed_response", "(root)", len(body))
    debug = SampleDebug.of(raw, JudgeOutputError("the provider's envelope was unusable",
                                                 kind="malformed_response", path="(root)"),
                           None)
    assert debug is not None and debug.whole_body and debug.answer_capped
    assert debug.answer is not None and debug.answer.startswith("\ufffdxxx")
    assert len(debug.answer.encode()) <= RAW_CAP and debug.answer_bytes == len(body)
    assert debug.failure is not None and debug.failure.by_jurat
    # The Anthropic parser names the member at fault too.
    tool = parse_message(json.dumps({"content": [{"type": "text", "text": "hi"}],
                                     "stop_reason": "end_turn"}).encode(), "judge_decision")
    assert (tool.envelope_error, tool.envelope_path) == ("no_tool_call", "content")
    assert tool.envelope_body is not None and '"hi"' in tool.envelope_body
    bad = parse_message(json.dumps({"content": [{"type": "tool_use", "name": "t",
                                                 "input": "no"}]}).encode(), "t")
    assert (bad.envelope_error, bad.envelope_path) == ("malformed_response", "content/0/input")
    # A usable answer keeps no body.
    assert parse_chat_completion(_CUT).envelope_body is None
