"""What a submission becomes before it is a job: the campaign it names (``Served``), the
artifact it gives through the campaign's own intake, and the refusals, in words about the
request, never echoing what it sent. Also what refuses to serve a campaign at all."""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass

from jurat.campaign import campaign_line
from jurat.errors import CampaignError, ConfigError
from jurat.judges import Engine
from jurat.ledger import Ledger
from jurat.models import Artifact, ArtifactSpec, Campaign
from jurat.runner import (
    EXPLAINED_KINDS,
    JobRunner,
    StageKey,
    intake_spec,
    preflight,
    refuse_changed_policy,
)
from jurat.service._errors import ServiceRefusal
from jurat.service._models import JobRequest

__all__ = ["Served", "check_campaigns", "submitted_artifact"]


@dataclass
class Served:
    """One campaign the server serves."""

    campaign: Campaign
    """The campaign file as loaded."""
    policy_sha256: str
    """Its pinned policy's digest."""
    runner: JobRunner
    """The runner of `jurat run`, which every job of the campaign goes through."""
    slots: asyncio.Semaphore
    """At most ``artifacts_in_flight`` jobs run at once, as in `jurat run`."""
    upstream_keys: tuple[StageKey, ...]
    """The keys of ``[upstream]``, each with the stage it signs for."""
    references: tuple[str, ...]
    """Lines of the campaign's tests a rationale may not quote (``_test_lines``)."""


def _context_refusal(served: Served, field: str, explained: bool) -> ServiceRefusal | None:
    """A submission's task or explanation that intake refused, in words about the request
    (never echoing what it sent); None for the artifact's own size, refused by the caller."""
    campaign = served.campaign
    if field == "artifact.task":
        ids = [t.id for t in campaign.tasks if t.id is not None]
        return ServiceRefusal(422, "artifact.task does not name one of this campaign's tasks",
                              field="artifact.task",
                              fix=f"set artifact.task to one of {', '.join(ids)}")
    if field == "artifact.explanation":
        cap = campaign.intake.max_explanation_bytes
        if campaign.policy.kind not in EXPLAINED_KINDS:
            return ServiceRefusal(422, f"a {campaign.policy.kind} campaign's judges read no "
                                  "explanation", field="artifact.explanation",
                                  fix="leave artifact.explanation out")
        if not explained:
            return ServiceRefusal(422, "this campaign requires artifact.explanation",
                                  field="artifact.explanation",
                                  fix=f"send the contributor's explanation, 1 to {cap} bytes")
        return ServiceRefusal(413, f"artifact.explanation is larger than this campaign's cap "
                              f"of {cap} bytes", field="artifact.explanation",
                              fix="send a shorter explanation")
    return None


def check_campaigns(campaigns: Sequence[Campaign], ledger: Ledger,
                    engine: Engine | None = None, *, allow_sim: bool = True) -> None:
    """What refuses to serve, before anything is written (ConfigError, exit 3): the
    campaigns' preflight (destinations, API keys, adapters), a live campaign that
    changed (an id the ledger knows under another policy; docs/service.md, "Starting")
    and, unless ``allow_sim``, a panel with ``sim`` judges.

    A sim judge answers an artifact's ``truth`` label with its declared reliability
    (judges/_sim.py), and a submitted job carries no ``truth``: the label it answers is a
    seeded draw per artifact, so its votes decide nothing about the work. `jurat serve`
    passes its ``--allow-sim`` (off unless the operator says it wants a demo panel); the
    in-process service it then starts checks the rest again and leaves this to it."""
    ids = [c.id for c in campaigns]
    if len(set(ids)) != len(ids):
        raise ConfigError("two campaign files have the same [campaign] id (fix: serve "
                          "each campaign once)")
    engine = engine or Engine()
    for campaign in campaigns:
        if campaign.policy.kind in ("pairwise", "equivalence"):
            raise ConfigError(
                f"{campaign.source}: `jurat serve` takes one artifact per job, and a "
                f"{campaign.policy.kind} campaign judges pairs (fix: serve rubric or criteria "
                "campaigns; evaluate pairs with `jurat run`)")
        sims = [(i, j.id) for i, j in enumerate(campaign.policy.judges) if j.provider == "sim"]
        if sims and not allow_sim:
            field = f"judges[{sims[0][0]}].provider"
            raise CampaignError(
                f"{'judge' if len(sims) == 1 else 'judges'} "
                f"{', '.join(repr(name) for _, name in sims)} of campaign {campaign.id!r} "
                f"{'answers' if len(sims) == 1 else 'answer'} with provider = \"sim\", which "
                "votes for an artifact's truth label, "
                "and a submitted job carries none: each sim vote would be a seeded coin "
                "flip, not a judgment of the work", file=campaign.source, field=field,
                line=campaign_line(campaign.source, field),
                fix="judge with a model provider (openai-compat, anthropic), or start `jurat "
                    "serve --allow-sim` to serve the sim panel anyway, as a demo")
        preflight(campaign, engine)
        refuse_changed_policy(campaign, ledger)



def submitted_artifact(served: Served, request: JobRequest, contributor: str | None
                       ) -> Artifact:
    """The artifact a submission gives, through the campaign's own intake; every refusal
    speaks of the request, never echoing what it sent (422 or 413)."""
    given = request.artifact
    if (given.text is None) == (given.content_base64 is None):
        raise ServiceRefusal(
            422, "give exactly one of artifact.text and artifact.content_base64",
            field="artifact.text", fix='send {"artifact": {"id": "c1", "text": '
            '"…"}}')
    text = given.text
    if given.content_base64 is not None:
        try:
            text = base64.b64decode(given.content_base64, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ServiceRefusal(422, "artifact.content_base64 is not base64 of UTF-8 text",
                                 field="artifact.content_base64",
                                 fix="base64-encode the UTF-8 bytes, or send text") from exc
    if given.task is not None and not served.campaign.tasks:
        # A free label would be the contributor's to vary: the same work sent as q1, q2, q3
        # is three settlements where the signer pays once per task (issue 37).
        raise ServiceRefusal(422, "this campaign declares no [[tasks]], so a submission names "
                             "no task", field="artifact.task", fix="leave artifact.task out")
    spec = ArtifactSpec(id=given.id, text=text, media_type=given.media_type or "text/plain",
                        task=given.task, contributor=contributor, claims=tuple(given.claims),
                        explanation=given.explanation)
    try:
        return intake_spec(served.campaign, spec, "artifact")
    except CampaignError as exc:
        if not (exc.field or "").startswith("artifact"):
            raise  # the campaign's own files (its tests): the operator's problem, a 500
        refused = _context_refusal(served, exc.field or "", given.explanation is not None)
        if refused is not None:
            raise refused from exc
        if (exc.field or "").startswith("artifact.claims"):
            # Intake's own words count and measure the claims and never quote them.
            raise ServiceRefusal(422, exc.message, field=exc.field,
                                 fix=exc.fix or "submit fewer, shorter claims") from exc
        # Intake's words name campaign files; say only what the submitter can change.
        limit = served.campaign.intake.max_artifact_bytes
        raise ServiceRefusal(413, f"the artifact is larger than this campaign's cap of {limit} "
                             "bytes", field="artifact.text", fix="submit a smaller artifact"
                             ) from exc
