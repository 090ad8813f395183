"""Adjudication round trip: escalate → adjudicate → review v2, re-derived by `jurat verify`
and verified by sigstore-js; what an adjudication cannot do is refused."""

from __future__ import annotations

import hashlib
from pathlib import Path

from jurat.ledger import open_ledger
from jurat.receipts import load_public_key, read_statement, verify_bundle
from tests.receipts.test_receipts_outside import _sigstore_js, sigstore_js
from tests.service._support import BAD, GOOD, MARKER, Env, artifact, client, wait_decided
from tests.support.cli import invoke

__all__ = ["sigstore_js"]  # the fixture, imported for this module's tests


def _escalated(http: object, env: Env, text: str = GOOD, media_type: str = "text/x-python",
               name: str = "sq") -> str:
    alice = env.auth("contributor", "critical", "alice")
    r = http.post("/v1/campaigns/critical/jobs", headers=alice,  # type: ignore[attr-defined]
                  json=artifact(name, text, media_type))
    assert r.status_code == 202, r.text
    job = str(r.json()["job_id"])
    wait_decided(http, job, alice)  # type: ignore[arg-type]
    return job


def test_escalate_adjudicate_and_verify(env: Env, tmp_path: Path, sigstore_js: Path) -> None:
    reviewer = env.auth("reviewer", "critical", "rita")
    alice = env.auth("contributor", "critical", "alice")
    with client(env, ("critical",)) as http:
        job = _escalated(http, env)
        before = http.get(f"/v1/jobs/{job}", headers=alice).json()
        # The mission-critical tier never accepts without an adjudication.
        assert before["decision"]["disposition"] == "escalate", before
        assert before["review_version"] == 1
        v1 = http.get(f"/v1/jobs/{job}/receipt", headers=alice).content
        r = http.post(f"/v1/jobs/{job}/adjudication", headers=reviewer,
                      json={"disposition": "accept", "rationale": "Correct on every case."})
        assert r.status_code == 202, r.text
        assert r.json() == {"job_id": job, "review_version": 2}
        after = http.get(f"/v1/jobs/{job}", headers=alice).json()
        assert after["review_version"] == 2
        assert after["decision"]["disposition"] == "accept"
        assert after["decision"]["adjudicated"] is True
        v2 = http.get(f"/v1/jobs/{job}/receipt", headers=alice).content
        assert http.get(f"/v1/jobs/{job}/receipt?version=1", headers=alice).content == v1
        # Adjudicated once: a second one is refused.
        again = http.post(f"/v1/jobs/{job}/adjudication", headers=reviewer,
                          json={"disposition": "reject", "rationale": "Second thoughts."})
        assert again.status_code == 409
    review = read_statement(v2)["predicate"]["review"]
    assert review["version"] == 2
    assert review["supersedes"] == hashlib.sha256(v1).hexdigest()
    adjudication = review["adjudication"]
    assert adjudication["reviewer"] == "rita" and adjudication["disposition"] == "accept"
    assert adjudication["rationale"] == "Correct on every case." and adjudication["at"]
    assert verify_bundle(v2, load_public_key(env.pub)).ok
    path = tmp_path / "v2.sigstore.json"
    path.write_bytes(v2)
    result = invoke("verify", str(path), "--key", str(env.pub))
    assert result.exit_code == 0, result.output
    proc = _sigstore_js(sigstore_js, path, env.pub)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    replay = invoke("replay", env.ledger_url, "--key", str(env.pub))
    assert replay.exit_code == 0, replay.output


def test_an_adjudication_cannot_lift_a_failed_required_gate(env: Env) -> None:
    reviewer = env.auth("reviewer", "critical", "rita")
    with client(env, ("critical",)) as http:
        # Code sent as plain text: the tests never ran, the required gates have no outcome,
        # and the fold escalates for the missing evidence.
        job = _escalated(http, env, media_type="text/plain", name="plain")
        state = http.get(f"/v1/jobs/{job}", headers=reviewer).json()
        assert state["decision"]["disposition"] == "escalate"
        assert state["decision"]["gates_failed"]
        r = http.post(f"/v1/jobs/{job}/adjudication", headers=reviewer,
                      json={"disposition": "accept", "rationale": "I ran it myself."})
        assert r.status_code == 409 and "required gate" in r.json()["error"], r.text
        assert http.get(f"/v1/jobs/{job}", headers=reviewer).json()["review_version"] == 1
        r = http.post(f"/v1/jobs/{job}/adjudication", headers=reviewer,
                      json={"disposition": "reject", "rationale": "No test evidence."})
        assert r.status_code == 202, r.text
        # A failing artifact was rejected by the veto: nothing to adjudicate.
        failed = _escalated(http, env, text=BAD, name="bad")
        assert http.get(f"/v1/jobs/{failed}", headers=reviewer).json()["decision"][
            "disposition"] == "reject"
        r = http.post(f"/v1/jobs/{failed}/adjudication", headers=reviewer,
                      json={"disposition": "accept", "rationale": "Close enough."})
        assert r.status_code == 409


def test_a_rationale_quoting_the_hidden_tests_is_refused(env: Env) -> None:
    reviewer = env.auth("reviewer", "critical", "rita")
    with client(env, ("critical",)) as http:
        job = _escalated(http, env)
        quote = f'it passes assert square(3) == 9, "{MARKER}-message" fine'
        r = http.post(f"/v1/jobs/{job}/adjudication", headers=reviewer,
                      json={"disposition": "accept", "rationale": quote})
        assert r.status_code == 422 and r.json()["field"] == "rationale"
        assert MARKER not in r.text


def test_jurat_adjudicate_on_the_command_line(env: Env, tmp_path: Path) -> None:
    with client(env, ("critical",)) as http:
        job = _escalated(http, env)
    out = tmp_path / "v2.json"
    refused = invoke("adjudicate", env.ledger_url, job, "--disposition", "maybe",
                     "--rationale", "x", "--reviewer", "rita", "--key", str(env.key))
    assert refused.exit_code == 3, refused.output
    result = invoke("adjudicate", env.ledger_url, job, "--disposition", "reject",
                    "--rationale", "Not convinced.", "--reviewer", "rita", "--key",
                    str(env.key), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert read_statement(out.read_bytes())["predicate"]["decision"]["disposition"] == "reject"
    assert invoke("verify", str(out), "--key", str(env.pub)).exit_code == 0
    again = invoke("adjudicate", env.ledger_url, job, "--disposition", "accept",
                   "--rationale", "x", "--reviewer", "rita", "--key", str(env.key))
    assert again.exit_code == 3, again.output
    with open_ledger(env.ledger_url) as ledger:
        assert sum(1 for _ in ledger.entries(kind="receipt")) == 2
    # The restarted server knows the new review.
    with client(env, ("critical",)) as http:
        state = http.get(f"/v1/jobs/{job}", headers=env.auth("operator")).json()
        assert state["review_version"] == 2 and state["decision"]["disposition"] == "reject"
