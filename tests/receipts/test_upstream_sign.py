"""``jurat.receipts.sign_upstream``, the library form of `jurat upstream sign`: what it signs
is what a campaign's ``[upstream]`` check takes (runner/_upstream.py, the one check), in the
bundle jurat signs its own receipts in (docs/receipt-format.md §13)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta

import pytest

from jurat.canonical import canonical_json, sha256_digest
from jurat.errors import ConfigError
from jurat.receipts import PAYLOAD_TYPE, UPSTREAM_PREDICATE_TYPE, sign_upstream
from jurat.receipts._bundle import parse_bundle
from jurat.receipts._keys import PrivateKey, generate_key, public_key_der
from jurat.runner import StageKey, UpstreamRefused, check_upstream

DIGEST = sha256_digest("def f():\n    return 1\n")
ISSUED = datetime(2026, 2, 1, 9, 30, tzinfo=UTC)


def _trust(key: PrivateKey, stage: str = "stage1") -> StageKey:
    public = key.public_key()
    return StageKey(stage=stage, key=public,
                    sha256=hashlib.sha256(public_key_der(public)).hexdigest())


@pytest.mark.parametrize("algorithm", ["ecdsa-p256", "ed25519"])
def test_what_it_signs_is_what_the_check_takes(algorithm: str) -> None:
    key = generate_key(algorithm)  # type: ignore[arg-type]
    signed = sign_upstream(stage="stage1", campaign="contest", artifact_sha256=f"sha256:{DIGEST}",
                           key=key, issued_at=ISSUED, not_after=ISSUED + timedelta(days=3650))
    parsed = parse_bundle(signed)
    assert parsed.payload_type == PAYLOAD_TYPE
    assert signed == canonical_json(json.loads(signed))
    assert parsed.payload == canonical_json(json.loads(parsed.payload))
    [bound] = check_upstream([signed], [_trust(key)], ["stage1"], DIGEST,
                             now=ISSUED + timedelta(days=1))
    assert bound == {"name": UPSTREAM_PREDICATE_TYPE,
                     "sha256": hashlib.sha256(parsed.payload).hexdigest(), "stage": "stage1",
                     "key_sha256": _trust(key).sha256,
                     "issued_at": "2026-02-01T09:30:00.000000Z"}


def test_the_check_still_refuses_it_for_other_bytes_another_stage_or_after_not_after() -> None:
    key = generate_key()
    signed = sign_upstream(stage="stage1", campaign="contest", artifact_sha256=DIGEST, key=key,
                           issued_at=ISSUED, not_after=ISSUED + timedelta(days=1))
    cases = [
        (([signed], [_trust(key)], ["stage1"], sha256_digest("other")), "about other bytes"),
        (([signed], [_trust(key, "stage2")], ["stage2"], DIGEST), "foreign stage"),
        (([signed], [_trust(generate_key())], ["stage1"], DIGEST), "does not verify"),
    ]
    for args, words in cases:
        with pytest.raises(UpstreamRefused, match=words):
            check_upstream(*args, now=ISSUED)
    with pytest.raises(UpstreamRefused, match="expired"):
        check_upstream([signed], [_trust(key)], ["stage1"], DIGEST,
                       now=ISSUED + timedelta(days=2))


@pytest.mark.parametrize(("fields", "words"), [
    ({"stage": "stage1\n"}, "is not a stage name"),
    ({"campaign": ""}, "is not a campaign name"),
    ({"task": "a task"}, "is not a task name"),
    ({"checks": ["lint", "lint"]}, "a check is named twice"),
    ({"artifact_sha256": "md5:abc"}, "is not a sha256"),
    ({"not_after": ISSUED}, "is not after issued_at"),
    ({"issued_at": datetime(2026, 2, 1)}, "are UTC: give an aware datetime"),
])
def test_it_refuses_what_the_check_would_refuse_for_its_form(
        fields: dict[str, object], words: str) -> None:
    given: dict[str, object] = {"stage": "stage1", "campaign": "contest",
                                "artifact_sha256": DIGEST, "issued_at": ISSUED, **fields}
    with pytest.raises(ConfigError, match=words):
        sign_upstream(key=generate_key(), **given)  # type: ignore[arg-type]
