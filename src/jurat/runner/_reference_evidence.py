"""A grounded campaign's fixed reference set, read once and checked by digest (seed 000,
"Factual grounding and hallucination audit"; docs/grounding.md).

Each ``[[grounding.references]]`` file is read through the campaign's confined, capped
reader (``campaign/_files.py``, within ``[intake] max_artifact_bytes``), its bytes checked
against the pinned sha256 before anything is decoded or sent (``excerpt``), and the checked
span becomes one evidence item (a ``url`` reference: its capture, runner/_captures.py,
checked the same way); the run reads them once, so every judge of every artifact
is shown the same capture. (The hidden-test lines a reviewer may not quote are another
thing: ``service/_test_lines.py``.)
"""

from __future__ import annotations

from pathlib import Path

from jurat._version import __version__
from jurat.campaign import campaign_line, read_text
from jurat.errors import CampaignError, IntakeError
from jurat.models import Campaign, EvidenceItem
from jurat.models._grounding import ReferenceSpec

__all__ = ["captured_body", "reference_evidence"]


def captured_body(campaign: Campaign, index: int, spec: ReferenceSpec) -> bytes | None:
    """The captured bytes of a ``url`` reference, None before it is captured."""
    if spec.captured_file is None:
        return None
    try:
        return Path(spec.captured_file).read_bytes()
    except OSError as exc:
        field = f"grounding.references[{index}].url"
        raise CampaignError(
            f"reference {spec.id!r}: its capture {spec.captured_file} cannot be read: "
            f"{exc.strerror}", file=campaign.source, field=field,
            line=campaign_line(campaign.source, field),
            fix="restore the capture file; nothing was sent") from exc


def reference_evidence(campaign: Campaign, *, captured: bool = True
                       ) -> tuple[EvidenceItem, ...]:
    """The references as evidence items, in campaign order; () without ``[grounding]``.
    With ``captured`` False (preflight, before the ledger is open), ``url`` references not
    captured yet are left out; otherwise one is refused.

    Raises CampaignError (a path outside the directory, a file over ``[intake]
    max_artifact_bytes``, not UTF-8, bytes that are not the pinned ones, a span past the
    end): exit 3, before anything is sent.
    """
    grounding = campaign.policy.grounding
    if grounding is None:
        return ()
    # Here, not at the top: the retrieval stack (httpx) is a twentieth of a second of every
    # run's start-up, and only grounded campaigns use it.
    from jurat.grounding import Reference, Span, to_evidence_item

    items = []
    for index, spec in enumerate(grounding.references):
        if spec.url is not None:
            body = captured_body(campaign, index, spec)
            if body is None and not captured:
                continue  # preflight: captured once the ledger is open (runner/_captures.py)
            if body is None:
                field = f"grounding.references[{index}].url"
                raise CampaignError(
                    f"reference {spec.id!r} names a url, and only jurat run captures one",
                    file=campaign.source, field=field,
                    line=campaign_line(campaign.source, field),
                    fix="run the campaign with jurat run, or save the page and name it by "
                    "path with its sha256; nothing was sent")
        else:
            assert spec.path is not None  # ReferenceSpec: exactly one of path and url
            field = f"grounding.references[{index}].path"
            # The reader returns text it decoded as UTF-8; encoding it again gives back
            # exactly the bytes read, which the pinned digest is checked against.
            body = read_text(campaign, spec.path, field, cap=campaign.intake.max_artifact_bytes,
                             what=f"reference {spec.id!r}",
                             key="max_artifact_bytes").encode("utf-8")
        assert spec.source is not None and spec.version is not None and spec.sha256 is not None
        reference = Reference(
            id=spec.id, source=spec.source, version=spec.version, sha256=spec.sha256,
            span=Span(start=spec.span[0], end=spec.span[1]) if spec.span else None,
        )
        try:
            items.append(to_evidence_item(reference, body, tool_version=__version__))
        except IntakeError as exc:
            sha_field = f"grounding.references[{index}].sha256"
            raise CampaignError(
                str(exc), file=campaign.source, field=sha_field,
                line=campaign_line(campaign.source, sha_field),
                fix="restore the pinned file, or check the new one and pin its sha256; "
                "nothing was sent") from exc
    return tuple(items)
