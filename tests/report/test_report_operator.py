"""`jurat report LEDGER --operator` (issue 28): the operator section shows each refused judge
answer with its raw text and failing JSON path, and each [subject] output next to its
verdict, escaped; the report without the flag, which may be shared, shows none of it, and a
receipts directory has no such section to give (exit 3).
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest

from tests.cli._run_support import run
from tests.cli.test_run_subject_rerun import QUESTIONS, Model, write
from tests.cli.test_sample_debug import ANSWERS, judged
from tests.support.cli import invoke
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")


def report(root: Path, *extra: str) -> tuple[int, str]:
    page = root / "report.html"
    r = invoke("report", f"sqlite:///{root / 'l.db'}", "--html", str(page), *extra)
    assert r.exit_code == 0, r.stdout + r.stderr
    return r.exit_code, page.read_text("utf-8")


def section(page: str) -> str:
    found = re.search(r'<section id="operator">.*?</section>', page, re.S)
    assert found is not None, "no operator section"
    return found.group(0)


def rows(html: str, table: str) -> list[str]:
    found = re.search(rf'<table id="{table}".*?</table>', html, re.S)
    assert found is not None, f"no table#{table}"
    return re.findall(r"<tr data-ledger-seq.*?</tr>", found.group(0), re.S)


def test_refused_answers_are_shown_to_the_operator_with_their_json_path(tmp_path: Path
                                                                        ) -> None:
    judged(tmp_path)
    _, page = report(tmp_path, "--operator")
    shown = rows(section(page), "operator-samples")
    assert len(shown) == len(ANSWERS)
    by_artifact = {a: next(r for r in shown if f">{a} v1<" in r) for a in ANSWERS}
    assert 'data-kind="schema_violation"' in by_artifact["schema"]
    assert "<code>verdict</code>" in by_artifact["schema"]
    for artifact in ("prose", "cut"):
        assert 'data-kind="malformed_json"' in by_artifact[artifact]
        assert "<code>(root)</code>" in by_artifact[artifact]
    for artifact, answer in ANSWERS.items():
        assert f'<pre class="raw-answer">{escape(answer)}</pre>' in by_artifact[artifact]
        assert "jurat sample sqlite:///" in by_artifact[artifact]

    # Without --operator (a page that may be shared): no section and no raw answer.
    _, shared = report(tmp_path)
    assert 'id="operator"' not in shared
    for mark in ("PROSE-MARK", "SCHEMA-MARK", "CUT-MARK", "seems polite"):
        assert mark not in shared


def test_subject_outputs_are_shown_next_to_their_verdicts_escaped(tmp_path: Path) -> None:
    model = Model()
    model.answers["q2"] = "[q2] <script>alert(1)</script> Figure it out."
    with FakeOpenAI(behaviour=model) as server:
        result = run(tmp_path, write(tmp_path, server.url), server)
    assert result.code in (0, 2), result.out + result.err
    _, page = report(tmp_path, "--operator")
    shown = rows(section(page), "subject-outputs")
    assert len(shown) == len(QUESTIONS)
    for q in QUESTIONS:
        (row,) = [r for r in shown if f">{q} v1<" in r]
        verdict = result.predicate(q)["decision"]["rollout"]
        assert f">{verdict}</span>" in row
        assert f'<pre class="subject-output">{escape(model.answers[q])}</pre>' in row
    assert "<script>" not in page
    _, shared = report(tmp_path)
    assert "Kind regards" not in shared and 'id="subject-outputs"' not in shared


def test_operator_section_from_a_receipts_directory_exits_3(tmp_path: Path) -> None:
    judged(tmp_path)
    r = invoke("report", str(tmp_path / "out"), "--html", str(tmp_path / "r.html"),
               "--operator")
    assert r.exit_code == 3
    said = " ".join((r.stdout + r.stderr).split())
    assert "--operator:" in said and "(fix: give the ledger of the run" in said
    assert not (tmp_path / "r.html").exists()
