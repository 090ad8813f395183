"""Dataset column mapping (issue 29): a Hugging Face-style CSV export
(``question,answer,model_output,id,split``) is judged as it is, its columns mapped with
``[[datasets]] fields``, its other columns kept as metadata that reaches neither the judge
nor a receipt, and one answer given to two questions is two artifacts, each judged against
its own question.

The judge is a loopback OpenAI-compatible server that records every request; it says yes
when the output is the number its reference ends with.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from jurat.canonical import keyed_digest
from tests.receipts.doc_verifier import verify_receipt
from tests.support.cli import invoke
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion

from ._run_support import run

CAMPAIGN = """\
[campaign]
id = "hf-export"
kind = "criteria"
allowed_destinations = ["{url}"]

[criteria]
samples = 1
blocker_samples = 1
items = [{{ id = "correct", text = "Is the answer correct for the question?", blocker = true }}]

[[judges]]
id = "j"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
retries = 0
timeout_s = 10

[[datasets]]
path = "export.csv"
fields = {{ input = "question", text = "model_output", target = "answer" }}
{extra}
"""

#: Rows as a Hugging Face export writes them. hf-2 and hf-3 give the same answer (4) to two
#: questions: right for one, wrong for the other. The split values are marked so that a
#: leak into a request or a receipt is found.
ROWS = [
    {"question": "What is 17 times 3?", "answer": "Seventeen threes: 51", "model_output": "51",
     "id": "hf-1", "split": "test-split-7f3a"},
    {"question": "What is 2 plus 2?", "answer": "Two and two: 4", "model_output": "4",
     "id": "hf-2", "split": "test-split-7f3a"},
    {"question": "What is 3 plus 2?", "answer": "Three and two: 5", "model_output": "4",
     "id": "hf-3", "split": "dev-split-c41e"},
]
_BLOCK = re.compile(r"<<<([A-Z]+) ([0-9a-f]{16})>>>\n(.*?)\n<<<END \1 \2>>>", re.DOTALL)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")


def _blocks(prompt: str) -> dict[str, str]:
    return {label: content for label, _, content in _BLOCK.findall(prompt)}


def judge(request: FakeRequest) -> Reply | dict[str, Any]:
    found = _blocks(request.prompt)
    right = found["REFERENCE"].endswith(" " + found["OUTPUT"])
    return completion(json.dumps({"verdict": "yes" if right else "no",
                                  "explanation": "Compared with the reference."}))


def _write(tmp: Path, url: str, extra: str = "") -> Path:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["question", "answer", "model_output", "id", "split"])
    writer.writeheader()
    writer.writerows(ROWS)
    (tmp / "export.csv").write_text(out.getvalue())
    path = tmp / "campaign.toml"
    path.write_text(CAMPAIGN.format(url=url, extra=extra))
    return path


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_mapped_export_is_judged_question_by_question(tmp_path: Path) -> None:
    with FakeOpenAI(behaviour=judge) as server:
        done = run(tmp_path, _write(tmp_path, server.url), server)
        prompts = [r.prompt for r in server.received]
    assert done.code == 2, done.out + done.err  # hf-3's 4 is wrong for 3 plus 2: BLOCK
    assert len(prompts) == 3
    by_question = {_blocks(p)["INPUT"]: _blocks(p) for p in prompts}
    for row in ROWS:
        # Each row's own question, output and reference, in their blocks.
        seen = by_question[row["question"]]
        assert (seen["OUTPUT"], seen["REFERENCE"]) == (row["model_output"], row["answer"])
    for prompt in prompts:
        assert "split" not in prompt and "test-split-7f3a" not in prompt
        assert "dev-split-c41e" not in prompt
    rollouts = {row["id"]: done.predicate(row["id"])["decision"]["rollout"] for row in ROWS}
    assert rollouts == {"hf-1": "SHIP", "hf-2": "SHIP", "hf-3": "BLOCK"}
    jobs = set()
    for row in ROWS:
        predicate = done.predicate(row["id"])
        receipt = (tmp_path / "out" / f"{row['id']}.sigstore.json").read_bytes()
        assert predicate["inputs"]["input_sha256"] == _sha256(row["question"])
        # The reference by its keyed digest (issue 36), under the key the run created.
        secret = (tmp_path / ".jurat" / "hf-export.reference.key").read_bytes()
        assert predicate["inputs"]["target_hmac"] == keyed_digest(secret, row["answer"])
        assert row["split"].encode() not in receipt and b"split" not in receipt
        assert row["answer"].encode() not in receipt
        jobs.add(predicate["inputs"]["job_id"])
        verified = invoke("verify", str(tmp_path / "out" / f"{row['id']}.sigstore.json"),
                          "--key", str(tmp_path / "keys" / "jurat.pub"))
        assert verified.exit_code == 0, verified.stdout
        # The doc-driven verifier (docs/receipt-format.md alone) accepts inputs.input_sha256.
        verify_receipt(receipt, (tmp_path / "keys" / "jurat.pub").read_bytes(),
                       artifact_sha256=_sha256(row["model_output"]))
    assert len(jobs) == 3  # hf-2 and hf-3: one answer, two questions, two jobs
    assert "test-split-7f3a" not in done.ledger_text()

    # The same command again: every job is found in the ledger, nothing is asked.
    with FakeOpenAI(behaviour=judge) as server:
        again = run(tmp_path, tmp_path / "campaign.toml", server)
        assert server.received == []
    assert again.code == 2 and "0 drawn in this run, 3 reused" in again.out


def test_extra_columns_refused_only_when_asked(tmp_path: Path) -> None:
    with FakeOpenAI(behaviour=judge) as server:
        refused = run(tmp_path, _write(tmp_path, server.url, 'extra = "refuse"'), server)
        assert server.received == []
    assert refused.code == 3
    assert "unknown column 'split' in the header" in refused.err
    assert 'extra = "keep"' in refused.err and "fields" in refused.err
    assert "fix: remove it" not in refused.err
    assert not refused.has_ledger()


def test_rows_of_one_answer_to_one_question_are_still_duplicates(tmp_path: Path) -> None:
    rows = [*ROWS, {**ROWS[1], "id": "hf-2-copy"}]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(ROWS[0]))
    writer.writeheader()
    writer.writerows(rows)
    campaign = _write(tmp_path, "http://127.0.0.1:9/v1")
    (tmp_path / "export.csv").write_text(out.getvalue())
    done = run(tmp_path, campaign, None)
    assert done.code == 3
    assert "artifact 'hf-2-copy' has the same content as 'hf-2'" in done.err
    assert not done.has_ledger()
