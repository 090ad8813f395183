"""Step 4's one-serialisation path and step 7's recorded digests agree with the checks
they stand for (src/jurat/receipts/_verify.py, ``_read_statement``, ``_recorded_digests``).

Every payload below is signed, so verification reaches step 4 and beyond; each is verified
twice, once as usual and once with the fast path switched off (every statement read check
by check: strict parse, RFC 8785 comparison, ``parse_statement``), and the two reports must
be the same, step by step and word for word.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jurat.canonical import digest_json
from jurat.models import policy_digest
from jurat.receipts import (
    PrivateKey,
    PublicKey,
    _verify,
    load_public_key,
    verify_bundle,
)
from jurat.receipts._bundle import parse_bundle, sign_payload
from jurat.receipts._statement import parse_statement
from tests.support.builders import (
    criteria_case,
    equivalence_case,
    pairwise_case,
    rubric_case,
    statement_for,
)

Edit = Callable[[bytes], bytes]


@pytest.fixture()
def public_key(pub_path: Path) -> PublicKey:
    return load_public_key(pub_path)


def _step_by_step(*_: object, **__: object) -> Any:
    raise ValueError("the fast path is switched off")


def _both(bundle: bytes, key: PublicKey) -> Iterator[Any]:
    yield verify_bundle(bundle, key)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_verify, "loads_candidate", _step_by_step)
        yield verify_bundle(bundle, key)


def _same_reports(bundle: bytes, key: PublicKey) -> Any:
    fast, slow = _both(bundle, key)
    assert fast.steps == slow.steps
    assert (fast.ok, fast.decision, fast.statement) == (slow.ok, slow.decision, slow.statement)
    return fast


def _reference(value: Any) -> bytes:
    """RFC 8785 bytes from the reference serialiser, never from the code under test."""
    return bytes(rfc8785.dumps(value))


def _json_edit(change: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(payload: bytes) -> bytes:
        doc = json.loads(payload)
        change(doc)
        return _reference(doc)

    return edit


def _vote(doc: dict[str, Any]) -> dict[str, Any]:
    vote: dict[str, Any] = doc["predicate"]["votes"][0]
    return vote


def _judge(doc: dict[str, Any]) -> dict[str, Any]:
    judge: dict[str, Any] = doc["predicate"]["campaign"]["policy"]["judges"][0]
    return judge


EDITS: dict[str, Edit] = {
    "unchanged": lambda p: p,
    "indented": lambda p: json.dumps(json.loads(p), indent=1).encode(),
    "trailing newline": lambda p: p + b"\n",
    "keys unsorted": lambda p: json.dumps(
        dict(reversed(json.loads(p).items())), separators=(",", ":"), ensure_ascii=False
    ).encode(),
    "duplicate key": lambda p: p.replace(b'{"_type":', b'{"_type":"x","_type":', 1),
    "int as 1024.0": lambda p: p.replace(b'"max_tokens":1024', b'"max_tokens":1024.0', 1),
    "float as 0.0": lambda p: p.replace(b'"temperature":0,', b'"temperature":0.0,', 1),
    "NaN": lambda p: p.replace(b'"latency_ms":40', b'"latency_ms":NaN', 1),
    "lone surrogate": lambda p: p.replace(b'"explanation":"', b'"explanation":"\\ud800', 1),
    "escaped slash": lambda p: p.replace(b'"explanation":"', b'"explanation":"\\/', 1),
    "escaped letter": lambda p: p.replace(b'"explanation":"', b'"explanation":"\\u0041', 1),
    "true as 1": lambda p: p.replace(b'"structured_output":true', b'"structured_output":1', 1),
    "default left out": _json_edit(lambda d: d["predicate"]["campaign"]["policy"].pop("id")),
    "optional written": _json_edit(
        lambda d: d["predicate"]["campaign"]["policy"].update(judge_after_veto=False)
    ),
    "unknown field": _json_edit(lambda d: d["predicate"].update(extra=1)),
    "wrong _type": _json_edit(lambda d: d.update(_type="https://example.com/v0")),
    "int beyond 2**53": lambda p: p.replace(
        b'"input_tokens":812', b'"input_tokens":9007199254740993', 1
    ),
    "16-digit int": _json_edit(lambda d: _vote(d)["usage"].update(n=2**53 - 1)),
    "exponent": _json_edit(lambda d: _vote(d)["answer"].update(x=1e-7, y=1e21, z=-2.5e-300)),
    "long fraction": _json_edit(lambda d: _vote(d)["answer"].update(x=0.30000000000000004)),
    "whole float in Any": _json_edit(lambda d: _vote(d)["answer"].update(x=3.0, y=-0.0)),
    "quotes and backslashes": _json_edit(
        lambda d: _vote(d)["answer"].update(explanation='say "1.0", \\ and }] [{')
    ),
    "text like numbers": _json_edit(lambda d: _vote(d)["answer"].update(explanation=",1.0]")),
    "astral and private-use keys": _json_edit(
        lambda d: _vote(d)["usage"].update({"\ue000": 1, "\U0001f600": 2, "a": 3})
    ),
    "non-ASCII text": _json_edit(
        lambda d: _vote(d)["answer"].update(explanation="naïve — 正しい \u2028 \x7f")
    ),
    "deep": lambda p: p.replace(
        b'"usage":{', b'"usage":{"deep":' + b"[" * 70 + b"]" * 70 + b",", 1
    ),
    "digest tampered": _json_edit(lambda d: _judge(d).update(seed=99)),
    "decision tampered": _json_edit(lambda d: d["predicate"]["decision"].update(q_bp=1)),
    "not an object": lambda p: b"[" + p + b"]",
}


@pytest.mark.parametrize("name", list(EDITS))
def test_step_4_fast_path_reports_what_the_step_by_step_checks_report(
    name: str, statement: dict[str, Any], private_key: PrivateKey, public_key: PublicKey
) -> None:
    payload = EDITS[name](_reference(statement))
    report = _same_reports(sign_payload(payload, private_key), public_key)
    assert report.ok == (name in ("unchanged", "16-digit int", "exponent", "long fraction",
                                  "whole float in Any", "quotes and backslashes",
                                  "text like numbers", "astral and private-use keys",
                                  "non-ASCII text")), report.failed


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_edits_of_a_signed_payload_are_reported_alike(
    data: st.DataObject, statement: dict[str, Any], private_key: PrivateKey, pub_path: Path
) -> None:
    payload = _reference(statement)
    at = data.draw(st.integers(0, len(payload) - 1))
    cut = data.draw(st.integers(0, 3))
    insert = data.draw(st.sampled_from([b"", b" ", b"0", b".0", b'"', b"\\", b",", b"}", b"e"]))
    edited = payload[:at] + insert + payload[at + cut :]
    _same_reports(sign_payload(edited, private_key), load_public_key(pub_path))


@pytest.mark.parametrize(
    "case", [rubric_case, criteria_case, pairwise_case, equivalence_case],
    ids=["rubric", "criteria", "pairwise", "equivalence"],
)
def test_recorded_digests_are_the_records_digests(
    case: Callable[[], Any], private_key: PrivateKey, public_key: PublicKey
) -> None:
    statement = statement_for(*case())
    payload = parse_bundle(sign_payload(_reference(statement), private_key)).payload
    policy = parse_statement(json.loads(payload)).predicate.campaign.policy
    assert _verify._recorded_digests(payload) == (
        policy_digest(policy),
        [digest_json(judge) for judge in policy.judges],
    )
    assert verify_bundle(sign_payload(payload, private_key), public_key).ok


@pytest.mark.parametrize(
    ("name", "fast"),
    [
        ("unchanged", True),
        ("quotes and backslashes", True),
        ("non-ASCII text", True),
        ("whole float in Any", True),
        ("text like numbers", True),  # ",1.0]" in a string is left alone
        # What only rfc8785 writes (an exponent, 16 or more integer digits) or orders (keys
        # above U+FFFF beside keys in U+E000-U+FFFF) is read step by step.
        ("exponent", False),
        ("16-digit int", False),
        ("astral and private-use keys", False),
    ],
)
def test_the_usual_receipt_takes_the_fast_path(
    name: str, fast: bool, statement: dict[str, Any], private_key: PrivateKey,
    public_key: PublicKey, monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundle = sign_payload(EDITS[name](_reference(statement)), private_key)
    monkeypatch.setattr(_verify, "loads_strict", _step_by_step)  # no way back
    assert verify_bundle(bundle, public_key).ok is fast
