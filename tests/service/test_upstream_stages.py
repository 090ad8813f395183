"""Upstream receipts are required when a campaign declares them, each of the stage its
key signs for, unexpired and current (issue 27): `jurat serve` answers 422 with jurat's
reason and records nothing; a job that brings them gets a receipt binding what was
checked (digest, stage, signer key, issue time)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurat.ledger import open_ledger
from jurat.receipts import keygen, read_statement
from tests.service._support import TEXT, Env, artifact, client, wait_decided
from tests.support.upstream import STAGE1, key_sha256, payload_sha256, upstream_receipt

ESSAY = "Essay."


def _served(env: Env) -> tuple[Path, Path]:
    """A text campaign whose Stage 1 and Stage 2 signers have keys of their own, both
    stages required (the default); returns the two private keys."""
    keygen(env.root / "s1")
    keygen(env.root / "s2")
    text = TEXT.format(samples=1, latency=0).replace('id = "text"', 'id = "up"')
    path = env.root / "up.toml"
    path.write_text(text + '\n[upstream]\nkeys = [{path = "s1/jurat.pub", stage = "stage1"},'
                    ' {path = "s2/jurat.pub", stage = "stage2"}]\n')
    env.campaigns["up"] = path
    return env.root / "s1" / "jurat.key", env.root / "s2" / "jurat.key"


def _entries(env: Env) -> int:
    with open_ledger(env.ledger_url) as ledger:
        return ledger.size()


def test_missing_foreign_expired_or_superseded_upstream_receipts_refuse_the_job(
        env: Env) -> None:
    s1, s2 = _served(env)
    stage2 = upstream_receipt(s2, ESSAY, stage="stage2")
    current = upstream_receipt(s1, ESSAY, issued_at="2026-03-01T00:00:00Z")
    cases: dict[str, tuple[list[dict[str, Any]], str, str]] = {
        "none": ([], "upstream_receipts", "missing: no stage1 receipt"),
        "no stage 2": ([current], "upstream_receipts", "missing: no stage2 receipt"),
        "stage 2 key signs a stage 1 receipt": (
            [upstream_receipt(s2, ESSAY, stage="stage1"), stage2], "upstream_receipts[0]",
            "foreign stage: it says it is a stage1 receipt, but it is signed by the key "
            "for stage2"),
        "no stage named": ([upstream_receipt(s1, ESSAY, stage=None), stage2],
                           "upstream_receipts[0]", "foreign stage"),
        "expired": ([upstream_receipt(s1, ESSAY, not_after="2021-01-02T00:00:00Z"), stage2],
                    "upstream_receipts[0]",
                    "expired: its not_after 2021-01-02T00:00:00.000000Z has passed"),
        "older beside newer": ([upstream_receipt(s1, ESSAY), current, stage2],
                               "upstream_receipts[0]",
                               "superseded: upstream receipt [1] is a stage1 receipt of "
                               "this artifact issued later"),
    }
    alice = env.auth("contributor", "up", "alice")
    with client(env, ("up",)) as http:
        before = _entries(env)
        for name, (bundles, field, reason) in cases.items():
            r = http.post("/v1/campaigns/up/jobs", headers=alice,
                          json={**artifact("e1", ESSAY), "upstream_receipts": bundles})
            assert r.status_code == 422, (name, r.text)
            assert r.json()["field"] == field, (name, r.text)
            assert reason in r.json()["error"], (name, r.text)
            assert "nothing was sampled" in r.json()["error"]
        assert _entries(env) == before


def test_current_receipts_are_bound_with_their_stage_and_a_later_one_supersedes(
        env: Env) -> None:
    s1, s2 = _served(env)
    stage1 = upstream_receipt(s1, ESSAY, issued_at="2026-03-01T00:00:00Z",
                              not_after="2999-01-01T00:00:00Z")
    stage2 = upstream_receipt(s2, ESSAY, stage="stage2",
                              predicate_type="https://example.org/stage2/v1")
    alice = env.auth("contributor", "up", "alice")
    with client(env, ("up",)) as http:
        r = http.post("/v1/campaigns/up/jobs", headers=alice,
                      json={**artifact("e1", ESSAY), "upstream_receipts": [stage1, stage2]})
        assert r.status_code == 202, r.text
        job = r.json()["job_id"]
        assert wait_decided(http, job, alice)["status"] == "decided"
        signed = http.get(f"/v1/jobs/{job}/receipt", headers=alice).content
        # An older Stage 1 receipt of the same bytes, now that the ledger bound a later one.
        older = upstream_receipt(s1, ESSAY, issued_at="2026-02-01T00:00:00Z")
        r = http.post("/v1/campaigns/up/jobs", headers=alice,
                      json={**artifact("e1", ESSAY), "upstream_receipts": [older, stage2]})
        assert r.status_code == 422, r.text
        assert r.json()["field"] == "upstream_receipts[0]"
        assert "superseded: a stage1 receipt of this artifact issued at " \
               "2026-03-01T00:00:00.000000Z is already bound" in r.json()["error"]
    bound = read_statement(signed)["predicate"]["inputs"]["upstream_receipts"]
    assert bound == [
        {"name": STAGE1, "sha256": payload_sha256(stage1), "stage": "stage1",
         "key_sha256": key_sha256(s1.with_suffix(".pub")),
         "issued_at": "2026-03-01T00:00:00.000000Z"},
        {"name": "https://example.org/stage2/v1", "sha256": payload_sha256(stage2),
         "stage": "stage2", "key_sha256": key_sha256(s2.with_suffix(".pub")),
         "issued_at": "2026-01-01T00:00:00.000000Z"},
    ]
    # Known after a restart too: the refusal rests on the ledger, not on memory.
    with client(env, ("up",)) as http:
        r = http.post("/v1/campaigns/up/jobs", headers=alice,
                      json={**artifact("e1", ESSAY), "upstream_receipts": [older, stage2]})
        assert r.status_code == 422 and "already bound" in r.json()["error"], r.text
