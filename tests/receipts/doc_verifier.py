"""A receipt verifier written from ``docs/receipt-format.md`` alone.

It imports nothing from jurat: only the standard library, ``cryptography`` (signatures)
and ``rfc8785`` (canonical JSON). Every rule below cites the section of the document it
implements, and when this verifier and jurat disagree, the document is what gets fixed
(or the code, when the document states what jurat meant to do): this file is the
document's test, not jurat's mirror.

``verify_receipt`` runs steps 1-7 of §7 and re-derives every field of the decision
(§8) for the four kinds, the grounding of §8.10 and the adjudication of §8.9;
``check_inclusion`` runs §12.3 on a proof file and checks §12.1's binding of the entry to
the receipt (an adjudicated review's own job and its ``adjudicates``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

__all__ = [
    "DECISION_FIELDS",
    "DocVerifyError",
    "Verified",
    "check_entry_binding",
    "check_inclusion",
    "derive",
    "derive_decision",
    "fold_grounding",
    "verify_receipt",
]

# -- §2, §3, §5: constants ---------------------------------------------------------------

MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://jurat.dev/decision/v1"
FOLD_RULE = "jurat.fold/v1"
FOLD_RULE_V2 = "jurat.fold/v2"  # §10: model families (§8.7) and curtailment (§8.5)
CURTAIL_RULE = "jurat.curtail/v1"
MAX_BUNDLE_BYTES = 16 * 1024 * 1024  # §2.2
MAX_DEPTH = 64  # §2.2
FLOAT_REL_TOL = 1e-12  # §7 step 7

STEPS = (
    "parse envelope",
    "check payload type",
    "verify signature",
    "parse statement",
    "check subject digest",
    "re-run fold",
    "compare decision",
)

# §6: the predicate's members, and those of its parts.
PREDICATE_FIELDS = {
    "jurat_version", "fold_rule", "replay_fidelity_level", "campaign", "artifact", "inputs",
    "gates", "judges", "votes", "decision", "review",
}
CAMPAIGN_FIELDS = {"id", "kind", "rubric_version", "policy_sha256", "policy"}
ARTIFACT_FIELDS = {"id", "sha256", "media_type"}
INPUT_FIELDS = {
    "assignment", "attempt", "job_id", "task", "contributor", "upstream_receipts",
    "evidence_bundle",
}
GATE_FIELDS = {
    "id", "outcome", "required", "tool", "tool_version", "evidence_index", "detail", "data",
}
JUDGE_FIELDS = {"id", "provider", "model", "prompt_id", "schema_id", "decoding", "config_sha256"}
#: §6.6's table: a judge's ``prompt_derived_from``, present exactly for these prompt ids.
PROMPT_DERIVED_FROM = {"jurat/equivalence@1": "invariance-checker/judge/v1"}
VOTE_FIELDS = {
    "judge", "criterion", "sample", "attempts", "order", "answer", "error", "returned_model",
    "system_fingerprint", "usage", "dispatch_ms", "latency_ms", "prompt_id",
}
REVIEW_FIELDS = {"version", "supersedes", "adjudication"}
ADJUDICATION_FIELDS = {"reviewer", "at", "disposition", "rationale"}
# §6.8: the 23 fields of the decision, and the ones typed float.
DECISION_FIELDS = (
    "kind", "fold_rule", "disposition", "rollout", "equivalent", "equivalence_settled",
    "reasons", "gates_failed", "scores", "q", "q_bp", "aggregation", "label", "agreement",
    "agreement_votes", "entropy", "independent_votes", "missing", "samples", "valid_samples",
    "sample_agreement", "criteria", "stability",
)
FLOAT_FIELDS = {"q", "agreement", "entropy", "sample_agreement"}
CRITERION_FIELDS = (
    "judge", "criterion_id", "blocker", "verdict", "samples", "agreement", "agreement_votes",
    "sample_verdicts", "gate",
)
HEX64 = re.compile(r"^[0-9a-f]{64}$")
KEYED = re.compile(r"^hmac-sha256:[0-9a-f]{64}$")  # §6.4, §11.3: a keyed digest
PAIR_MEDIA_TYPE = "application/vnd.jurat.pair+json"  # §6.3
_B64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


class DocVerifyError(Exception):
    """A verification step failed: ``step`` is its number (1-8), as §7 numbers them."""

    def __init__(self, step: int, message: str) -> None:
        super().__init__(f"step {step}: {message}")
        self.step = step
        self.message = message


@dataclass
class Verified:
    """What a receipt that held every step gave."""

    statement: dict[str, Any]
    derived: dict[str, Any]
    compared: list[str] = field(default_factory=list)
    """The decision fields compared (all of §6.8's)."""
    reference_checked: bool | None = None
    """§7 step 5: True the keyed reference digests held for the given reference; False the
    receipt records one and no reference was given; None it records none."""


# -- JSON reading (§2.2, §5) ---------------------------------------------------------------


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(data: bytes) -> Any:
    """UTF-8 without BOM, no duplicate keys, no NaN/Infinity, at most 64 levels (§2.2)."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise ValueError("byte order mark")
    text = data.decode("utf-8")  # strict: refuses invalid UTF-8
    if "\x00" in text:
        raise ValueError("NUL character")
    value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    if _depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    return value


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def strict_b64(text: Any, what: str) -> bytes:
    """Standard base64 with padding, no line breaks, canonical trailing bits (§3.1)."""
    if not isinstance(text, str) or len(text) % 4 or not _B64.match(text):
        raise ValueError(f"{what} is not standard padded base64")
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"{what} is not base64: {exc}") from exc
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError(f"{what} has non-canonical base64 trailing bits")
    return raw


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(value: Any) -> bytes:
    """RFC 8785 JSON (§5)."""
    return bytes(rfc8785.dumps(value))


# -- steps 1-5 -----------------------------------------------------------------------------


def _envelope(bundle_bytes: bytes) -> tuple[dict[str, Any], bytes, bytes, str | None]:
    """Step 1 (§2, §2.2, §3): the bundle, its payload bytes, signature bytes and hint."""
    if len(bundle_bytes) > MAX_BUNDLE_BYTES:
        raise DocVerifyError(1, "bundle larger than 16 MiB")
    try:
        bundle = strict_json(bundle_bytes)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DocVerifyError(1, f"not strict JSON: {exc}") from exc
    if not isinstance(bundle, dict) or set(bundle) - {
        "mediaType", "verificationMaterial", "dsseEnvelope"
    }:
        raise DocVerifyError(1, "the bundle holds fields outside the schema")
    if bundle.get("mediaType") != MEDIA_TYPE:
        raise DocVerifyError(1, f"mediaType is not {MEDIA_TYPE}")
    material = bundle.get("verificationMaterial")
    if not isinstance(material, dict):
        raise DocVerifyError(1, "no verificationMaterial")
    kinds = [k for k in ("publicKey", "certificate", "x509CertificateChain") if k in material]
    if len(kinds) != 1:
        raise DocVerifyError(1, "verificationMaterial must hold exactly one key material")
    envelope = bundle.get("dsseEnvelope")
    if not isinstance(envelope, dict) or set(envelope) != {"payload", "payloadType", "signatures"}:
        raise DocVerifyError(1, "dsseEnvelope must hold payload, payloadType and signatures")
    signatures = envelope["signatures"]
    if not isinstance(signatures, list) or len(signatures) != 1:
        raise DocVerifyError(1, "exactly one signature is required")
    sig = signatures[0]
    if not isinstance(sig, dict) or set(sig) - {"sig", "keyid"} or "sig" not in sig:
        raise DocVerifyError(1, "the signature object holds fields outside the schema")
    try:
        payload = strict_b64(envelope["payload"], "payload")
        signature = strict_b64(sig["sig"], "sig")
    except ValueError as exc:
        raise DocVerifyError(1, str(exc)) from exc
    if not payload:
        raise DocVerifyError(1, "empty payload")
    hint = None
    if kinds == ["publicKey"]:
        public = material["publicKey"]
        if not isinstance(public, dict) or set(public) - {"hint"}:
            raise DocVerifyError(1, "publicKey holds fields outside the schema")
        hint = public.get("hint")
    return bundle, payload, signature, hint


def pae(payload_type: str, body: bytes) -> bytes:
    """§4.1: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in bytes."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def key_hint(public_key: Any) -> str:
    """§4.2: base64(sha256(DER SubjectPublicKeyInfo))."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(der).digest()).decode("ascii")


def _signature(bundle: dict[str, Any], payload: bytes, signature: bytes, hint: str | None,
               public_pem: bytes) -> None:
    """Step 3 (§4): the signature over PAE(payloadType, payload), and the hint."""
    if "publicKey" not in bundle["verificationMaterial"]:
        raise DocVerifyError(3, "a keyless receipt (§9) is not verified offline")
    key = serialization.load_pem_public_key(public_pem)
    message = pae(bundle["dsseEnvelope"]["payloadType"], payload)
    try:
        if isinstance(key, ec.EllipticCurvePublicKey):
            if not isinstance(key.curve, ec.SECP256R1):
                raise DocVerifyError(3, "ECDSA keys must be P-256")
            key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
        elif isinstance(key, Ed25519PublicKey):
            key.verify(signature, message)
        else:
            raise DocVerifyError(3, f"unsupported key type {type(key).__name__}")
    except InvalidSignature as exc:
        raise DocVerifyError(3, "the signature does not verify over PAE") from exc
    if hint is not None and hint != key_hint(key):
        raise DocVerifyError(3, "publicKey.hint does not name the given key")


def _fields(obj: Any, expected: set[str], where: str, optional: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    if not isinstance(obj, dict):
        raise DocVerifyError(4, f"{where} is not an object")
    keys = set(obj)
    if not expected <= keys or keys - expected - optional:
        raise DocVerifyError(
            4, f"{where} has fields {sorted(keys)}, expected {sorted(expected | optional)}"
        )


def _statement(payload: bytes) -> dict[str, Any]:
    """Step 4 (§5, §6): strict canonical JSON, an in-toto statement, the predicate's shape."""
    try:
        doc = strict_json(payload)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DocVerifyError(4, f"payload is not strict JSON: {exc}") from exc
    if canonical(doc) != payload:
        raise DocVerifyError(4, "payload is not its own RFC 8785 serialisation")
    _fields(doc, {"_type", "subject", "predicateType", "predicate"}, "statement")
    if doc["_type"] != STATEMENT_TYPE or doc["predicateType"] != PREDICATE_TYPE:
        raise DocVerifyError(4, "not an in-toto v1 statement with the decision predicate")
    pred = doc["predicate"]
    _fields(pred, PREDICATE_FIELDS, "predicate")
    _fields(pred["campaign"], CAMPAIGN_FIELDS, "campaign")
    _fields(pred["artifact"], ARTIFACT_FIELDS, "artifact")
    _fields(pred["inputs"], INPUT_FIELDS, "inputs", optional={"judges_skipped",
                                                               "explanation_sha256",
                                                               "target_sha256",
                                                               "target_hmac",
                                                               "input_sha256",
                                                               "work", "duplicate_of",
                                                               *WORK_INPUTS})
    _fields(pred["inputs"]["task"], {"id", "version"}, "inputs.task",
            optional={"statement_sha256"})
    for where, digest in (("inputs.explanation_sha256", pred["inputs"].get("explanation_sha256")),
                          ("inputs.target_sha256", pred["inputs"].get("target_sha256")),
                          ("inputs.input_sha256", pred["inputs"].get("input_sha256")),
                          ("inputs.task.statement_sha256",
                           pred["inputs"]["task"].get("statement_sha256"))):
        if digest is not None and not (isinstance(digest, str) and HEX64.match(digest)):
            raise DocVerifyError(4, f"{where} is present but not a sha256 digest")  # §6.4
    work = pred["inputs"].get("work")  # §6.4: {rule, sha256}
    if work is not None:
        _fields(work, {"rule", "sha256"}, "inputs.work")
        if not (isinstance(work["rule"], str) and work["rule"].startswith("jurat.work/v1/")
                and isinstance(work["sha256"], str) and HEX64.match(work["sha256"])):
            raise DocVerifyError(4, "inputs.work is not a jurat.work/v1 rule and a digest")
    first = pred["inputs"].get("duplicate_of")
    if first is not None and not (isinstance(first, str) and HEX64.match(first)):
        raise DocVerifyError(4, "inputs.duplicate_of is present but not a job id")  # §6.4
    keyed = pred["inputs"].get("target_hmac")
    if keyed is not None and not (isinstance(keyed, str) and KEYED.match(keyed)):
        raise DocVerifyError(4, "inputs.target_hmac is present but not a keyed digest")  # §6.4
    _fields(pred["review"], REVIEW_FIELDS, "review")
    _fields(pred["decision"], set(DECISION_FIELDS), "decision",
            optional={"adjudicated", "independent_families", "curtailment", "grounding"})
    if ("grounding" in pred["decision"]) != ("grounding" in pred["campaign"]["policy"]):
        raise DocVerifyError(4, "decision.grounding is present without policy.grounding, "
                             "or absent with it (§8.10)")
    for i, gate in enumerate(pred["gates"]):
        _fields(gate, GATE_FIELDS, f"gates[{i}]")
    for i, judge in enumerate(pred["judges"]):
        _fields(judge, JUDGE_FIELDS, f"judges[{i}]", optional={"prompt_derived_from"})
    for i, vote in enumerate(pred["votes"]):
        _fields(vote, VOTE_FIELDS, f"votes[{i}]")
    review = pred["review"]
    version = review["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise DocVerifyError(4, "review.version must be an integer >= 1")  # §6.10
    supersedes = review["supersedes"]
    if (version == 1) != (supersedes is None):
        raise DocVerifyError(4, "review.supersedes must be null exactly when version is 1")
    if supersedes is not None and not (isinstance(supersedes, str) and HEX64.match(supersedes)):
        raise DocVerifyError(4, "review.supersedes is not a receipt digest")
    adjudication = review["adjudication"]
    if adjudication is not None:  # §6.10
        _fields(adjudication, ADJUDICATION_FIELDS, "review.adjudication",
                {"rationale_public"})
        if adjudication.get("rationale_public", True) is not True:
            raise DocVerifyError(4, "review.adjudication.rationale_public is present but not "
                                 "true")  # §6.10: absent when false
        if adjudication["disposition"] not in ("accept", "reject"):
            raise DocVerifyError(4, "review.adjudication.disposition is not accept or reject")
        for name, most in (("reviewer", 200), ("rationale", 4000)):
            text = adjudication[name]
            if not isinstance(text, str) or not 1 <= len(text) <= most:
                raise DocVerifyError(4, f"review.adjudication.{name} is not 1-{most} characters")
        if not isinstance(adjudication["at"], str) or version == 1:
            raise DocVerifyError(4, "review.adjudication needs `at` and a version after 1")
    if "adjudicated" in pred["decision"] and pred["decision"]["adjudicated"] is not True:
        raise DocVerifyError(4, "decision.adjudicated is present but not true")  # §6.8
    if "judges_skipped" in pred["inputs"] and not isinstance(pred["inputs"]["judges_skipped"], str):
        raise DocVerifyError(4, "inputs.judges_skipped is present but not a string")  # §6.4
    try:
        _policy_bounds(pred["campaign"]["policy"])
    except (FoldRefused, KeyError, TypeError) as exc:
        raise DocVerifyError(4, f"the policy is outside §6.2's bounds: {exc}") from exc
    statement: dict[str, Any] = doc
    return statement


def _policy_bounds(policy: dict[str, Any]) -> None:
    """§6.2, "Bounds"."""

    def within(value: Any, lo: Fraction, hi: Fraction, where: str, *, open_lo: bool = False
               ) -> None:
        x = exact(value, where)
        if x > hi or x < lo or (open_lo and x == lo):
            raise FoldRefused(f"{where} = {value!r} is out of bounds")

    def count(value: Any, lo: int, hi: int, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise FoldRefused(f"{where} = {value!r} is out of bounds")

    kind, judges = policy["kind"], policy["judges"]
    ids = [j["id"] for j in judges]
    if len(set(ids)) != len(ids):
        raise FoldRefused("judge ids repeat")
    if kind in ("rubric", "pairwise", "criteria") and not judges:
        raise FoldRefused(f"a {kind} policy needs a judge")
    within(policy["min_valid_fraction"], Fraction(0), Fraction(1), "min_valid_fraction",
           open_lo=True)
    tier = policy["risk_tier"]
    within(tier["min_agreement"], Fraction(0), Fraction(1), "min_agreement", open_lo=True)
    count(tier["votes"], 1, 100, "risk_tier.votes")
    for j in judges:
        count(j["samples"], 1, 101, f"judges.{j['id']}.samples")
    rubric = policy.get("rubric")
    if kind in ("rubric", "pairwise") and rubric is None:
        raise FoldRefused(f"a {kind} policy needs a rubric")
    if rubric is not None:
        cids = [c["id"] for c in rubric["criteria"]]
        if len(set(cids)) != len(cids) or not set(cids) <= {
            "correctness", "reasoning", "adherence", "presentation"
        }:
            raise FoldRefused(f"rubric criterion ids {cids}")
        for c in rubric["criteria"]:
            within(c["weight"], Fraction(0), Fraction(1), f"weight {c['id']}")
            if c["minimum"] is not None:
                count(c["minimum"], 1, 5, f"minimum {c['id']}")
        within(rubric["threshold"], Fraction(0), Fraction(1), "threshold")
        total = sum((exact(c["weight"], "weight") for c in rubric["criteria"]), Fraction(0))
        if abs(total - 1) > Fraction(1, 10**9):
            raise FoldRefused(f"weights sum to {total}, not 1")
    suite = policy.get("criteria")
    if kind == "criteria" and suite is None:
        raise FoldRefused("a criteria policy needs criteria")
    if suite is not None:
        items = [i["id"] for i in suite["items"]]
        if not items or len(set(items)) != len(items):
            raise FoldRefused("criteria items are empty or repeat")
        count(suite["samples"], 1, 101, "criteria.samples")
        count(suite["blocker_samples"], 1, 101, "criteria.blocker_samples")
        within(suite["blocker_quorum"], Fraction(0), Fraction(1), "blocker_quorum", open_lo=True)
    settings = policy.get("equivalence")
    if settings is not None:
        count(settings["votes"], 1, 101, "equivalence.votes")
        count(settings["min_agreement"], 1, settings["votes"], "equivalence.min_agreement")


def keyed_reference_digests(pred: dict[str, Any]) -> list[str]:
    """§7 step 5: the keyed digests a receipt binds its reference by, ``inputs.target_hmac``
    (§6.4) and each ``equivalence.deterministic`` gate's ``data.reference_hmac`` (§11.2)."""
    found = [pred["inputs"]["target_hmac"]] if "target_hmac" in pred["inputs"] else []
    found += [g["data"]["reference_hmac"] for g in pred["gates"]
              if g["id"] == "equivalence.deterministic" and "reference_hmac" in g["data"]]
    return found


def _subject(doc: dict[str, Any], artifact_sha256: str | None,
             reference: tuple[bytes, bytes] | None = None) -> bool | None:
    """Step 5 (§5, §7): one subject, the predicate's artifact, the given digest; and with a
    ``reference`` (the campaign's reference key, the reference's bytes), the keyed digests
    the receipt binds it by. Returns whether the reference binding was checked (None: the
    receipt records no keyed digest and no reference was given)."""
    subjects = doc["subject"]
    if not isinstance(subjects, list) or len(subjects) != 1:
        raise DocVerifyError(5, "exactly one subject is required")
    subject, artifact = subjects[0], doc["predicate"]["artifact"]
    if not isinstance(subject, dict) or set(subject.get("digest", {})) != {"sha256"}:
        raise DocVerifyError(5, "the subject digest must be {sha256}")
    digest = subject["digest"]["sha256"]
    if subject.get("name") != artifact["id"] or digest != artifact["sha256"]:
        raise DocVerifyError(5, "the subject is not the predicate's artifact")
    keyed = keyed_reference_digests(doc["predicate"])
    h = None
    if reference is not None:  # §11.3: HMAC-SHA256 under the key of the exact bytes
        h = "hmac-sha256:" + hmac.new(reference[0], reference[1], hashlib.sha256).hexdigest()
    as_a = False
    if artifact_sha256 is not None and digest != artifact_sha256.lower():
        # §7 step 5: with a reference, a pair's given artifact may be its a (§6.3).
        as_a = h is not None and artifact["media_type"] == PAIR_MEDIA_TYPE and digest == (
            sha256_hex(canonical({"a": artifact_sha256.lower(), "b": h})))
        if not as_a:
            raise DocVerifyError(5, "the receipt is about another artifact")
    if h is None:
        return False if keyed else None
    if not keyed and not as_a:
        raise DocVerifyError(5, "a reference was given, and nothing binds one by a keyed digest")
    if any(value != h for value in keyed):
        raise DocVerifyError(5, "a keyed reference digest is not the given reference's")
    return True


# -- §6.9 and §8.1: numbers, slots, medians --------------------------------------------------


class FoldRefused(Exception):
    """Inputs the fold refuses: step 6 fails (§7)."""


def exact(value: Any, where: str) -> Fraction:
    """A JSON number as the decimal it is written as (§6.9)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FoldRefused(f"{where}: {value!r} is not a number")
    if isinstance(value, int):
        return Fraction(value)
    if not math.isfinite(value):
        raise FoldRefused(f"{where}: not finite")
    return Fraction(repr(value))


def meets(top: int, n: int, share: Any) -> bool:
    """top/n meets share: top·q ≥ p·n for share = p/q (§6.9)."""
    s = exact(share, "share")
    return top * s.denominator >= s.numerator * n


def median(values: list[Fraction]) -> Fraction:
    """§8.1: the middle one, or the exact mean of the two middle ones."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def slots_of(votes: list[dict[str, Any]], judge: str, key: str, n: int
             ) -> list[dict[str, Any] | None]:
    """§8.1: the judge's votes for the key, sorted by sample, then empty slots up to N."""
    mine = [v for v in votes if v["judge"] == judge and v["criterion"] == key]
    samples = [v["sample"] for v in mine]
    if len(set(samples)) != len(samples):
        raise FoldRefused(f"duplicate sample index for {judge}/{key}")
    mine.sort(key=lambda v: v["sample"])
    out: list[dict[str, Any] | None] = list(mine)
    out.extend([None] * max(0, n - len(mine)))
    return out


def valid(slot: dict[str, Any] | None) -> bool:
    """§8.1: a vote with error null and an answer."""
    return slot is not None and slot["error"] is None and slot["answer"] is not None


def substantive(policy: dict[str, Any], slots: list[dict[str, Any] | None]) -> bool:
    """§8.1: at least one valid slot, and valid/slots meets min_valid_fraction."""
    v = sum(1 for s in slots if valid(s))
    return v >= 1 and meets(v, len(slots), policy["min_valid_fraction"])


def share_text(top: int, n: int) -> str:
    return f"{top}/{n}"  # §8.1: unreduced


def counts_text(counts: dict[str, int]) -> str:
    """§8.8: {'label': count, ...} in ascending code-point order."""
    return "{" + ", ".join(f"'{k}': {counts[k]}" for k in sorted(counts)) + "}"


def _base(kind: str, rule: str = FOLD_RULE) -> dict[str, Any]:
    """§6.8: every field at its "otherwise" value."""
    return {
        "kind": kind, "fold_rule": rule, "disposition": None, "rollout": None,
        "equivalent": None, "equivalence_settled": False, "reasons": [], "gates_failed": [],
        "scores": None, "q": None, "q_bp": None, "aggregation": None, "label": None,
        "agreement": None, "agreement_votes": None, "entropy": None, "independent_votes": 0,
        "missing": 0, "samples": 0, "valid_samples": 0, "sample_agreement": None,
        "criteria": [], "stability": None,
    }


# -- §8.2: the veto ------------------------------------------------------------------------


@dataclass
class Veto:
    failed: list[str]
    reasons: list[str]
    hard: bool


def veto_of(policy: dict[str, Any], gates: list[dict[str, Any]]) -> Veto:
    rubric = policy.get("rubric")
    hard_gates = list(rubric["hard_gates"]) if rubric is not None else []
    required = sorted(set(hard_gates) | {g["id"] for g in gates if g["required"] is True})
    last = {g["id"]: g for g in gates}  # the last gate with each id
    failed: list[str] = []
    reasons: list[str] = []
    hard = False
    for gate_id in required:
        gate = last.get(gate_id)
        if gate is None:
            failed.append(gate_id)
            reasons.append(f"required gate {gate_id} has no outcome")
        elif gate["outcome"] != "pass":
            failed.append(gate_id)
            hard = hard or gate["outcome"] == "fail"
            detail = f" ({gate['detail']})" if gate["detail"] else ""
            reasons.append(f"required gate {gate_id} {gate['outcome']}{detail}: veto")
    return Veto(failed, reasons, hard)


# -- §8.7: the tier rule -------------------------------------------------------------------


def family(judge: dict[str, Any]) -> str:
    """§8.1 (v2): the judge's declared model_family, else the one derived from its config."""
    if "model_family" in judge:
        return str(judge["model_family"])
    if judge["provider"] == "sim":
        return f"sim:{judge['model']}:seed={judge['seed']}"
    if judge["provider"].startswith("stub:") or judge["model"] == "":
        return f"{judge['provider']}:id={judge['id']}"
    return f"{judge['provider']}:{judge['model']}"


def tier_rule(tier: dict[str, Any], labels: list[str], panel_label: str | None,
              families: int | None = None) -> tuple[str, str]:
    n = len(labels)
    if n < tier["votes"]:
        return "escalate", f"too few independent votes: {n} of {tier['votes']} required"
    if families is not None and families < tier["votes"]:  # §8.7 case 1a, v2 only
        noun = "model family" if families == 1 else "model families"
        return "escalate", (f"{n} votes from {families} {noun}; the {tier['name']} tier needs "
                            f"{tier['votes']} independent families")
    counts = {label: labels.count(label) for label in set(labels)}
    top = max(counts.values())
    leaders = [label for label, c in counts.items() if c == top]
    if len(leaders) > 1:
        return "escalate", f"no majority among {n} independent votes ({counts_text(counts)})"
    majority = leaders[0]
    if not meets(top, n, tier["min_agreement"]):
        shown = f"{float(tier['min_agreement']):.4g}"  # C printf %.4g
        return "escalate", f"agreement {top}/{n} below the tier minimum {shown}"
    if panel_label is not None and majority != panel_label:
        return "escalate", "judges' majority and panel median disagree"
    if tier["adjudication"] and majority in ("accept", "A", "B", "tie"):
        return "escalate", "tier requires explicit adjudication before certification"
    return ("reject" if majority == "reject" else "accept"), f"{top}/{n} independent votes agree"


# -- §8.3: rubric --------------------------------------------------------------------------


def _rubric(policy: dict[str, Any], gates: list[dict[str, Any]], votes: list[dict[str, Any]],
            rule: str = FOLD_RULE) -> dict[str, Any]:
    rubric = policy["rubric"]
    criteria = rubric["criteria"]
    ids = [c["id"] for c in criteria]
    weights = [exact(c["weight"], f"weight {c['id']}") for c in criteria]
    minima = [c["minimum"] for c in criteria]
    threshold = exact(rubric["threshold"], "threshold")

    def q_of(s: list[Fraction]) -> Fraction:
        return sum((w * (x - 1) / 4 for w, x in zip(weights, s, strict=True)), Fraction(0))

    def below(s: list[Fraction]) -> list[str]:
        return [c for c, m, x in zip(ids, minima, s, strict=True) if m is not None and x < m]

    def label_of(s: list[Fraction]) -> str:
        return "accept" if q_of(s) >= threshold and not below(s) else "reject"

    def scores_of(answer: dict[str, Any]) -> list[Fraction]:
        scores = answer.get("scores")
        if not isinstance(scores, dict):
            raise FoldRefused("a valid rubric vote has no scores object")
        out = []
        for cid in ids:
            if cid not in scores:
                raise FoldRefused(f"scores.{cid} missing from a valid vote")
            x = exact(scores[cid], f"scores.{cid}")
            if not 1 <= x <= 5:
                raise FoldRefused(f"scores.{cid} = {x} outside 1-5")
            out.append(x)
        return out

    sample_labels: list[str] = []
    judge_scores: list[list[Fraction]] = []
    labels: list[str] = []
    voters: set[str] = set()
    total = 0
    for judge in policy["judges"]:
        slots = slots_of(votes, judge["id"], "rubric", judge["samples"])
        total += len(slots)
        mine = []
        for slot in slots:
            if valid(slot):
                assert slot is not None
                s = scores_of(slot["answer"])
                sample_labels.append(label_of(s))
                mine.append(s)
        if substantive(policy, slots):
            med = [median([s[j] for s in mine]) for j in range(len(ids))]
            judge_scores.append(med)
            labels.append(label_of(med))
            voters.add(family(judge))
    n = len(labels)
    families = None if rule == FOLD_RULE else len(voters)
    out = _base("rubric", rule)
    if families is not None:
        out["independent_families"] = families
    out.update(
        aggregation="median-of-judge-medians",
        independent_votes=n,
        missing=len(policy["judges"]) - n,
        samples=total,
        valid_samples=len(sample_labels),
        sample_agreement=(
            max(sample_labels.count("accept"), sample_labels.count("reject")) / len(sample_labels)
            if sample_labels else None
        ),
    )
    tier = policy["risk_tier"]
    veto = veto_of(policy, gates)
    if n == 0:
        disposition, why = "escalate", [f"too few independent votes: 0 of {tier['votes']} required"]
    else:
        panel = [median([s[j] for s in judge_scores]) for j in range(len(ids))]
        q = q_of(panel)
        panel_label = label_of(panel)
        top = max(labels.count("accept"), labels.count("reject"))
        out.update(
            scores={cid: float(x) for cid, x in zip(ids, panel, strict=True)},
            q=float(q),
            q_bp=math.floor(q * 10000 + Fraction(1, 2)),
            label=panel_label,
            agreement=top / n,
            agreement_votes=share_text(top, n),
        )
        disposition, reason = tier_rule(tier, labels, panel_label, families)
        why = [reason]
        if disposition == "reject":
            low = below(panel)
            why = [
                f"below per-criterion minimum: {', '.join(low)}" if low
                else f"Q {float(q):.4f} below threshold {float(rubric['threshold'])!r}"
            ]
    out["gates_failed"] = veto.failed
    if veto.failed:
        disposition = "reject" if veto.hard else "escalate"
        why = [*veto.reasons, *why]
    out.update(disposition=disposition, reasons=why)
    return out


# -- §8.4: pairwise ------------------------------------------------------------------------


@dataclass
class Consensus:
    n: int
    missing: int
    top: int
    agreement: float | None
    entropy: float | None
    majority: str | None


def preference(slot: dict[str, Any] | None) -> str | None:
    if not valid(slot):
        return None
    assert slot is not None
    p = slot["answer"].get("preference")
    if p not in ("A", "B", "tie", "abstain"):
        return None
    if slot["order"] == "BA" and p in ("A", "B"):
        return "B" if p == "A" else "A"
    return str(p)


def consensus(labels: list[str | None]) -> Consensus:
    counts = {"A": 0, "B": 0, "tie": 0}
    missing = 0
    for label in labels:
        if label in counts:
            counts[str(label)] += 1
        else:
            missing += 1  # abstain or none
    n = sum(counts.values())
    if n == 0:
        return Consensus(0, missing, 0, None, None, None)
    top = max(counts.values())
    total = 0.0
    for label in ("A", "B", "tie"):
        c = counts[label]
        if c:
            total += (c / n) * math.log(c / n)
    entropy = abs(-total / math.log(3))
    majority = next((label for label in ("A", "B", "tie") if 2 * counts[label] > n), None)
    return Consensus(n, missing, top, top / n, entropy, majority)


def _pairwise(policy: dict[str, Any], gates: list[dict[str, Any]], votes: list[dict[str, Any]],
              rule: str = FOLD_RULE) -> dict[str, Any]:
    sample_prefs: list[str | None] = []
    judge_labels: list[str | None] = []
    total = 0
    for judge in policy["judges"]:
        slots = slots_of(votes, judge["id"], "pairwise", judge["samples"])
        total += len(slots)
        prefs = [preference(s) for s in slots]
        sample_prefs.extend(prefs)
        own = consensus(prefs)
        ok = substantive(policy, slots) and own.majority is not None
        judge_labels.append(own.majority if ok else None)
    out = _base("pairwise", rule)
    families = None if rule == FOLD_RULE else len({
        family(j) for j, label in zip(policy["judges"], judge_labels, strict=True)
        if label in ("A", "B", "tie")})
    if families is not None:
        out["independent_families"] = families
    tier = policy["risk_tier"]
    n = 0
    if judge_labels:
        panel = consensus(judge_labels)
        everything = consensus(sample_prefs)
        n = panel.n
        out.update(
            label=panel.majority,
            agreement=panel.agreement,
            agreement_votes=share_text(panel.top, panel.n) if panel.n else None,
            entropy=panel.entropy,
            independent_votes=n,
            missing=panel.missing,
            samples=total,
            valid_samples=everything.n,
            sample_agreement=everything.agreement,
        )
    if n < tier["votes"] or not judge_labels:
        disposition = "escalate"
        reason = f"too few independent votes: {n} of {tier['votes']} required"
    else:
        disposition, reason = tier_rule(tier, [x for x in judge_labels if x is not None], None,
                                        families)
        if disposition == "accept" and out["label"] is None:
            disposition, reason = "escalate", "no strict majority among A, B and tie"
    why = [reason]
    veto = veto_of(policy, gates)
    out["gates_failed"] = veto.failed
    if veto.failed:
        disposition = "reject" if veto.hard else "escalate"
        why = [*veto.reasons, *why]
    out.update(disposition=disposition, reasons=why)
    return out


# -- §8.5: criteria ------------------------------------------------------------------------


def verdict_gate(tally: dict[str, int], blocker: bool, quorum: Any) -> tuple[str, str, int]:
    """§8.5 steps 3 and 5: (verdict, gate, top) of a tally over S slots."""
    size = sum(tally.values())
    top = max(tally.values())
    leaders = [label for label in ("yes", "no", "unsure") if tally[label] == top]
    verdict = leaders[0] if len(leaders) == 1 else "unsure"
    if size == 1:
        gate = "block" if blocker and verdict == "no" else ("pass" if verdict == "yes" else "warn")
    elif blocker and verdict == "no":
        gate = "block" if meets(top, size, quorum) else "warn"
    else:
        gate = "pass" if verdict == "yes" else "warn"
    return verdict, gate, top


def settles(tally: dict[str, int], rest: int, blocker: bool, quorum: Any) -> bool:
    """§8.5 curtailment: every filling of the ``rest`` empty slots gives one verdict and gate."""
    seen = set()
    for a in range(rest + 1):
        for b in range(rest + 1 - a):
            filled = {"yes": tally["yes"] + a, "no": tally["no"] + b,
                      "unsure": tally["unsure"] + rest - a - b}
            seen.add(verdict_gate(filled, blocker, quorum)[:2])
    return len(seen) == 1


def _criteria(policy: dict[str, Any], gates: list[dict[str, Any]], votes: list[dict[str, Any]],
              rule: str = FOLD_RULE) -> dict[str, Any]:
    suite = policy["criteria"]
    if not policy["judges"]:
        raise FoldRefused("a criteria campaign with no judge evaluated nothing")
    curtails = rule != FOLD_RULE and suite.get("curtail") is True  # §8.5, v2 only
    outcomes: list[dict[str, Any]] = []
    for judge in policy["judges"]:
        for item in suite["items"]:
            n = suite["blocker_samples"] if item["blocker"] else suite["samples"]
            slots = slots_of(votes, judge["id"], item["id"], n)
            tally = {"yes": 0, "no": 0, "unsure": 0}
            recorded: list[str] = []
            for slot in slots:
                if valid(slot):
                    assert slot is not None
                    verdict = slot["answer"].get("verdict")
                    if verdict not in tally:
                        raise FoldRefused(f"verdict {verdict!r} is not yes, no or unsure")
                    tally[verdict] += 1
                    recorded.append(verdict)
                else:
                    tally["unsure"] += 1
                    error = slot["error"] if slot is not None else None
                    recorded.append(f"error:{error}" if error else "error:missing")
            size = len(slots)
            blocker = item["blocker"]
            verdict, gate, top = verdict_gate(tally, blocker, suite["blocker_quorum"])
            outcome = {
                "judge": judge["id"], "criterion_id": item["id"], "blocker": blocker,
                "verdict": verdict, "samples": size, "agreement": top / size,
                "agreement_votes": share_text(top, size), "sample_verdicts": recorded,
                "gate": gate,
            }
            k = sum(1 for s in slots if s is not None)
            if curtails and k < n and all(
                    s is not None and s["sample"] == i for i, s in enumerate(slots[:k])):
                drawn = {"yes": 0, "no": 0, "unsure": 0}
                for label in recorded[:k]:
                    drawn[label if label in drawn else "unsure"] += 1
                if settles(drawn, n - k, blocker, suite["blocker_quorum"]):
                    outcome["drawn"] = k
                    outcome["sample_verdicts"] = [*recorded[:k], *["undrawn"] * (n - k)]
            outcomes.append(outcome)
    gates_ = [o["gate"] for o in outcomes]
    rollout = "BLOCK" if "block" in gates_ else "WARN" if "warn" in gates_ else "SHIP"
    why = [
        f"{o['judge']}/{o['criterion_id']}: {o['gate']} ({o['verdict']}, {o['agreement_votes']})"
        for o in outcomes if o["gate"] != "pass"
    ]
    veto = veto_of(policy, gates)
    if veto.failed:
        rollout = "BLOCK"
        why = [*veto.reasons, *why]
    out = _base("criteria", rule)
    if curtails:
        out["curtailment"] = {
            "rule": CURTAIL_RULE, "planned": sum(o["samples"] for o in outcomes),
            "drawn": sum(o.get("drawn", o["samples"]) for o in outcomes),
        }
    out.update(
        rollout=rollout,
        reasons=why,
        gates_failed=veto.failed,
        criteria=outcomes,
        stability=None if all(o["samples"] == 1 for o in outcomes) else {
            "min_blocker_agreement": suite["blocker_quorum"],
            "unstable_blocker_failures": sum(
                1 for o in outcomes if o["blocker"] and o["verdict"] == "no" and o["gate"] == "warn"
            ),
        },
        independent_votes=len(policy["judges"]),
        samples=sum(o["samples"] for o in outcomes),
        valid_samples=sum(
            1 for o in outcomes for s in o["sample_verdicts"]
            if not s.startswith("error") and s != "undrawn"
        ),
        missing=0,
    )
    return out


# -- §8.6: equivalence ---------------------------------------------------------------------


def _equivalence(policy: dict[str, Any], gates: list[dict[str, Any]], votes: list[dict[str, Any]],
                 rule: str = FOLD_RULE) -> dict[str, Any]:
    settings = policy.get("equivalence") or {
        "votes": 1, "min_agreement": 1, "abstain_as_neither": True,
    }
    out = _base("equivalence", rule)
    g = next((x for x in gates if x["id"] == "equivalence.deterministic"), None)
    if g is not None and g["outcome"] in ("pass", "fail"):
        equal = g["outcome"] == "pass"
        out.update(
            equivalent=equal, equivalence_settled=True,
            label="EQUIVALENT" if equal else "DIFFERENT",
            reasons=[f"settled deterministically by {g['tool']}"],
        )
        return out
    if not policy["judges"]:
        out["reasons"] = ["not settled deterministically and no judge in the panel"]
        return out
    slots: list[dict[str, Any] | None] = []
    for judge in policy["judges"]:
        slots.extend(slots_of(votes, judge["id"], "equivalence", settings["votes"]))
    decisions = []
    for slot in slots:
        d = slot["answer"].get("decision") if slot is not None and valid(slot) else None
        decisions.append(d if d in ("EQUIVALENT", "DIFFERENT", "ABSTAIN") else "PARSE_ERROR")
    outcome = {
        "EQUIVALENT": True,
        "DIFFERENT": False,
        "PARSE_ERROR": None,
        "ABSTAIN": None if settings["abstain_as_neither"] else False,
    }
    outcomes = [outcome[d] for d in decisions]
    size = len(decisions)
    k = min(settings["min_agreement"], size)
    yes, no = outcomes.count(True), outcomes.count(False)
    equivalent = True if yes >= k and yes > no else False if no >= k and no > yes else None
    counts = {d: decisions.count(d) for d in set(decisions)}
    top = max(counts.values())
    label = None
    if equivalent is not None:
        label = next(d for d in sorted(counts) if counts[d] == top)
    out.update(
        equivalent=equivalent,
        equivalence_settled=equivalent is not None,
        label=label,
        agreement=top / size,
        agreement_votes=share_text(top, size),
        independent_votes=len(policy["judges"]),
        samples=size,
        valid_samples=sum(1 for d in decisions if d != "PARSE_ERROR"),
        missing=sum(1 for d in decisions if d in ("ABSTAIN", "PARSE_ERROR")),
        reasons=[f"judge votes {counts_text(counts)}, min_agreement {settings['min_agreement']}"],
    )
    return out


_KINDS: dict[str, Callable[[dict[str, Any], list[Any], list[Any], str], dict[str, Any]]] = {
    "rubric": _rubric,
    "pairwise": _pairwise,
    "criteria": _criteria,
    "equivalence": _equivalence,
}


def derive_decision(policy: dict[str, Any], gates: list[dict[str, Any]],
                    votes: list[dict[str, Any]], rule: str) -> dict[str, Any]:
    """Step 6 (§8): the decision the fold gives on the recorded inputs."""
    if rule not in (FOLD_RULE, FOLD_RULE_V2):
        raise FoldRefused(f"unknown fold rule {rule!r}")
    panel = {j["id"] for j in policy["judges"]}
    for i, vote in enumerate(votes):
        if vote["judge"] not in panel:
            raise FoldRefused(f"votes[{i}].judge {vote['judge']!r} is not in the panel")
    return _KINDS[policy["kind"]](policy, gates, votes, rule)


def settle(decision: dict[str, Any], adjudication: dict[str, Any] | None) -> dict[str, Any]:
    """§8.9: the fold's decision settled by a reviewer's adjudication, if there is one."""
    if adjudication is None:
        return decision
    if decision["kind"] not in ("rubric", "pairwise") or decision["disposition"] != "escalate":
        raise FoldRefused("only an escalated rubric or pairwise decision can be adjudicated")
    if adjudication["disposition"] == "accept" and decision["gates_failed"]:
        raise FoldRefused("an adjudication cannot accept over a required gate that did not pass")
    why = (f"adjudicated {adjudication['disposition']} by {adjudication['reviewer']} at "
           f"{adjudication['at']} (the panel escalated)")
    return {**decision, "disposition": adjudication["disposition"], "adjudicated": True,
            "reasons": [why, *decision["reasons"]]}


# -- §8.10: grounding ----------------------------------------------------------------------

#: §8.10: the four claim labels, in the order ties and counts read them.
CLAIM_LABELS = ("supported", "contradicted", "unresolved", "not_applicable")
#: §8.10 rule 4's sentence.
NOT_MEASURED = "no applicable claim (every claim not applicable or of weight 0): not measured"
GROUNDING_FIELDS = {"claims", "coverage", "contradiction_rate", "gate", "reasons",
                    "unevidenced_material"}
CLAIM_FIELDS = {"id", "weight", "material", "label", "judge_labels", "agreement_votes",
                "evidence"}
#: §6.4: the inputs of claims from the work, absent when there are none; §8.10: the two
#: members a claim from the work has in decision.grounding.claims beside CLAIM_FIELDS.
WORK_INPUTS = {"claims", "claim_extraction"}
WORK_FIELDS = {"origin", "sha256"}


def claim_slot_label(slot: dict[str, Any] | None) -> str:
    """§8.10 rule 1: what one slot reads as."""
    if slot is None or slot["error"] is not None or slot["answer"] is None:
        return "unresolved"
    label = slot["answer"].get("label") if isinstance(slot["answer"], dict) else None
    if not isinstance(label, str):
        return "unresolved"
    if label not in CLAIM_LABELS:
        raise FoldRefused(f"claim label {label!r} is not one of {CLAIM_LABELS}")
    return label


def claim_plurality(labels: list[str]) -> tuple[str, int]:
    """§8.10 rules 1-2: (the one label with the largest count, else unresolved; that count,
    whichever label holds it)."""
    counts = {label: labels.count(label) for label in CLAIM_LABELS}
    top = max(counts.values())
    leaders = [label for label in CLAIM_LABELS if counts[label] == top]
    return (leaders[0] if len(leaders) == 1 else "unresolved"), top


def repr_text(value: Any) -> str:
    """§8.8 ``<T, repr>``: the number read as a double, as Python's repr writes a float."""
    return repr(float(value))


def fold_grounding(policy: dict[str, Any], artifact: str, votes: list[dict[str, Any]],
                   work: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """§8.10 rules 1-6: ``decision.grounding`` for the artifact; ``work``: ``inputs.claims``."""
    g = policy["grounding"]
    n = g["samples"]
    work = work or []
    claims = [c for c in g["claims"] if c["artifact"] == artifact] + work  # claim order
    if not claims and "submitted_weight" not in g and "extract" not in g:
        raise FoldRefused(f"artifact {artifact!r} has no claim in policy.grounding")
    if len({c["id"] for c in claims}) != len(claims):
        raise FoldRefused(f"artifact {artifact!r} has a claim id twice")
    references = {r["id"]: r for r in g["references"]}
    if any(ref not in references for c in work for ref in c["evidence"]):
        raise FoldRefused("a claim from the work cites an unknown reference")
    records: list[dict[str, Any]] = []
    for claim in claims:
        judge_labels = {}
        for judge in policy["judges"]:  # rule 1, panel order
            slots = slots_of(votes, judge["id"], f"claim:{claim['id']}", n)
            judge_labels[judge["id"]] = claim_plurality([claim_slot_label(x) for x in slots])[0]
        label, top = claim_plurality(list(judge_labels.values()))  # rule 2
        evidence = [{k: references[ref].get(k) for k in ("id", "source", "version", "sha256",
                                                          "span")}
                    for ref in claim["evidence"]]  # rule 3
        records.append({"id": claim["id"], "weight": claim["weight"],
                        "material": claim["material"], "label": label,
                        "judge_labels": judge_labels,
                        "agreement_votes": share_text(top, len(judge_labels)),
                        "evidence": evidence,
                        **{k: claim[k] for k in sorted(WORK_FIELDS) if "origin" in claim}})
    # Rule 5c (and rule 4's tail): material, and not (supported and citing evidence).
    missing = [c["id"] for c in records if c["material"]
               and not (c["label"] == "supported" and c["evidence"])
               ] if g.get("require_evidence_for_material") is True else []
    material_sentence = f"material claims without supporting evidence: {', '.join(missing)}"
    out: dict[str, Any] = {"claims": records, "unevidenced_material": missing}
    if not any(c["label"] != "not_applicable" and float(c["weight"]) > 0 for c in records):
        return {**out, "coverage": None, "contradiction_rate": None, "gate": "warn",
                "reasons": [NOT_MEASURED] + ([material_sentence] if missing else [])}
    total = supported = contradicted = 0.0  # rule 5: doubles, policy order
    for c in records:
        if c["label"] == "not_applicable":
            continue
        total += float(c["weight"])
        supported += float(c["weight"]) if c["label"] == "supported" else 0.0
        contradicted += float(c["weight"]) if c["label"] == "contradicted" else 0.0
    coverage, rate = supported / total, contradicted / total
    reasons, fired = [], set()
    most, least = g.get("max_contradiction_rate"), g.get("min_coverage")
    if most is not None and rate > float(most):  # a
        fired.add("block")
        reasons.append(f"contradiction rate {rate:.4f} > max_contradiction_rate "
                       f"{repr_text(most)}")
    if least is not None and coverage < float(least):  # b
        fired.add("warn")
        reasons.append(f"coverage {coverage:.4f} < min_coverage {repr_text(least)}")
    if missing:  # c
        fired.add("warn")
        reasons.append(material_sentence)
    gate = "block" if "block" in fired else "warn" if fired else "pass"
    return {**out, "coverage": coverage, "contradiction_rate": rate, "gate": gate,
            "reasons": reasons}


def apply_grounding(decision: dict[str, Any], grounding: dict[str, Any]) -> dict[str, Any]:
    """§8.10 "The decision": the kind's decision D changed by the grounding gate."""
    gate = grounding["gate"]
    out = {**decision, "grounding": grounding,
           "reasons": [*decision["reasons"], *(f"grounding: {r}" for r in grounding["reasons"])]}
    if decision["kind"] == "criteria":
        own = {"SHIP": "pass", "WARN": "warn", "BLOCK": "block"}[decision["rollout"]]
        both = {own, gate}
        out["rollout"] = "BLOCK" if "block" in both else "WARN" if "warn" in both else "SHIP"
    elif decision["kind"] == "rubric":
        if gate == "block":
            out["disposition"] = "reject"
        elif gate == "warn" and decision["disposition"] == "accept":
            out["disposition"] = "escalate"
    return out


def compare_grounding(derived: dict[str, Any] | None, recorded: Any) -> list[str]:
    """§8.10, step 7: coverage and contradiction rate as floats, every other member exactly."""
    if derived is None or recorded is None:
        return [] if derived is None and recorded is None else [
            f"decision.grounding: recorded {recorded!r}, re-derived {derived!r}"]
    if not isinstance(recorded, dict) or set(recorded) != GROUNDING_FIELDS:
        return ["decision.grounding does not have §8.10's members"]
    out = [f"decision.grounding.{key}: recorded {recorded[key]!r}, re-derived {derived[key]!r}"
           for key in ("coverage", "contradiction_rate")
           if not _same(derived[key], recorded[key], True)]
    out += [f"decision.grounding.{key}: recorded {recorded[key]!r}, re-derived {derived[key]!r}"
            for key in ("gate", "reasons", "unevidenced_material")
            if derived[key] != recorded[key]]
    claims = recorded["claims"]
    if not isinstance(claims, list) or len(claims) != len(derived["claims"]):
        return [*out, "decision.grounding.claims is not one object per claim of the artifact"]
    for mine, theirs in zip(derived["claims"], claims, strict=True):
        members = set(mine)  # CLAIM_FIELDS, and WORK_FIELDS for a claim from the work
        if not isinstance(theirs, dict) or set(theirs) != members:
            out.append(f"decision.grounding claim {mine['id']} does not have §8.10's members")
            continue
        out += [f"decision.grounding claim {mine['id']}.{key}: recorded {theirs[key]!r}, "
                f"re-derived {mine[key]!r}" for key in sorted(members)
                if not _same(mine[key], theirs[key], key == "weight")]
    return out


# -- step 7 --------------------------------------------------------------------------------


def _same(derived: Any, recorded: Any, is_float: bool) -> bool:
    """§7 step 7: integers, strings, booleans and nulls exactly; floats within 1e-12."""
    if derived is None or recorded is None:
        return derived is None and recorded is None
    if is_float:
        return (not isinstance(recorded, bool) and isinstance(recorded, int | float)
                and math.isclose(derived, recorded, rel_tol=FLOAT_REL_TOL))
    if isinstance(derived, bool) or isinstance(recorded, bool):
        return type(derived) is type(recorded) and derived == recorded
    return type(derived) is type(recorded) and derived == recorded


def compare_decision(derived: dict[str, Any], recorded: dict[str, Any]) -> list[str]:
    """Every §6.8 field, field by field; returns the mismatches."""
    out = []
    for key in DECISION_FIELDS:
        mine, theirs = derived[key], recorded[key]
        if key == "scores" and mine is not None and isinstance(theirs, dict):
            ok = mine.keys() == theirs.keys() and all(
                _same(mine[k], theirs[k], True) for k in mine)
        elif key == "criteria" and isinstance(theirs, list):
            ok = len(mine) == len(theirs) and all(
                isinstance(t, dict) and set(t) == set(m) and all(
                    _same(m[f], t[f], f == "agreement") for f in m)
                for m, t in zip(mine, theirs, strict=False))
        elif key == "stability" and mine is not None and isinstance(theirs, dict):
            ok = theirs.keys() == mine.keys() and _same(
                mine["min_blocker_agreement"], theirs["min_blocker_agreement"], True
            ) and _same(mine["unstable_blocker_failures"], theirs["unstable_blocker_failures"],
                        False)
        else:
            ok = _same(mine, theirs, key in FLOAT_FIELDS)
        if not ok:
            out.append(f"decision.{key}: recorded {theirs!r}, re-derived {mine!r}")
    return out


def replay_fidelity_level(policy: dict[str, Any]) -> str:
    """§6.1."""
    for judge in policy["judges"]:
        provider = judge["provider"]
        if not (provider in ("sim", "replay") or provider.startswith("stub:")):
            return "RF-1"
    return "RF-2"


def expected_judges_skipped(policy: dict[str, Any], gates: list[dict[str, Any]]) -> str | None:
    """§6.4.1: what ``jurat run`` records when it does not ask the judges."""
    for gate in gates:
        if gate["id"] == "equivalence.deterministic" and gate["outcome"] in ("pass", "fail"):
            return "settled deterministically by equivalence.deterministic"
        if gate["id"] == "subject.execution" and gate["outcome"] != "pass":
            return f"subject.execution {gate['outcome']}: the subject produced no output"
    if policy["kind"] == "equivalence" or policy.get("judge_after_veto") is True:
        return None
    veto = veto_of(policy, gates)
    if not veto.hard:
        return None
    ids = [g["id"] for g in gates if g["id"] in veto.failed and g["outcome"] == "fail"]
    noun = "gate" if len(ids) == 1 else "gates"
    return f"required {noun} {', '.join(ids)} did not pass (a veto no judge can change)"


def _derived_fields(pred: dict[str, Any]) -> list[str]:
    """Step 7's other derived fields (§7), and §6.4.1's judges_skipped."""
    problems = []
    campaign, policy = pred["campaign"], pred["campaign"]["policy"]
    if campaign["policy_sha256"] != sha256_hex(canonical(policy)):
        problems.append("campaign.policy_sha256 is not the digest of campaign.policy")
    if (campaign["id"], campaign["kind"]) != (policy["id"], policy["kind"]):
        problems.append("campaign id/kind differ from the policy's")
    rubric_version = policy["rubric"]["version"] if policy.get("rubric") else None
    if campaign["rubric_version"] != rubric_version:
        problems.append("campaign.rubric_version differs from policy.rubric.version")
    if pred["replay_fidelity_level"] != replay_fidelity_level(policy):
        problems.append("replay_fidelity_level is not the one §6.1 derives")
    if pred["fold_rule"] != pred["decision"]["fold_rule"]:
        problems.append("decision.fold_rule differs from predicate.fold_rule")
    judges = pred["judges"]
    if [j["id"] for j in judges] != [j["id"] for j in policy["judges"]]:
        problems.append("judges do not list the policy's panel in order")
    for part, judge in zip(judges, policy["judges"], strict=False):
        decoding = {k: judge[k] for k in ("temperature", "max_tokens", "seed", "structured_output")}
        if (part["provider"], part["model"]) != (judge["provider"], judge["model"]) \
                or part["decoding"] != decoding \
                or part["config_sha256"] != sha256_hex(canonical(judge)):
            problems.append(f"judges[{part['id']}] differs from the policy's judge config")
        ids = sorted({v["prompt_id"] for v in pred["votes"]
                      if v["judge"] == judge["id"] and v["prompt_id"]})
        if part["prompt_id"] != (ids[0] if len(ids) == 1 else None):  # §6.6, as jurat run writes
            problems.append(f"judges[{part['id']}].prompt_id is not its votes' one prompt id")
        # §6.6: present exactly for a prompt id the table there names, with the seed's id.
        if part.get("prompt_derived_from") != PROMPT_DERIVED_FROM.get(part["prompt_id"]):
            problems.append(f"judges[{part['id']}].prompt_derived_from is not §6.6's")
    skipped = pred["inputs"].get("judges_skipped")
    if skipped != expected_judges_skipped(policy, pred["gates"]):
        problems.append(f"inputs.judges_skipped {skipped!r} is not what §6.4.1 gives")
    return problems


def derive(pred: dict[str, Any]) -> dict[str, Any]:
    """Step 6 in full: the kind's rule (§8.2-§8.8), then grounding (§8.10), then the
    adjudication (§8.9), on the predicate's recorded inputs. Raises FoldRefused."""
    policy = pred["campaign"]["policy"]
    derived = derive_decision(policy, pred["gates"], pred["votes"], pred["fold_rule"])
    if "grounding" in policy:
        derived = apply_grounding(derived, fold_grounding(policy, pred["artifact"]["id"],
                                                          pred["votes"],
                                                          pred["inputs"].get("claims")))
    return settle(derived, pred["review"]["adjudication"])


def verify_receipt(bundle_bytes: bytes, public_pem: bytes, *,
                   artifact_sha256: str | None = None,
                   reference: tuple[bytes, bytes] | None = None) -> Verified:
    """Steps 1-7 of §7; raises DocVerifyError naming the first step that failed.
    ``reference``: (the campaign's reference key, a reference's exact bytes), §7 step 5."""
    bundle, payload, signature, hint = _envelope(bundle_bytes)
    if bundle["dsseEnvelope"]["payloadType"] != PAYLOAD_TYPE:
        raise DocVerifyError(2, f"payloadType is not {PAYLOAD_TYPE}")
    _signature(bundle, payload, signature, hint, public_pem)
    doc = _statement(payload)
    reference_checked = _subject(doc, artifact_sha256, reference)
    pred = doc["predicate"]
    try:
        derived = derive(pred)
    except (FoldRefused, KeyError, TypeError, AttributeError) as exc:
        raise DocVerifyError(6, f"the fold refused the inputs: {exc}") from exc
    problems = _derived_fields(pred) + compare_decision(derived, pred["decision"])
    if derived.get("adjudicated") != pred["decision"].get("adjudicated"):
        problems.append("decision.adjudicated is not what §8.9 gives")
    problems += compare_grounding(derived.get("grounding"), pred["decision"].get("grounding"))
    for key in ("independent_families", "curtailment"):  # §6.8: v2 only, exact
        if derived.get(key) != pred["decision"].get(key):
            problems.append(f"decision.{key}: recorded {pred['decision'].get(key)!r}, "
                            f"re-derived {derived.get(key)!r}")
    if problems:
        raise DocVerifyError(7, "; ".join(problems))
    return Verified(statement=doc, derived=derived, compared=list(DECISION_FIELDS),
                    reference_checked=reference_checked)


# -- §12: inclusion proofs -----------------------------------------------------------------


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode("utf-8") + b"\n" + b"\x01" + public).digest()[:4]


def _checkpoint(note: str, log_key_line: str) -> tuple[int, bytes]:
    """§12.2 and §12.3 step 1: the signed checkpoint's (tree size, root)."""
    if "\r" in note or any(ord(ch) < 0x20 and ch != "\n" for ch in note):
        raise DocVerifyError(8, "control characters in the checkpoint")
    body, sep, sigs = note.partition("\n\n")
    if not sep or not sigs.endswith("\n"):
        raise DocVerifyError(8, "the checkpoint has no signature block")
    body += "\n"
    lines = body[:-1].split("\n")
    if len(lines) < 3 or not lines[0] or not re.fullmatch(r"0|[1-9][0-9]*", lines[1]):
        raise DocVerifyError(8, "the checkpoint body is not origin, size, root")
    root = base64.b64decode(lines[2], validate=True)
    if len(root) != 32 or base64.b64encode(root).decode() != lines[2]:
        raise DocVerifyError(8, "the checkpoint root is not a canonical base64 SHA-256")
    name, key_id_hex, encoded = log_key_line.strip().split("+", 2)
    raw = base64.b64decode(encoded, validate=True)
    if len(raw) != 33 or raw[0] != 1 or _key_id(name, raw[1:]).hex() != key_id_hex.lower():
        raise DocVerifyError(8, "the log key line is not an Ed25519 verifier key")
    public = Ed25519PublicKey.from_public_bytes(raw[1:])
    for line in sigs[:-1].split("\n"):
        if not line.startswith("\u2014 "):
            raise DocVerifyError(8, "malformed signature line")
        signer, _, blob_text = line[2:].rpartition(" ")
        blob = base64.b64decode(blob_text, validate=True)
        if signer != name or blob[:4] != _key_id(name, raw[1:]):
            continue
        try:
            public.verify(blob[4:], body.encode("utf-8"))
        except InvalidSignature as exc:
            raise DocVerifyError(8, "the checkpoint signature does not verify") from exc
        return int(lines[1]), root
    raise DocVerifyError(8, "no signature by the log key on the checkpoint")


def _audit_root(leaf: bytes, index: int, size: int, path: list[bytes]) -> bytes:
    """§12.3 step 5 (RFC 9162 inclusion)."""
    if not 0 <= index < size:
        raise DocVerifyError(8, "leaf index outside the tree")
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if len(p) != 32:
            raise DocVerifyError(8, "an audit path hash is not 32 bytes")
        if sn == 0:
            raise DocVerifyError(8, "audit path longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = _node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = _node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise DocVerifyError(8, "audit path shorter than the tree is deep")
    return r


def check_inclusion(receipt: bytes, proof_file: bytes, checkpoint: str, log_key_line: str) -> int:
    """§12.3: the receipt is a leaf of the log under the signed checkpoint; returns its seq."""
    doc = strict_json(proof_file)
    if not isinstance(doc, dict) or set(doc) != {"entry", "proof", "checkpoint"}:
        raise DocVerifyError(8, "the proof file is not {entry, proof, checkpoint}")
    size, root = _checkpoint(checkpoint, log_key_line)
    entry, proof = doc["entry"], doc["proof"]
    if sha256_hex(canonical(entry["payload"])) != entry["payload_sha256"]:
        raise DocVerifyError(8, "the payload is not the entry's")
    hashed = canonical({
        "format": "jurat.ledger.entry/v1",
        **{k: entry[k] for k in ("seq", "kind", "job_id", "campaign_id", "artifact_id",
                                 "payload_sha256", "recorded_at", "prev_hash")},
    })
    if sha256_hex(hashed) != entry["entry_hash"]:
        raise DocVerifyError(8, "entry_hash is not the SHA-256 of the entry bytes")
    leaf = hashlib.sha256(b"\x00" + hashed).digest()
    if leaf.hex() != entry["leaf_hash"]:
        raise DocVerifyError(8, "leaf_hash is not the entry's leaf")
    if (proof["leaf_index"], proof["leaf_hash"]) != (entry["seq"], entry["leaf_hash"]):
        raise DocVerifyError(8, "the proof is for another entry")
    if (proof["tree_size"], proof["root_hash"]) != (size, root.hex()):
        raise DocVerifyError(8, "the proof is for another checkpoint")
    path = [bytes.fromhex(h) for h in proof["hashes"]]
    if _audit_root(leaf, proof["leaf_index"], proof["tree_size"], path) != root:
        raise DocVerifyError(8, "the audit path does not reach the checkpoint's root")
    if entry["kind"] != "receipt":
        raise DocVerifyError(8, "the entry is not a receipt")
    data = strict_b64(entry["payload"]["receipt"], "payload.receipt")
    if sha256_hex(data) != entry["payload"]["receipt_sha256"] or data != receipt:
        raise DocVerifyError(8, "the entry is not this receipt")
    check_entry_binding(entry, receipt)
    return int(entry["seq"])


#: §12.1: the identity an adjudicated review's ledger job is derived under.
ADJUDICATION_JOB_IDENTITY = "jurat.service.adjudication/v1"
RECEIPT_PAYLOAD_FIELDS = {"receipt", "receipt_sha256", "review_version", "supersedes"}


def check_entry_binding(entry: dict[str, Any], receipt: bytes) -> None:
    """§12.1: the entry's job, campaign, artifact and payload members are the receipt's; an
    adjudicated review's job is derived from the job it reviews, which ``adjudicates``
    names."""
    pred = strict_json(strict_b64(strict_json(receipt)["dsseEnvelope"]["payload"],
                                  "payload"))["predicate"]
    payload, review = entry["payload"], pred["review"]
    job = pred["inputs"]["job_id"]
    adjudicated = review["adjudication"] is not None
    members = RECEIPT_PAYLOAD_FIELDS | ({"adjudicates"} if adjudicated else set())
    if set(payload) != members:
        raise DocVerifyError(8, f"the entry's payload members are not §12.1's {sorted(members)}")
    if (payload["review_version"], payload["supersedes"]) != (review["version"],
                                                              review["supersedes"]):
        raise DocVerifyError(8, "the entry's review_version/supersedes are not the receipt's")
    if (entry["campaign_id"], entry["artifact_id"]) != (pred["campaign"]["id"],
                                                        pred["artifact"]["id"]):
        raise DocVerifyError(8, "the entry's campaign or artifact is not the receipt's")
    expected = job
    if adjudicated:
        if payload["adjudicates"] != job:
            raise DocVerifyError(8, "payload.adjudicates is not the reviewed job "
                                 "(predicate.inputs.job_id)")
        expected = sha256_hex(canonical({"identity": ADJUDICATION_JOB_IDENTITY, "job": job,
                                         "review_version": review["version"]}))
    if entry["job_id"] != expected:
        raise DocVerifyError(8, "the entry's job_id is not the one §12.1 gives")
