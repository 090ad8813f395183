"""Upstream (Stage 1/2) receipts: verified against the campaign's trusted keys, bound by
digest in ``inputs.upstream_receipts``; a stale or altered one refuses the job, and nothing
is recorded or sampled."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from jurat.canonical import canonical_json
from jurat.ledger import open_ledger
from jurat.receipts import keygen, read_statement
from tests.service._support import TEXT, Env, artifact, client, wait_decided
from tests.support.upstream import STAGE1, key_sha256, payload_sha256, upstream_receipt


def _stage1(key: Path, text: str) -> dict[str, Any]:
    return upstream_receipt(key, text)


def _served(env: Env) -> tuple[Path, Path]:
    """The text campaign trusting a Stage 1 key; returns (trusted key, untrusted key)."""
    keygen(env.root / "stage1")
    keygen(env.root / "other")
    text = TEXT.format(samples=1, latency=0).replace('id = "text"', 'id = "up"')
    path = env.root / "up.toml"
    path.write_text(text + '\n[upstream]\nkeys = [{path = "stage1/jurat.pub", stage = "stage1"}]\n')
    env.campaigns["up"] = path
    return env.root / "stage1" / "jurat.key", env.root / "other" / "jurat.key"


def test_a_verified_upstream_receipt_is_bound_by_digest(env: Env) -> None:
    trusted, _ = _served(env)
    alice = env.auth("contributor", "up", "alice")
    bundle = _stage1(trusted, "Essay.")
    with client(env, ("up",)) as http:
        r = http.post("/v1/campaigns/up/jobs", headers=alice,
                      json={**artifact("e1", "Essay."), "upstream_receipts": [bundle]})
        assert r.status_code == 202, r.text
        job = r.json()["job_id"]
        assert wait_decided(http, job, alice)["status"] == "decided"
        signed = http.get(f"/v1/jobs/{job}/receipt", headers=alice).content
    bound = read_statement(signed)["predicate"]["inputs"]["upstream_receipts"]
    assert bound == [{"name": STAGE1, "sha256": payload_sha256(bundle), "stage": "stage1",
                      "key_sha256": key_sha256(trusted.with_suffix(".pub")),
                      "issued_at": "2026-01-01T00:00:00.000000Z"}]


def test_stale_altered_or_untrusted_upstream_receipts_refuse_the_job(env: Env) -> None:
    trusted, untrusted = _served(env)
    alice = env.auth("contributor", "up", "alice")
    altered = _stage1(trusted, "Essay.")
    payload = json.loads(base64.b64decode(altered["dsseEnvelope"]["payload"]))
    payload["predicate"]["structurally_admitted"] = "yes, trust me"
    altered["dsseEnvelope"]["payload"] = base64.b64encode(canonical_json(payload)).decode()
    cases = {
        "stale": _stage1(trusted, "An earlier version of the essay."),
        "altered": altered,
        "untrusted": _stage1(untrusted, "Essay."),
        "not a bundle": {"mediaType": "nonsense"},
    }
    with client(env, ("up", "text")) as http:
        for name, bundle in cases.items():
            r = http.post("/v1/campaigns/up/jobs", headers=alice,
                          json={**artifact("e1", "Essay."), "upstream_receipts": [bundle]})
            assert r.status_code == 422, (name, r.text)
            assert r.json()["field"] == "upstream_receipts[0]", (name, r.text)
            assert "nothing was sampled" in r.json()["error"]
        # A campaign that trusts no key takes no upstream receipt.
        r = http.post("/v1/campaigns/text/jobs", headers=env.auth("contributor", "text", "a"),
                      json={**artifact("e1", "Essay."),
                            "upstream_receipts": [_stage1(trusted, "Essay.")]})
        assert r.status_code == 422 and r.json()["field"] == "upstream_receipts"
    with open_ledger(env.ledger_url) as ledger:
        assert list(ledger.entries()) == []
