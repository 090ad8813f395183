"""Upstream (Stage 1/2) receipts: verified against the campaign's trusted keys, bound by
digest in ``inputs.upstream_receipts``; a stale or altered one refuses the job, and nothing
is recorded or sampled."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from jurat.canonical import canonical_json, sha256_digest
from jurat.ledger import open_ledger
from jurat.receipts import keygen, load_private_key, read_statement
from jurat.receipts._bundle import sign_payload
from tests.service._support import TEXT, Env, artifact, client, wait_decided

STAGE1 = "https://example.org/stage1/v1"


def _stage1(key: Path, text: str) -> dict[str, Any]:
    statement = {"_type": "https://in-toto.io/Statement/v1",
                 "subject": [{"name": "candidate", "digest": {"sha256": sha256_digest(text)}}],
                 "predicateType": STAGE1, "predicate": {"structurally_admitted": True}}
    bundle: dict[str, Any] = json.loads(sign_payload(canonical_json(statement),
                                                     load_private_key(key)))
    return bundle


def _served(env: Env) -> tuple[Path, Path]:
    """The text campaign trusting a Stage 1 key; returns (trusted key, untrusted key)."""
    keygen(env.root / "stage1")
    keygen(env.root / "other")
    text = TEXT.format(samples=1, latency=0).replace('id = "text"', 'id = "up"')
    path = env.root / "up.toml"
    path.write_text(text + '\n[upstream]\nkeys = ["stage1/jurat.pub"]\n')
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
    payload = base64.b64decode(bundle["dsseEnvelope"]["payload"])
    bound = read_statement(signed)["predicate"]["inputs"]["upstream_receipts"]
    assert bound == [{"name": STAGE1, "sha256": hashlib.sha256(payload).hexdigest()}]


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
