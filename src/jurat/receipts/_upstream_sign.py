"""Upstream (Stage 1/2) receipts as an operator's stage tool makes them: what a campaign's
``[upstream]`` check takes (runner/_upstream.py), signed with the keys and the bundle jurat
signs its own receipts with (docs/receipt-format.md §2-§5, "Upstream receipts").

Seed 000: the oracle's input is "a frozen candidate version with authenticated Stage 1 and
Stage 2 evidence". A stage tool (the Stage 1 structural admission, the Stage 2 review)
calls ``sign_upstream`` (or ``jurat upstream sign``) once the stage has passed a
candidate's bytes; the contributor submits the receipt with the candidate, and the
campaign that trusts the stage's key binds it.

What is signed is an admission: the check reads no outcome, so any receipt a stage's key
signs counts as that stage's evidence for those bytes. A stage tool that found a failure
therefore signs nothing; there is no "fail" receipt to hand in by mistake (or on purpose).

The statement is built from a typed record (``UpstreamPredicate``) and checked against the
rules of the check before it is signed, so a receipt this module signs is one the check
accepts for its stage and bytes until its ``not_after``: it is never refused for its form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

import pydantic
from pydantic import Field

from jurat.canonical import canonical_json
from jurat.errors import ConfigError
from jurat.models import Frozen
from jurat.models._campaign import STAGE_PATTERN
from jurat.models._invalid import invalid
from jurat.receipts._bundle import sign_payload
from jurat.receipts._keys import PrivateKey
from jurat.receipts._predicate import STATEMENT_TYPE

__all__ = ["UPSTREAM_PREDICATE_TYPE", "UpstreamPredicate", "sign_upstream", "upstream_time"]

#: The predicate type of the receipts jurat signs for a stage: what ``[upstream]`` binds
#: as the receipt's ``name`` (docs/receipt-format.md §6.4, ``inputs.upstream_receipts``).
UPSTREAM_PREDICATE_TYPE = "https://jurat.dev/upstream/v1"
_SHA256 = r"^[0-9a-f]{64}$"
#: Ids as the service takes them (a campaign id, a task id): names, not text.
_ID = r"^[A-Za-z0-9._-]{1,200}$"
_CHECK = r"^[A-Za-z0-9._:/-]{1,128}$"


def _absent(value: object) -> bool:
    return value is None


def upstream_time(moment: datetime) -> str:
    """A time as an upstream receipt (and jurat) writes it: UTC, RFC 3339, microseconds,
    ``Z`` (``2026-02-01T09:30:00.000000Z``), the form ``[upstream]`` reads."""
    if moment.tzinfo is None:
        raise ConfigError("an upstream receipt's times are UTC: give an aware datetime "
                          "(fix: datetime.now(UTC), or a time with +00:00)")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class UpstreamPredicate(Frozen):
    """The predicate of an upstream receipt (``https://jurat.dev/upstream/v1``). The check
    reads ``stage``, ``issued_at`` and ``not_after``; the rest is the stage's own record,
    signed with it and read by people, not by the check."""

    stage: str = Field(pattern=STAGE_PATTERN)
    """The stage that passed the bytes, as the campaign's ``[upstream] keys`` name it
    (``stage1``); the key that signs must be that stage's key, or the receipt is of a
    foreign stage."""
    issued_at: str
    """When the stage passed them (UTC, RFC 3339): a later receipt of the same stage for
    the same bytes supersedes this one."""
    not_after: str | None = Field(None, exclude_if=_absent)
    """Until when the receipt holds (UTC, RFC 3339); absent: until superseded."""
    campaign: str = Field(pattern=_ID)
    """The campaign id the stage admitted the candidate to. The check does not compare it
    with the campaign's (a campaign trusts a key, and a key that signs for several
    campaigns vouches for the bytes in each): it says what the stage meant."""
    task: str | None = Field(None, pattern=_ID, exclude_if=_absent)
    """The task the candidate answers, when the campaign has ``[[tasks]]``."""
    checks: tuple[str, ...] = Field((), max_length=64)
    """The names of the stage's checks that passed (``lint``, ``typecheck``), in the
    stage's order: its own words for what it checked, each 1-128 characters of
    ``A-Z a-z 0-9 . _ : / -``."""

    @pydantic.field_validator("checks")
    @classmethod
    def _check_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not re.fullmatch(_CHECK, name):
                raise ValueError(f"check name {name[:40]!r} is not 1-128 characters of "
                                 "A-Z a-z 0-9 . _ : / -")
        if len(set(value)) != len(value):
            raise ValueError("a check is named twice")
        return value


class _Subject(Frozen):
    """The statement's one subject: the candidate's bytes."""

    name: str = Field(min_length=1, max_length=200)
    """A name for the bytes (the artifact's file name); informative."""
    digest: dict[str, str]
    """``{"sha256": <hex>}``: what the check compares with the artifact's sha256."""

    @pydantic.field_validator("digest")
    @classmethod
    def _digest_is_sha256(cls, value: dict[str, str]) -> dict[str, str]:
        if set(value) != {"sha256"} or not re.fullmatch(_SHA256, value["sha256"]):
            raise ValueError("the digest is {sha256: 64 lower-case hex digits}")
        return value


class _Statement(Frozen):
    """The in-toto Statement v1 an upstream receipt signs."""

    model_config = pydantic.ConfigDict(populate_by_name=True)

    statement_type: str = Field(alias="_type")
    """``https://in-toto.io/Statement/v1``."""
    subject: tuple[_Subject, ...] = Field(min_length=1, max_length=1)
    """The candidate: exactly one subject."""
    predicate_type: str = Field(alias="predicateType")
    """``https://jurat.dev/upstream/v1``."""
    predicate: UpstreamPredicate
    """What the stage says of the bytes."""


#: What each name the predicate holds looks like, in the words of its fix.
_FORMS = {
    "stage": (STAGE_PATTERN, "1-64 lower-case letters, digits, '.', '_' or '-', starting with "
              "a letter or digit: the stage as the campaign's [upstream] keys name it"),
    "campaign": (_ID, "the [campaign] id: 1-200 letters, digits, '.', '_' or '-'"),
    "task": (_ID, "a [[tasks]] id: 1-200 letters, digits, '.', '_' or '-'"),
}


def _names(stage: str, campaign: str, task: str | None, checks: Sequence[str]) -> None:
    """ConfigError naming the first value the record would refuse, in words (the
    record's own validation stays the backstop)."""
    for name, value in (("stage", stage), ("campaign", campaign), ("task", task)):
        pattern, form = _FORMS[name]
        if value is not None and not re.fullmatch(pattern, value):
            raise ConfigError(f"{name} {value[:80]!r} is not a {name} name (fix: {form})")
    for check in checks:
        if not re.fullmatch(_CHECK, check):
            raise ConfigError(f"check {check[:80]!r} is not a check name (fix: 1-128 "
                              "letters, digits, '.', '_', ':', '/' or '-')")


def _build(**fields: object) -> UpstreamPredicate:
    try:
        return UpstreamPredicate.model_validate(fields)
    except pydantic.ValidationError as exc:
        raise invalid(exc, UpstreamPredicate, fields, ConfigError,
                      source="upstream receipt") from exc


def sign_upstream(
    *,
    stage: str,
    campaign: str,
    artifact_sha256: str,
    key: PrivateKey,
    artifact_name: str = "artifact",
    task: str | None = None,
    checks: Sequence[str] = (),
    issued_at: datetime | None = None,
    not_after: datetime | None = None,
) -> bytes:
    """The receipt (a Sigstore bundle v0.3, RFC 8785 bytes, as jurat writes its own) in
    which ``key`` says that stage ``stage`` passed the bytes whose sha256 is
    ``artifact_sha256`` (hex, or ``sha256:<hex>``), at ``issued_at`` (default now), valid
    until ``not_after`` (default: until superseded).

    Raises ConfigError naming the field and the fix for anything the ``[upstream]`` check
    would refuse for its form: a stage name or id it does not take, a digest that is not
    a sha256, a ``not_after`` not after ``issued_at`` (expired when it is made).
    """
    digest = artifact_sha256.lower().removeprefix("sha256:")
    if not re.fullmatch(_SHA256, digest):
        raise ConfigError("the artifact digest is not a sha256 (fix: sha256:<64 hex digits>, "
                          "the digest of the candidate's exact bytes)")
    _names(stage, campaign, task, checks)
    issued = issued_at or datetime.now(UTC)
    issued_text = upstream_time(issued)  # first: a naive time is refused, never compared
    expires = None if not_after is None else upstream_time(not_after)
    if not_after is not None and not_after <= issued:
        raise ConfigError(f"not_after {expires} is not after issued_at {issued_text}: the "
                          "receipt would be refused as expired (fix: a later not_after, or "
                          "none)")
    predicate = _build(stage=stage, issued_at=issued_text, not_after=expires,
                       campaign=campaign, task=task, checks=tuple(checks))
    try:
        statement = _Statement(statement_type=STATEMENT_TYPE,
                               subject=(_Subject(name=artifact_name,
                                                 digest={"sha256": digest}),),
                               predicate_type=UPSTREAM_PREDICATE_TYPE, predicate=predicate)
    except pydantic.ValidationError as exc:
        raise invalid(exc, _Statement, {"subject": [{"name": artifact_name}]}, ConfigError,
                      source="upstream receipt") from exc
    payload = canonical_json(statement.model_dump(mode="json", by_alias=True))
    return sign_payload(payload, key)
