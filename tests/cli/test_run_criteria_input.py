"""Criteria judges see the input and the reference (issue 28): with a ``[subject]``, each
criterion prompt holds the question the subject answered in an INPUT block and the row's
``target`` in a REFERENCE block, both between the call's delimiters; the receipt binds the
target by digest and never its text, and neither the report nor the board shows it.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from jurat.canonical import keyed_digest
from jurat.ledger import open_ledger
from tests.support.cli import invoke
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion

from ._run_support import Run, run

CAMPAIGN = """\
[campaign]
id = "qa"
kind = "criteria"
allowed_destinations = ["{url}"]

[criteria]
samples = 1
blocker_samples = 1
items = [{{ id = "correct", text = "Is the final answer correct for the question?", \
blocker = true }}]

[subject]
provider = "openai-compat"
base_url = "{url}"
model = "fake-subject"
api_key_env = "FAKE_KEY"
prompt = "Answer with a number only: {{input}}"

[[judges]]
id = "j"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
retries = 0
timeout_s = 10

[[artifacts]]
id = "q1"
input = "What is 17 times 3?"
target = "{q1}"

[[artifacts]]
id = "q2"
input = "How many legs do 3 spiders have?"
target_path = "targets/q2.txt"

[[artifacts]]
id = "q3"
input = "What is 2 plus 2?"

[[datasets]]
path = "rows.jsonl"
"""

#: Each question, the subject's answer, and the reference (None: the row has none). The
#: references are worded so that no output, prompt text or id contains them.
ITEMS: dict[str, tuple[str, str, str | None]] = {
    "q1": ("What is 17 times 3?", "51", "Seventeen threes make 51 [ref-q1-7c1e]"),
    "q2": ("How many legs do 3 spiders have?", "24", "Eight legs each: 24 [ref-q2-b04d]"),
    "q3": ("What is 2 plus 2?", "4", None),
    # A row whose reference says the subject's answer is wrong.
    "q4": ("What is 9 minus 10?", "1", "Nine minus ten is -1 [ref-q4-e9a2]"),
}
_BLOCK = re.compile(r"<<<([A-Z]+) ([0-9a-f]{16})>>>\n(.*?)\n<<<END \1 \2>>>", re.DOTALL)
_TAG = re.compile(r"This request's marker tag is ([0-9a-f]{16})\.")
_QUESTION = re.compile(r"Answer with a number only: (.*)")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")


def blocks(prompt: str) -> tuple[str, dict[str, str]]:
    """The call's tag and its data blocks by label; every block carries the one tag."""
    tag = _TAG.search(prompt)
    assert tag is not None, prompt
    found = {}
    for label, nonce, content in _BLOCK.findall(prompt):
        assert nonce == tag.group(1), prompt
        found[label] = content
    return tag.group(1), found


def model(request: FakeRequest) -> Reply | dict[str, Any]:
    """The subject answers each question; the judge says yes exactly when the output is the
    number its reference ends with (no reference: unsure)."""
    if request.json()["model"] == "fake-subject":
        asked = _QUESTION.search(request.prompt)
        assert asked is not None, request.prompt
        answer = next(out for q, out, _ in ITEMS.values() if q == asked.group(1))
        return completion(answer)
    _, found = blocks(request.prompt)
    reference = found.get("REFERENCE")
    if reference is None:
        verdict = "unsure"
    else:
        verdict = "yes" if reference.split(" [")[0].endswith(" " + found["OUTPUT"]) else "no"
    return completion(json.dumps({"verdict": verdict, "explanation": "Compared the answer."}))


def write(tmp: Path, url: str, *, q1: str | None = None) -> Path:
    (tmp / "targets").mkdir(exist_ok=True)
    (tmp / "targets" / "q2.txt").write_text(str(ITEMS["q2"][2]))
    question, _, target = ITEMS["q4"]
    (tmp / "rows.jsonl").write_text(
        json.dumps({"id": "q4", "input": question, "target": target}) + "\n")
    path = tmp / "campaign.toml"
    path.write_text(CAMPAIGN.format(url=url, q1=q1 if q1 is not None else ITEMS["q1"][2]))
    return path


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def keyed(tmp: Path, text: str) -> str:
    """``text``'s keyed digest under the reference key the run created (issue 36)."""
    return keyed_digest((tmp / ".jurat" / "qa.reference.key").read_bytes(), text)


def judge_prompts(server: FakeOpenAI, start: int = 0) -> dict[str, str]:
    """Each judged question's judge prompt, by artifact id."""
    out = {}
    for request in server.received[start:]:
        if request.json()["model"] != "fake-judge":
            continue
        _, found = blocks(request.prompt)
        (aid,) = [a for a, (q, _, _) in ITEMS.items() if q == found["INPUT"]]
        assert aid not in out, aid
        out[aid] = request.prompt
    return out


def test_the_judge_sees_the_question_and_the_reference_and_no_receipt_holds_it(
        tmp_path: Path) -> None:
    with FakeOpenAI(behaviour=model) as server:
        done = run(tmp_path, write(tmp_path, server.url), server)
        prompts = judge_prompts(server)
    assert done.code == 2, done.out + done.err  # q4's answer is wrong: BLOCK
    assert set(prompts) == set(ITEMS)
    for aid, (question, output, target) in ITEMS.items():
        tag, found = blocks(prompts[aid])
        # Byte for byte between this call's delimiters, the output after them.
        assert f"<<<INPUT {tag}>>>\n{question}\n<<<END INPUT {tag}>>>" in prompts[aid]
        assert found["OUTPUT"] == output
        if target is None:
            assert "REFERENCE" not in found
            assert "The reference answer to judge" not in prompts[aid]
        else:
            assert f"<<<REFERENCE {tag}>>>\n{target}\n<<<END REFERENCE {tag}>>>" in prompts[aid]
            # Outside its block the reference appears nowhere in the request.
            assert prompts[aid].count(target) == 1
    verdicts = {aid: done.predicate(aid)["decision"]["rollout"] for aid in ITEMS}
    assert verdicts["q1"] == verdicts["q2"] == "SHIP" and verdicts["q4"] == "BLOCK"

    pub = tmp_path / "keys" / "jurat.pub"
    for aid, (_, _, target) in ITEMS.items():
        predicate = done.predicate(aid)
        assert {v["prompt_id"] for v in predicate["votes"]} == {"jurat/binary-criterion@3"}
        receipt = (tmp_path / "out" / f"{aid}.sigstore.json").read_bytes()
        if target is None:
            assert "target_hmac" not in predicate["inputs"]
        else:
            assert predicate["inputs"]["target_hmac"] == keyed(tmp_path, target)
            assert "target_sha256" not in predicate["inputs"]
            assert target.encode() not in receipt
            assert json.dumps(target)[1:-1].encode() not in receipt
        verified = invoke("verify", str(tmp_path / "out" / f"{aid}.sigstore.json"),
                          "--key", str(pub))
        assert verified.exit_code == 0, verified.stdout
    _assert_shown_nowhere(tmp_path, done)


def _assert_shown_nowhere(tmp: Path, done: Run) -> None:
    """Neither the report nor the board, nor the run's own output, quotes a reference."""
    pub = str(tmp / "keys" / "jurat.pub")
    ledger = f"sqlite:///{tmp / 'l.db'}"
    report = tmp / "report.html"
    shown = invoke("report", ledger, "--html", str(report), "--key", pub)
    assert shown.exit_code == 0, shown.stdout
    board = invoke("board", ledger, "--out", str(tmp / "site"), "--key", pub)
    assert board.exit_code == 0, board.stdout
    pages = {"report": report.read_text(), "run output": done.out + done.err}
    for file in (tmp / "site").rglob("*"):
        if file.is_file():
            pages[f"board {file.name}"] = file.read_text(errors="replace")
    assert len(pages) > 2
    # The pages are about these artifacts: there was something to leak beside.
    assert "q4" in pages["report"]
    for where, text in pages.items():
        for aid, (_, _, target) in ITEMS.items():
            if target is not None:
                assert target not in text and target.split(" [")[1] not in text, (where, aid)


def test_a_corrected_reference_is_judged_again_under_a_new_review(tmp_path: Path) -> None:
    corrected = "Seventeen threes make 52 [ref-q1-fixed]"
    with FakeOpenAI(behaviour=model) as server:
        first = run(tmp_path, write(tmp_path, server.url), server)
        assert first.code == 2, first.out + first.err
        before = first.predicate("q1")
        start = len(server.received)
        second = run(tmp_path, write(tmp_path, server.url, q1=corrected), server)
        again = judge_prompts(server, start)
    assert second.code == 2, second.out + second.err
    # Only q1's reference changed: only q1 is judged again, against the new reference.
    assert set(again) == {"q1"}
    tag, _ = blocks(again["q1"])
    assert f"<<<REFERENCE {tag}>>>\n{corrected}\n<<<END REFERENCE {tag}>>>" in again["q1"]
    after = second.predicate("q1")
    assert after["inputs"]["target_hmac"] == keyed(tmp_path, corrected)
    assert before["inputs"]["target_hmac"] == keyed(tmp_path, str(ITEMS["q1"][2]))
    assert after["review"]["version"] == 2 and after["decision"]["rollout"] == "BLOCK"
    assert second.predicate("q2")["review"]["version"] == 1
    # The first review is kept in the ledger, superseded, not changed.
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        kinds = [e.kind for e in ledger.entries(artifact_id="q1")]
    assert kinds.count("receipt") == 2


@pytest.mark.parametrize(("entry", "field", "fix"), [
    ('target = "x"\ntarget_path = "targets/q2.txt"', "target", "keep one of"),
    ('target_path = "../outside.txt"', "artifacts[0].target_path", ""),
])
def test_a_bad_target_is_refused_before_anything_is_sent(
        tmp_path: Path, entry: str, field: str, fix: str) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    root = tmp_path / "c"
    root.mkdir()
    with FakeOpenAI(behaviour=model) as server:
        path = write(root, server.url)
        text = path.read_text().replace('target = "Seventeen threes make 51 [ref-q1-7c1e]"',
                                        entry)
        path.write_text(text)
        done = run(root, path, server)
        assert server.received == []
    assert done.code == 3, done.out + done.err
    assert field in done.out + done.err and fix in done.out + done.err
    assert not done.has_ledger()


def test_a_target_outside_a_criteria_campaign_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "eq.toml"
    path.write_text("""\
[campaign]
id = "eq"
kind = "equivalence"
allowed_destinations = ["stub"]

[[judges]]
id = "eq"
provider = "stub:always-equivalent"

[[artifacts]]
id = "p1"
a = "12"
b = "12"
target = "12"
""")
    done = run(tmp_path, path, None)
    assert done.code == 3, done.out + done.err
    assert "artifacts[0].target" in done.out + done.err
    assert "fix:" in done.out + done.err and "criteria" in done.out + done.err
    assert not done.has_ledger()
