"""A campaign's required qualification: each judge with ``qualification = { record, max_age_days }``
is sent nothing until its record is found, verified, passing and current.

The record is what `jurat qualify --ledger` stored in the ledger (an entry of kind
``qualification_record`` whose job id is the record's digest). `jurat run` and `jurat
serve` check, before anything is sent or written (ConfigError, exit 3), in this order:

1. the ledger holds the record the campaign names by digest;
2. its signature verifies with the run's receipt key, and every figure re-derives from
   its signed samples (``verify_record``);
3. it qualified this judge: a subject whose digest is the judge's identity
   (``judge_identity``: the configuration that makes its answers, without its id, sample
   count, limits or prices), for this campaign's kind;
4. the judge passed: kappa against gold met the seed's 0.8 target (when the record had
   gold), and the false-block rate implied for the record's N and quorum, with the vote
   correlation measured (beta-binomial), is within the record's budget;
5. it is current: its qualification started at most ``max_age_days`` ago.

The requirement is part of the policy, so every receipt cites the record's digest in
``policy.judges[].qualification`` and a verifier finds the record it relied on.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Sequence
from typing import Any

from jurat.canonical import loads_strict
from jurat.errors import ConfigError, JuratError
from jurat.ledger import Ledger
from jurat.models import JudgeConfig, Policy
from jurat.qualify._identity import judge_identity
from jurat.receipts import receipt_digest
from jurat.receipts._bundle import parse_bundle
from jurat.receipts._keys import PublicKey

__all__ = ["RECORD_KIND", "find_record", "judge_identity", "refuse_unqualified",
           "store_record"]

#: The ledger entry kind of a stored qualification record.
RECORD_KIND = "qualification_record"
_DAY_S = 86400


def store_record(ledger: Ledger, bundle: bytes) -> str:
    """Append the signed record to ``ledger`` (once: the same record again is a no-op);
    its sha256 hex."""
    digest = receipt_digest(bundle)
    if find_record(ledger, digest) is None:
        ledger.append(RECORD_KIND, digest, {
            "record_sha256": digest,
            "bundle_base64": base64.b64encode(bundle).decode("ascii")})
    return digest


def find_record(ledger: Ledger, digest: str) -> bytes | None:
    """The record of sha256 ``digest`` (hex) stored in ``ledger``, or None."""
    for entry in ledger.entries(kind=RECORD_KIND, job_id=digest):
        bundle = base64.b64decode(str(entry.payload.get("bundle_base64", "")))
        if receipt_digest(bundle) == digest:
            return bundle
    return None


def _statement(bundle: bytes) -> dict[str, Any]:
    statement: dict[str, Any] = loads_strict(parse_bundle(bundle).payload)
    return statement


def _figures_for(judge: JudgeConfig, statement: dict[str, Any]) -> dict[str, Any] | None:
    identity = judge_identity(judge)
    names = [s["name"].removeprefix("judge:") for s in statement.get("subject", [])
             if s.get("digest", {}).get("sha256") == identity]
    for figures in statement["predicate"]["figures"]:
        if figures["judge"] in names:
            found: dict[str, Any] = figures
            return found
    return None


def _failures(figures: dict[str, Any]) -> list[str]:
    out = []
    if figures.get("kappa_met") is False:
        kappa = figures["kappa"]["value"]
        out.append(f"kappa against gold {kappa:.3f} is below the 0.8 target")
    rate = figures["false_block"]["beta_binomial"]["value"]
    if rate is None or rate > figures["budget"]:
        shown = "undefined" if rate is None else f"{rate:.4f}"
        out.append(f"implied false-block rate {shown} at N = {figures['campaign_samples']} "
                   f"exceeds the budget {figures['budget']}")
    return out


def _check_one(judge: JudgeConfig, index: int, policy: Policy, ledger: Ledger,
               key: PublicKey, now: float) -> str:
    from jurat.qualify._record import verify_record

    required = judge.qualification
    assert required is not None
    field = f"judges[{index}].qualification.record"
    digest = required.record.removeprefix("sha256:")
    # 1. the ledger holds it
    bundle = find_record(ledger, digest)
    if bundle is None:
        raise ConfigError(
            f"{field}: judge {judge.id!r} requires qualification record {required.record}, "
            f"which the ledger {ledger.url} does not hold (fix: run `jurat qualify "
            f"QUALIFICATION.toml --ledger {ledger.url}` and write the digest it prints here)")
    # 2. signature and figures
    try:
        verify_record(bundle, key)
    except JuratError as exc:
        raise ConfigError(f"{field}: record {required.record} does not verify with the run's "
                          f"key: {exc} (fix: qualify again with the key this run signs "
                          "with)") from exc
    statement = _statement(bundle)
    # 3. this judge, this kind
    figures = _figures_for(judge, statement)
    if figures is None:
        raise ConfigError(f"{field}: record {required.record} did not qualify judge "
                          f"{judge.id!r} as configured here (its model, endpoint or "
                          "decoding differ; fix: qualify this configuration)")
    if statement["predicate"]["kind"] != policy.kind:
        raise ConfigError(f"{field}: record {required.record} qualified judge {judge.id!r} "
                          f"on a {statement['predicate']['kind']} campaign, not "
                          f"{policy.kind} (fix: qualify on a {policy.kind} set)")
    # 4. passing
    failures = _failures(figures)
    if failures:
        raise ConfigError(f"{field}: judge {judge.id!r} did not pass qualification "
                          f"{required.record}: {'; '.join(failures)} (fix: a better judge, "
                          "a larger N, or a new qualification)")
    # 5. current
    started = int(statement["predicate"]["design"]["started_unix"])
    age_days = (now - started) / _DAY_S
    if age_days > required.max_age_days:
        raise ConfigError(f"{field}: qualification {required.record} of judge {judge.id!r} "
                          f"is {age_days:.0f} days old, over max_age_days = "
                          f"{required.max_age_days} (fix: run `jurat qualify` again)")
    return (f"judge {judge.id}: qualified by {required.record} "
            f"({age_days:.1f} of {required.max_age_days} days)")


def refuse_unqualified(policy: Policy, ledger: Ledger, key: PublicKey, *,
                       now: float | None = None) -> Sequence[str]:
    """ConfigError (exit 3) for the first required judge without a passing, current
    record; otherwise a line per required judge saying which record qualified it."""
    now = time.time() if now is None else now
    return [_check_one(judge, index, policy, ledger, key, now)
            for index, judge in enumerate(policy.judges) if judge.qualification is not None]
