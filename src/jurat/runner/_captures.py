"""Live references, captured once (seed 000, "Factual grounding and hallucination audit":
"retrieve authorized live sources and preserve enough non-sensitive evidence", "both judges
should inspect the same captured evidence version"; docs/grounding.md, "Live references").

A ``[[grounding.references]]`` entry with a ``url`` is fetched by ``jurat run`` after the
ledger opens and before anything is sent, through the SSRF-safe fetcher
(``jurat.grounding.Fetcher``), from the origins ``[grounding] origins`` allows
(``allow_private`` only for the exact origins it names). The body is stored
content-addressed in ``captures/<sha256>`` beside the ledger's checkpoint file, and a
``job_received`` entry of the capture's own job (``{"capture": campaign id, "reference":
reference id}``, no campaign id on the entry, so no campaign listing counts it) records
url, final URL, retrieval time, status, type, length and sha256. A re-run finds that
entry and reuses the stored bytes without a request; ``--recapture`` fetches again.

The capture becomes part of the reference in the policy (``sha256``, ``version``,
``capture``), so it is in every receipt and in the policy digest: a recapture is always
another policy (its retrieval time is the reference's ``version``, same bytes or not),
which the live-policy rule (runner/_live.py) refuses for a campaign the ledger already
holds: new evidence is a new campaign version (a new ``[campaign] id``), never the same
verdicts re-decided.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import JsonValue

from jurat.campaign import campaign_line
from jurat.canonical import digest_json
from jurat.errors import CampaignError
from jurat.ledger import Ledger
from jurat.models import Campaign
from jurat.models._grounding import CaptureRecord, ReferenceSpec

if TYPE_CHECKING:  # without importing httpx at start-up
    from jurat.grounding import Fetcher, RetrievalPolicy

__all__ = ["Captured", "capture_job", "capture_references", "captures_dir", "record_captures"]

FetcherFactory = Callable[["RetrievalPolicy"], "Fetcher"]


@dataclass(frozen=True)
class Captured:
    """A campaign whose ``url`` references are pinned to captures, and what to record."""

    campaign: Campaign
    """The campaign with every ``url`` reference's capture in its policy."""
    fetched: tuple[tuple[str, dict[str, JsonValue]], ...]
    """(job id, payload) of each capture fetched in this run, to append to the ledger."""
    requests: int
    """How many references were fetched (0 on a re-run: every capture reused)."""


def captures_dir(ledger: Ledger) -> Path:
    """``captures/`` beside the ledger's checkpoint file: next to a SQLite ledger's file,
    under ``$XDG_STATE_HOME/jurat/checkpoints/`` for PostgreSQL."""
    return ledger.checkpoint_path.parent / "captures"


def capture_job(campaign_id: str, reference_id: str) -> str:
    """The ledger job a reference's captures are recorded under."""
    return digest_json({"capture": campaign_id, "reference": reference_id})


def capture_references(campaign: Campaign, ledger: Ledger, *, recapture: bool = False,
                       fetcher: FetcherFactory | None = None) -> Captured:
    """Pin every ``url`` reference to its capture: the one the ledger records (its bytes
    checked by sha256), else, or with ``recapture``, a new one. Nothing is written to the
    ledger here (``record_captures`` does, once the live-policy rule has passed); bytes are
    stored content-addressed, which loses nothing. CampaignError (exit 3) names the
    reference and the fetcher's refusal."""
    grounding = campaign.policy.grounding
    if grounding is None or all(spec.url is None for spec in grounding.references):
        return Captured(campaign, (), 0)
    store = captures_dir(ledger)
    references: list[ReferenceSpec] = []
    fetched: list[tuple[str, dict[str, JsonValue]]] = []
    for index, spec in enumerate(grounding.references):
        if spec.url is None:
            references.append(spec)
            continue
        job = capture_job(campaign.id, spec.id)
        record = None if recapture else _recorded(ledger, job, spec.url)
        if record is None:
            record, body = _fetch(campaign, index, spec, fetcher)
            _store(store, record.sha256, body)
            fetched.append((job, {"capture": record.model_dump(mode="json"),
                                  "campaign": campaign.id, "reference": spec.id}))
        path = store / record.sha256
        _check_stored(campaign, index, spec, path, record)
        references.append(spec.model_copy(update={
            "source": spec.source or spec.url, "version": record.retrieved_at,
            "sha256": record.sha256, "capture": record, "captured_file": str(path)}))
    policy = campaign.policy.model_copy(
        update={"grounding": grounding.model_copy(update={"references": tuple(references)})})
    return Captured(campaign.model_copy(update={"policy": policy}), tuple(fetched),
                    len(fetched))


def record_captures(ledger: Ledger, captured: Captured) -> None:
    """Append a ``job_received`` entry for each capture fetched in this run."""
    for job, payload in captured.fetched:
        ledger.append("job_received", job, payload)


def _recorded(ledger: Ledger, job: str, url: str) -> CaptureRecord | None:
    """The latest capture of ``url`` the ledger records for the reference's job."""
    latest = None
    for entry in ledger.entries(job_id=job, kind="job_received"):
        record = entry.payload.get("capture")
        if isinstance(record, dict) and record.get("url") == url:
            latest = CaptureRecord.model_validate(record)
    return latest


def _fail(campaign: Campaign, index: int, message: str, fix: str) -> CampaignError:
    field = f"grounding.references[{index}].url"
    return CampaignError(message, file=campaign.source, field=field,
                         line=campaign_line(campaign.source, field), fix=fix)


def _fetch(campaign: Campaign, index: int, spec: ReferenceSpec,
           fetcher: FetcherFactory | None) -> tuple[CaptureRecord, bytes]:
    # Here, not at the top: the retrieval stack (httpx) only matters to live references.
    from jurat.grounding import Fetcher, Origin, RetrievalPolicy, RetrievalRefused

    grounding = campaign.policy.grounding
    assert grounding is not None and spec.url is not None
    policy = RetrievalPolicy(
        origins=tuple(Origin(url=o, allow_private=o in grounding.allow_private)
                      for o in grounding.origins),
        max_bytes=campaign.intake.max_artifact_bytes)
    try:
        got = asyncio.run((fetcher or Fetcher)(policy).fetch(spec.url))
    except RetrievalRefused as exc:
        cause = f" ({exc.cause})" if exc.cause else ""
        raise _fail(campaign, index,
                    f"reference {spec.id!r}: {spec.url} refused: {exc.reason}{cause}: {exc}",
                    "fix the url or [grounding] origins / allow_private; nothing was sent "
                    "or written") from exc
    try:
        got.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(campaign, index, f"reference {spec.id!r}: {spec.url} is not UTF-8 text",
                    "name a text page; nothing was sent or written") from exc
    cap = got.capture
    record = CaptureRecord(url=spec.url, final_url=cap.final_url,
                           retrieved_at=cap.retrieved_at, status=cap.status,
                           content_type=cap.content_type, length=cap.byte_length,
                           sha256=cap.sha256)
    return record, got.body


def _store(store: Path, sha256: str, body: bytes) -> None:
    """Write ``body`` as ``store/<sha256>`` (through a temporary file: never half a file)."""
    target = store / sha256
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
        return
    store.mkdir(parents=True, exist_ok=True)
    partial = store / f".{sha256}.{os.getpid()}.part"
    partial.write_bytes(body)
    os.replace(partial, target)


def _check_stored(campaign: Campaign, index: int, spec: ReferenceSpec, path: Path,
                  record: CaptureRecord) -> None:
    """The stored bytes are the recorded capture's, else exit 3 before anything is sent."""
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise _fail(campaign, index, f"reference {spec.id!r}: its capture {path} cannot be "
                    f"read: {exc.strerror}", "restore the file, or capture afresh with "
                    "--recapture under a new [campaign] id; nothing was sent") from exc
    if digest != record.sha256:
        raise _fail(campaign, index, f"reference {spec.id!r}: its capture {path} has sha256 "
                    f"{digest}, not the recorded {record.sha256}", "restore the file, or "
                    "capture afresh with --recapture under a new [campaign] id; nothing was "
                    "sent")
