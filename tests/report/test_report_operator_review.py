"""`jurat report LEDGER --operator` shows offline what the service's reviewer view shows
(issue 37): the operator's record of the hidden tests' run, every judge's rationale, the
duplicate relations and the review history, escaped; the page without the flag shows none
of it."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest

from tests.report.test_report_operator import rows, section
from tests.service._support import BAD, GOOD, MARKER, Env, client, make_env
from tests.support.cli import invoke, isolate_homes

RATIONALE = "stub:always-accept accepts everything it sees."
PRIVATE = "Private note: <b>checked by hand</b>."


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Env, dict[str, str]]:
    """A served ledger: Alice's job adjudicated, sent again (superseding it), Bob's copy of
    her work, and Carol's failing job; returns the env and the job ids by name."""
    isolate_homes(tmp_path, monkeypatch)
    env = make_env(tmp_path)
    alice = env.auth("contributor", "critical", "alice")
    rita = env.auth("reviewer", "critical", "rita")
    jobs: dict[str, str] = {}
    with client(env, ("critical",)) as http:
        def submit(name: str, headers: dict[str, str], text: str, explanation: str) -> str:
            r = http.post("/v1/campaigns/critical/jobs", headers=headers, json={"artifact": {
                "id": "sq", "text": text, "media_type": "text/x-python",
                "explanation": explanation}})
            assert r.status_code == 202, r.text
            jobs[name] = r.json()["job_id"]
            state = http.get(f"/v1/jobs/{jobs[name]}?wait=60", headers=headers).json()
            assert state["status"] == "decided", state
            return jobs[name]

        first = submit("first", alice, GOOD, "It squares x.")
        r = http.post(f"/v1/jobs/{first}/adjudication", headers=rita, json={
            "disposition": "reject", "rationale": PRIVATE, "review_version": 1})
        assert r.status_code == 202, r.text
        submit("again", alice, GOOD, "It squares x, for any int.")
        submit("copy", env.auth("contributor", "critical", "bob"), GOOD, "Mine.")
        submit("failing", env.auth("contributor", "critical", "carol"), BAD, "Doubles x.")
    return env, jobs


def _page(env: Env, *extra: str) -> str:
    page = env.root / "report.html"
    r = invoke("report", env.ledger_url, "--html", str(page), *extra)
    assert r.exit_code == 0, r.stdout + r.stderr
    return page.read_text("utf-8")


def test_the_operator_section_shows_what_a_reviewer_reads(
        served: tuple[Env, dict[str, str]]) -> None:
    env, jobs = served
    shown = section(_page(env, "--operator"))
    # The hidden tests' run, one row per job that ran them, against its latest review.
    checks = {re.search(r'data-job="([0-9a-f]+)"', r).group(1): r  # type: ignore[union-attr]
              for r in rows(shown, "operator-checks")}
    assert set(checks) == set(jobs.values())
    assert "passed (all_passed), 2 of 2 passed" in checks[jobs["first"]]
    assert "not passed: [0, 1]" in checks[jobs["failing"]]
    assert ">alice:sq v2<" in checks[jobs["first"]]  # its latest review: the adjudication
    assert '<pre class="check-record">' in checks[jobs["first"]]
    assert "jurat.check-record/v1" in checks[jobs["first"]]
    # Every valid judge answer, with its rationale (Carol's were not asked: a veto).
    rationales = rows(shown, "operator-rationales")
    assert len(rationales) == 3, rationales
    for row in rationales:
        assert f'<pre class="judge-rationale">{escape(RATIONALE)}</pre>' in row
        assert "disposition accept" in row
    # Bob's copy of Alice's work names her job (its receipt's inputs.duplicate_of).
    (copied,) = rows(shown, "operator-duplicates")
    assert f'data-job="{jobs["copy"]}"' in copied and jobs["first"][:16] in copied
    # The review history: every version, its job, and who settled it.
    history = rows(shown, "operator-history")
    alice = [r for r in history if ">alice:sq v" in r]
    # In the page's order: the current review first, then the ones it superseded.
    assert [re.search(r'data-review="(\d+)"', r).group(1)  # type: ignore[union-attr]
            for r in alice] == ["3", "2", "1"]
    settled = next(r for r in alice if 'data-review="2"' in r)
    assert "adjudicated: reject by rita at " in settled and jobs["first"][:16] in settled
    assert "the panel" in next(r for r in alice if 'data-review="3"' in r)
    assert jobs["again"][:16] in next(r for r in alice if 'data-review="3"' in r)
    # The private rationale is shown escaped; the hidden tests are not on the page.
    assert escape(PRIVATE) in shown and PRIVATE not in shown
    assert MARKER not in shown and "test_small" not in shown


def test_the_page_without_the_flag_shows_none_of_it(
        served: tuple[Env, dict[str, str]]) -> None:
    env, _ = served
    page = _page(env)
    assert 'id="operator"' not in page
    for mark in (RATIONALE, "check-record", "jurat.check-record/v1", "It squares x",
                 escape(PRIVATE), MARKER):
        assert mark not in page, mark
