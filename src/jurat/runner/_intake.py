"""Intake: digest every artifact, pin the policy, refuse disallowed destinations (seed 000).

Nothing leaves the machine before intake has passed for the whole campaign.
"""

from __future__ import annotations

from pathlib import Path

from jurat.canonical import canonical_json, sha256_digest
from jurat.errors import CampaignError, DestinationError
from jurat.models import Artifact, ArtifactSpec, Campaign, JudgeConfig, Policy

LOCAL_DESTINATIONS = ("sim", "stub", "replay")
PAIR_MEDIA_TYPE = "application/vnd.jurat.pair+json"


def _norm(destination: str) -> str:
    return destination.rstrip("/").lower()


def check_destinations(policy: Policy) -> None:
    """Refuse any judge (or subject) whose destination is not in allowed_destinations."""
    allowed = {_norm(d) for d in policy.allowed_destinations}
    configs: list[JudgeConfig] = list(policy.judges)
    if policy.subject is not None:
        configs.append(policy.subject)
    for config in configs:
        dest = _norm(config.destination)
        if dest not in allowed:
            raise DestinationError(
                f"judge {config.id!r} would send artifact content to {config.destination!r}, "
                f"which is not in campaign.allowed_destinations {list(policy.allowed_destinations)}"
                f" (fix: add {config.destination!r} to allowed_destinations if that provider "
                "is authorised to see this content, or use another judge)"
            )


def _read(base: Path, rel: str, field: str, campaign: Campaign) -> str:
    path = (base / rel).resolve()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise CampaignError(
            f"cannot read {path}: {reason}", file=campaign.source, field=field,
            fix="check the path (relative paths are resolved against the campaign file)",
        ) from exc


def _media_type(spec: ArtifactSpec) -> str:
    if spec.media_type:
        return spec.media_type
    if spec.path and spec.path.endswith(".py"):
        return "text/x-python"
    return "text/plain"


def intake_artifact(campaign: Campaign, index: int) -> Artifact:
    """Read and digest one artifact; refuse it if a pinned digest does not match."""
    spec = campaign.artifacts[index]
    base = Path(campaign.base_dir)
    where = f"artifacts[{index}]"
    tests: dict[str, str] = {}
    policy = campaign.policy
    tests_rel = spec.tests or (policy.python.tests if policy.python else None)
    if tests_rel:
        tests[Path(tests_rel).name] = _read(base, tests_rel, f"{where}.tests", campaign)
    common = {"id": spec.id, "truth": spec.truth, "contributor": spec.contributor,
              "task": spec.task, "tests": tests}
    if spec.a is not None or spec.b is not None or spec.a_path or spec.b_path:
        a = spec.a if spec.a is not None else _read(base, spec.a_path or "", f"{where}.a_path",
                                                    campaign)
        b = spec.b if spec.b is not None else _read(base, spec.b_path or "", f"{where}.b_path",
                                                    campaign)
        digest = sha256_digest(canonical_json({"a": sha256_digest(a), "b": sha256_digest(b)}))
        artifact = Artifact(sha256=digest, media_type=PAIR_MEDIA_TYPE, a=a, b=b, **common)
    elif spec.input is not None:
        if policy.subject is None or not policy.subject_prompt:
            raise CampaignError(
                "an artifact with `input` needs a [subject] to run it", file=campaign.source,
                field=f"{where}.input",
                fix='add [subject] with provider, model and prompt = "… {input} …", '
                    "or give the output to judge as text/path",
            )
        # The output does not exist yet: the job's execution phase produces and records it.
        artifact = Artifact(sha256=sha256_digest(spec.input), media_type="text/plain",
                            input=spec.input, **common)
    else:
        if spec.path is not None:
            text = _read(base, spec.path, f"{where}.path", campaign)
        else:
            text = spec.text if spec.text is not None else ""
        artifact = Artifact(sha256=sha256_digest(text), media_type=_media_type(spec), text=text,
                            **common)
    if spec.sha256 and spec.sha256 != artifact.sha256:
        raise CampaignError(
            f"artifact content was altered: sha256 {artifact.sha256} does not match the pinned "
            f"{spec.sha256}", file=campaign.source, field=f"{where}.sha256",
            fix="re-submit the artifact through intake or restore the original bytes",
        )
    return artifact


def intake(campaign: Campaign) -> list[Artifact]:
    """Intake the whole campaign before anything is evaluated or sent."""
    check_destinations(campaign.policy)
    return [intake_artifact(campaign, i) for i in range(len(campaign.artifacts))]
