"""Intake: digest every artifact, pin the policy, refuse disallowed destinations (seed 000).

Nothing leaves the machine before intake has passed for the whole campaign.

Threat model (docs/design.md, "Trust boundaries"). A campaign file may be copied from a
stranger, along with the directory it sits in; whatever it names is read here and then
sent to judges. Every file is read through the campaign's one confined, capped reader
(``campaign/_files.py``: a regular file inside the campaign file's directory, no symlink
out, no more than the ``[intake]`` cap plus one byte); inline text is held to the same caps
here, and a pinned ``sha256`` that differs is refused.

Reference material (a criteria ``target``, an equivalence pair's gold ``b``) leaves intake
bound by its keyed digest only (``Artifact.reference_hmac``, under the campaign's reference
key, campaign/_reference_key.py): a pair's digest binds ``b`` that way too, so nothing
public derived from it (the subject, the job identity, the evidence bundle) can be
recomputed from a guess without the key (docs/receipt-format.md §11.3).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jurat.campaign import (
    campaign_line,
    read_tests,
    read_text,
    reference_key,
    resolve_inside,
    too_large,
)
from jurat.canonical import sha256_digest
from jurat.errors import CampaignError
from jurat.judges._destinations import check_destinations as _check_policy
from jurat.models import Artifact, ArtifactSpec, Campaign, Policy, Untrusted, visible
from jurat.models._artifact import PAIR_MEDIA_TYPE, pair_digest
from jurat.models._grounding import WORK_CLAIM_PREFIXES, GroundedClaim
from jurat.models._task import TaskSpec, resolve_task, task_checks

__all__ = [
    "EXPLAINED_KINDS",
    "b_is_reference",
    "check_destinations",
    "intake_artifact",
    "intake_spec",
]

#: Test files kept by ``intake_spec``'s cache.
_CACHED = 64


def check_destinations(policy: Policy, source: str | None = None) -> None:
    """Refuse any judge (or subject) whose endpoint is not in allowed_destinations.

    The rule lives in ``jurat.judges._destinations`` (its normalisation in
    ``models/_endpoints.py``), which the engine applies again before any request; intake
    applies it first so that a refusal exits 3 with nothing sent and nothing written.
    """
    _check_policy(policy, source=source)


def b_is_reference(policy: Policy) -> bool:
    """Whether a pair's ``b`` is the campaign's reference material: an equivalence
    campaign's gold answer, unless ``[equivalence] reference = "none"`` declares two
    candidates (docs/receipt-format.md §11.1)."""
    if policy.kind != "equivalence":
        return False
    return policy.equivalence is None or policy.equivalence.reference == "b"


def _inline(campaign: Campaign, text: str, field: str, what: str) -> str:
    cap = campaign.intake.max_artifact_bytes
    # Cheap bound first: a UTF-8 character is at most 4 bytes.
    if len(text) > cap // 4 and len(text.encode("utf-8")) > cap:
        raise too_large(campaign, field, what, cap, "max_artifact_bytes")
    return text


def _media_type(spec: ArtifactSpec) -> str:
    if spec.media_type:
        return spec.media_type
    if spec.path and spec.path.endswith(".py"):
        return "text/x-python"
    return "text/plain"


def _target(campaign: Campaign, spec: ArtifactSpec, where: str,
            read: Callable[[str, str, str], str]) -> Untrusted:
    """The artifact's reference answer, as operator reference material (models/_taint.py):
    only a criteria judge reads it, and a receipt binds it by digest (issue 28)."""
    field = f"{where}.target" if spec.target is not None else f"{where}.target_path"
    if campaign.policy.kind != "criteria":
        raise CampaignError(
            f"`target` is a criteria campaign's reference answer; this campaign is of kind "
            f"{campaign.policy.kind!r}", file=campaign.source, field=field,
            fix="remove target (an equivalence campaign's gold answer is the pair's b)",
            line=campaign_line(campaign.source, field),
        )
    what = f"artifact {spec.id!r} target"
    if spec.target is not None:
        return Untrusted(_inline(campaign, spec.target, field, what), "reference")
    return Untrusted(read(spec.target_path or "", field, what), "reference")


def _check_replay_files(campaign: Campaign) -> None:
    """A replay judge's ``replay_file`` is a campaign path too (read by judges/_replay.py)."""
    configs = list(campaign.policy.judges)
    if campaign.policy.subject is not None:
        configs.append(campaign.policy.subject)
    for index, config in enumerate(configs):
        if config.provider != "replay" or not config.replay_file:
            continue
        field = "subject" if index >= len(campaign.policy.judges) else f"judges[{index}]"
        field += ".replay_file"
        _, target = resolve_inside(campaign, config.replay_file, field)
        # The replay judge opens the name as given, relative to the working directory.
        if os.path.realpath(config.replay_file) != target:
            raise CampaignError(
                f"{config.replay_file!r} is read relative to the working directory, which is "
                "not the campaign file's directory", file=campaign.source, field=field,
                fix="run jurat from the campaign file's directory",
                line=campaign_line(campaign.source, field),
            )


#: The campaign kinds whose judges read a contributor's explanation (their prompts'
#: EXPLANATION block, judges/_prompts.py ``_with_context``).
EXPLAINED_KINDS = ("rubric", "pairwise")


def _task_of(campaign: Campaign, spec: ArtifactSpec) -> tuple[int, TaskSpec | None]:
    """The task ``spec`` names, with its place in ``[[tasks]]``; None when the campaign has
    none or it does not resolve (``_task_and_explanation`` refuses that, naming the field)."""
    if not campaign.tasks:
        return -1, None
    task = resolve_task(campaign.tasks, spec.task)
    if isinstance(task, tuple):
        return -1, None
    return campaign.tasks.index(task), task


def _task_and_explanation(campaign: Campaign, spec: ArtifactSpec, where: str,
                          cache: dict[str, str] | None) -> dict[str, Any]:
    """The artifact's resolved ``task`` with its statement, and the contributor's
    explanation, as ``Artifact`` fields; only those present, so that an artifact of a
    campaign without tasks and without an explanation is the record it always was."""
    fields: dict[str, Any] = {}
    limits = campaign.intake
    if campaign.tasks:
        task = resolve_task(campaign.tasks, spec.task)
        if isinstance(task, tuple):
            raise CampaignError(task[0], file=campaign.source, field=f"{where}.task",
                                fix=task[1], line=campaign_line(campaign.source, f"{where}.task"))
        index = campaign.tasks.index(task)
        fields["task"] = task.id
        if task.statement is not None:
            fields["task_statement"] = _inline(campaign, task.statement,
                                               f"tasks[{index}].statement", "task statement")
        else:
            # One read per campaign: every artifact of a task shares its statement.
            key = f"\0task {index}"
            if cache is None or key not in cache:
                text = read_text(campaign, task.path or "", f"tasks[{index}].path",
                                 cap=limits.max_artifact_bytes, what="task statement",
                                 key="max_artifact_bytes")
                if cache is None:
                    cache = {}
                cache[key] = text
            fields["task_statement"] = cache[key]
    cap = limits.max_explanation_bytes
    label = f"artifact {spec.id!r} explanation"
    kind = campaign.policy.kind
    if kind not in EXPLAINED_KINDS and (spec.explanation is not None
                                        or spec.explanation_path is not None):
        # Only the rubric and pairwise prompts have an EXPLANATION block: elsewhere the
        # text would reach no judge, yet its digest would be bound into the receipt as if
        # judges had read it (docs/receipt-format.md §6.4).
        field = (f"{where}.explanation" if spec.explanation is not None
                 else f"{where}.explanation_path")
        raise CampaignError(
            f"an explanation is read by rubric and pairwise judges only; this campaign is of "
            f"kind {kind!r}, whose judges never see it", file=campaign.source, field=field,
            line=campaign_line(campaign.source, field),
            fix="remove explanation/explanation_path, or judge the work in a rubric or "
                "pairwise campaign")
    if spec.explanation_path is not None:
        text = read_text(campaign, spec.explanation_path, f"{where}.explanation_path", cap=cap,
                         what=label, key="max_explanation_bytes")
    elif spec.explanation is not None:
        text = spec.explanation
        if len(text) > cap // 4 and len(text.encode("utf-8")) > cap:
            raise too_large(campaign, f"{where}.explanation", label, cap,
                            "max_explanation_bytes")
    else:
        text = ""
    rubric = campaign.policy.rubric
    # Whitespace is no account of the work, nor are zero-width or other characters that
    # draw nothing: a required explanation must show something (models/_visible.py).
    if not visible(text) and rubric is not None and rubric.require_explanation:
        field = (f"{where}.explanation_path" if spec.explanation_path is not None
                 else f"{where}.explanation")
        what = ("only whitespace or invisible characters as its explanation" if text
                else "no explanation")
        raise CampaignError(
            f"artifact {spec.id!r} has {what}, and [rubric] require_explanation is set",
            file=campaign.source, field=field, line=campaign_line(campaign.source, field),
            fix='add explanation = "…" or explanation_path = "explanation.md" (the '
                "contributor's account of the work)")
    if text:
        fields["explanation"] = Untrusted(text, "contributor")
    return fields


def intake_artifact(
    campaign: Campaign, index: int, *, cache: dict[str, str] | None = None
) -> Artifact:
    """Read and digest one ``[[artifacts]]`` entry; refuse it if a pinned digest does not
    match.

    ``cache`` keeps test files by path across one campaign's intake, so that a shared
    ``[checks.python] tests`` file is read once, not once per artifact.
    """
    return intake_spec(campaign, campaign.artifacts[index], f"artifacts[{index}]", cache=cache)


def submitted_claims(campaign: Campaign, spec: ArtifactSpec, where: str
                     ) -> tuple[GroundedClaim, ...]:
    """The claims an artifact submits, as claims of the work (seed 000, "Factual grounding":
    every factual statement is a checkable claim): ``submitted.<n>``, of the campaign's
    ``submitted_weight``, checked against every reference, never material. Untrusted text:
    a judge sees it only as delimited data, a receipt only its digest."""
    if not spec.claims:
        return ()
    grounding = campaign.policy.grounding
    if grounding is None or grounding.submitted_weight is None:
        raise CampaignError("this campaign does not take submitted claims",
                            file=campaign.source, field=f"{where}.claims",
                            fix="set [grounding] submitted_weight = 1.0, or remove claims")
    limits = campaign.intake
    if len(spec.claims) > limits.max_claims:
        raise CampaignError(f"{len(spec.claims)} claims, more than [intake] max_claims "
                            f"{limits.max_claims}", file=campaign.source, field=f"{where}.claims",
                            fix=f"submit at most {limits.max_claims} claims, or raise "
                                "[intake] max_claims")
    for index, text in enumerate(spec.claims):
        if not text.strip() or len(text) > limits.max_claim_chars:
            raise CampaignError(
                f"claim {index + 1} is {'empty' if not text.strip() else f'{len(text)} chars'}",
                file=campaign.source, field=f"{where}.claims[{index}]",
                fix=f"a short statement of 1 to {limits.max_claim_chars} characters "
                    "([intake] max_claim_chars)")
    prefix = WORK_CLAIM_PREFIXES["submitted"]
    evidence = tuple(r.id for r in grounding.references)
    return tuple(
        GroundedClaim(id=f"{prefix}{n}", artifact=spec.id, text=text,
                      weight=grounding.submitted_weight, evidence=evidence, origin="submitted")
        for n, text in enumerate(spec.claims, 1))


def intake_spec(
    campaign: Campaign, spec: ArtifactSpec, where: str, *, cache: dict[str, str] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Artifact:
    """Read and digest one artifact entry; ``where`` is its place in the campaign file
    (``artifacts[3]``), which every refusal names. A dataset row (runner/_datasets.py) is
    read through here too and re-places the refusal in its file and line.

    ``cache`` keeps test files by path (see ``intake_artifact``); at most ``_CACHED`` of
    them, as a dataset's rows may each name their own. ``metadata``: a dataset row's extra
    columns, kept as ``Artifact.metadata`` (origin ``reference``: never sent, never signed).

    A criteria artifact may give both its ``input`` and its output (``text`` or ``path``)
    when the campaign has no ``[subject]`` (a benchmark's recorded answers): the judges are
    shown both (``jurat/binary-criterion@3``) and the job binds the input's digest beside
    the output's (runner/_job.py), so one answer to two questions is two artifacts.
    """
    label = f"artifact {spec.id!r}"
    limits = campaign.intake
    tests: dict[str, str] = {}
    policy = campaign.policy
    # The artifact's own tests, else its task's (issue 37), else the campaign's.
    task_index, task = _task_of(campaign, spec)
    tests_rel, tests_field = (spec.tests, f"{where}.tests") if spec.tests else (
        (task.tests, f"tasks[{task_index}].tests") if task is not None and task.tests else
        (campaign.tests_path if policy.python else None, "checks.python.tests"))
    if tests_rel:
        cache = {} if cache is None else cache
        if tests_rel not in cache:
            if len(cache) >= _CACHED:
                del cache[next(iter(cache))]  # the oldest: rows usually share a few files
            cache[tests_rel] = read_tests(campaign, tests_rel, tests_field)
        tests[Path(tests_rel).name] = cache[tests_rel]

    def read_artifact(rel: str, field: str, what: str) -> str:
        return read_text(campaign, rel, field, cap=limits.max_artifact_bytes, what=what,
                     key="max_artifact_bytes")

    common: dict[str, Any] = {"id": spec.id, "truth": spec.truth, "contributor": spec.contributor,
              "task": spec.task, "tests": tests, "upstream": spec.upstream,
              **_task_and_explanation(campaign, spec, where, cache)}
    checks = task_checks(task, policy.python) if task is not None else None
    if checks is not None and checks is not policy.python:
        common["checks"] = checks
    if spec.target is not None or spec.target_path is not None:
        common["target"] = target = _target(campaign, spec, where, read_artifact)
        common["reference_hmac"] = reference_key(campaign).digest(target.reveal())
    common["claims"] = submitted_claims(campaign, spec, where)
    if metadata:
        common["metadata"] = {name: Untrusted(value, "reference")
                              for name, value in metadata.items()}
    given_output = spec.path is not None or spec.text is not None
    pinned_as: tuple[str, ...] = ()  # other digests a pinned sha256 may name
    if spec.a is not None or spec.b is not None or spec.a_path or spec.b_path:
        if spec.a is not None:
            a = _inline(campaign, spec.a, f"{where}.a", f"{label} part a")
        else:
            a = read_artifact(spec.a_path or "", f"{where}.a_path", f"{label} part a")
        if spec.b is not None:
            b = _inline(campaign, spec.b, f"{where}.b", f"{label} part b")
        else:
            b = read_artifact(spec.b_path or "", f"{where}.b_path", f"{label} part b")
        # A gold b is bound by its keyed digest, in the pair's digest as everywhere else.
        digest = pair_digest(sha256_digest(a), sha256_digest(b))
        if b_is_reference(policy):
            common["reference_hmac"] = keyed = reference_key(campaign).digest(b)
            # A pin written before b was keyed names the plain digest of the same bytes.
            digest, pinned_as = pair_digest(sha256_digest(a), keyed), (digest,)
        artifact = Artifact(sha256=digest, media_type=PAIR_MEDIA_TYPE, a=a, b=b, **common)
    elif spec.input is not None and given_output and policy.subject is None:
        if policy.kind != "criteria":
            raise CampaignError(
                "an artifact's input beside its output is for criteria campaigns",
                file=campaign.source, field=f"{where}.input",
                fix="remove input, or judge the outputs in a criteria campaign")
        question = _inline(campaign, spec.input, f"{where}.input", f"{label} input")
        if spec.path is not None:
            text = read_artifact(spec.path, f"{where}.path", label)
        else:
            text = _inline(campaign, spec.text or "", f"{where}.text", label)
        artifact = Artifact(sha256=sha256_digest(text), media_type=_media_type(spec), text=text,
                            input=question, **common)
    elif spec.input is not None:
        if policy.subject is None or not policy.subject_prompt:
            raise CampaignError(
                "an artifact with `input` needs a [subject] to run it", file=campaign.source,
                field=f"{where}.input",
                fix='add [subject] with provider, model and prompt = "… {input} …", '
                    "or give the output to judge as text/path",
            )
        text = _inline(campaign, spec.input, f"{where}.input", f"{label} input")
        # The output does not exist yet: the job's execution phase produces and records it.
        artifact = Artifact(sha256=sha256_digest(text), media_type="text/plain", input=text,
                            **common)
    else:
        if spec.path is not None:
            text = read_artifact(spec.path, f"{where}.path", label)
        else:
            text = _inline(campaign, spec.text or "", f"{where}.text", label)
        artifact = Artifact(sha256=sha256_digest(text), media_type=_media_type(spec), text=text,
                            **common)
    if spec.sha256 and spec.sha256 != artifact.sha256 and spec.sha256 not in pinned_as:
        raise CampaignError(
            f"artifact content was altered: sha256 {artifact.sha256} does not match the pinned "
            f"{spec.sha256}", file=campaign.source, field=f"{where}.sha256",
            fix="re-submit the artifact through intake or restore the original bytes",
        )
    return artifact
