"""References stay hidden (seed 000; docs/receipt-format.md §11): failing code is submitted
against hidden tests that carry a marker, and the marker (and the tests' assertion text)
is in nothing the contributor can read: responses, errors, receipts, proofs."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from jurat.campaign import load_campaign
from jurat.errors import CampaignError
from jurat.models import Campaign
from jurat.service._test_lines import reference_lines
from tests.service._support import (
    BAD,
    HIDDEN_TESTS,
    MARKER,
    Env,
    artifact,
    client,
    wait_decided,
)
from tests.support.cli import invoke

#: Reference material: the marker, and assertion text of the hidden tests.
SECRETS = (MARKER, "square(12) ==", "square(3) == 9", "expected[")


def _decoded(text: str) -> str:
    """The text with every base64 string inside a JSON document decoded, recursively
    (receipts carry their payload in base64; proofs carry receipts)."""
    out = [text]

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str) and len(value) > 40:
            try:
                raw = base64.b64decode(value, validate=True).decode("utf-8")
            except ValueError:
                return
            out.append(raw)
            try:
                walk(json.loads(raw))
            except ValueError:
                pass

    try:
        walk(json.loads(text))
    except ValueError:
        pass
    return "\n".join(out)


def test_the_hidden_tests_reach_no_contributor_visible_output(env: Env) -> None:
    alice = env.auth("contributor", "code", "alice")
    seen: list[tuple[str, str]] = []

    def read(label: str, response: Any) -> Any:
        seen.append((label, _decoded(response.text)))
        return response

    with client(env, ("code",), checkpoint_interval=0.1) as http:
        r = read("submit", http.post("/v1/campaigns/code/jobs", headers=alice,
                                     json=artifact("sq", BAD, "text/x-python")))
        assert r.status_code == 202, r.text
        job = r.json()["job_id"]
        state = wait_decided(http, job, alice)
        seen.append(("job", json.dumps(state)))
        assert state["status"] == "decided", state
        # The failure is recorded as what it is: a required gate failed (test ids only).
        assert state["decision"]["disposition"] == "reject"
        assert "tests.pass" in state["decision"]["gates_failed"]
        read("receipt", http.get(f"/v1/jobs/{job}/receipt", headers=alice))
        read("receipt v1", http.get(f"/v1/jobs/{job}/receipt?version=1", headers=alice))
        for _ in range(100):
            proof = http.get(f"/v1/jobs/{job}/proof", headers=alice)
            if proof.status_code == 200:
                break
            import time

            time.sleep(0.1)
        read("proof", proof)
        assert proof.status_code == 200
        read("campaigns", http.get("/v1/campaigns", headers=alice))
        read("checkpoint", http.get("/v1/checkpoint", headers=alice))
        # Errors a contributor can provoke.
        read("bad version", http.get(f"/v1/jobs/{job}/receipt?version=7", headers=alice))
        read("bad body", http.post("/v1/campaigns/code/jobs", headers=alice,
                                   json={"artifact": {"id": "x"}}))
        read("bad b64", http.post("/v1/campaigns/code/jobs", headers=alice, json={
            "artifact": {"id": "x", "content_base64": "%%%"}}))
        read("decisions", http.get("/v1/campaigns/code/decisions", headers=alice))
        read("adjudicate", http.post(f"/v1/jobs/{job}/adjudication", headers=alice,
                                     json={"disposition": "accept", "rationale": "x"}))
    leaks = [(label, s) for label, text in seen for s in SECRETS if s in text]
    assert not leaks, leaks
    # And the receipt says why without quoting: the failing test ids, not their asserts.
    receipt = next(text for label, text in seen if label == "receipt")
    assert "test_small" in receipt or "tests.pass" in receipt


# -- how the hidden tests are read ---------------------------------------------------------


def _code_campaign(env: Env, extra: str = "") -> Campaign:
    path = env.campaigns["code"]
    path.write_text(path.read_text() + extra)
    return load_campaign(path, served=True)


def test_the_hidden_tests_are_read_within_the_intake_cap(env: Env) -> None:
    # Within the cap, the substantive lines are the references.
    assert any(MARKER in line for line in reference_lines(_code_campaign(env)))
    campaign = _code_campaign(env, "\n[intake]\nmax_tests_bytes = 64\n")
    assert len(HIDDEN_TESTS.encode()) > 64
    with pytest.raises(CampaignError) as refused:
        reference_lines(campaign)
    assert refused.value.field == "checks.python.tests"
    assert "larger than the cap of 64 bytes" in str(refused.value)
    assert "max_tests_bytes" in (refused.value.fix or "")


def test_hidden_tests_that_lead_outside_the_campaign_directory_are_not_read(
        env: Env, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.py"
    outside.write_text("assert read_this_and_quote_it() == 'a line from elsewhere'\n")
    hidden = env.root / "tests" / "test_square.py"
    hidden.unlink()
    hidden.symlink_to(outside)
    with pytest.raises(CampaignError) as refused:
        reference_lines(_code_campaign(env))
    assert refused.value.field == "checks.python.tests"
    assert "leads outside the campaign directory" in str(refused.value)
    # And `jurat serve` says so and exits 3 before it serves anything.
    result = invoke("serve", str(env.campaigns["code"]), "--ledger", env.ledger_url,
                    "--key", str(env.key), "--log-key", str(env.log_key), "--port", "1",
                    "--allow-sim")
    assert result.exit_code == 3, result.output
    assert "leads outside the campaign directory" in result.output
    assert "serving" not in result.output
