"""Intake: digest every artifact, pin the policy, refuse disallowed destinations (seed 000).

Nothing leaves the machine before intake has passed for the whole campaign.

Threat model (docs/design.md, "Trust boundaries"). A campaign file may be copied from a
stranger, along with the directory it sits in; whatever it names is read here and then
sent to judges. So every file it names must be a regular file inside the campaign file's
directory, of bounded size: an absolute path, a ``..`` component, or a symlink anywhere
on the way that leads outside is refused before a byte of it is read, as is anything over
the ``[intake]`` caps, of which no more than cap + 1 bytes are read. Symlinks that stay
inside the directory are followed. Out of scope: hard links (a hard link is the file's own
name; archives and version control do not carry one to a file outside, and with the
kernel's ``protected_hardlinks`` a local user can only link files they could read anyway),
and a writer racing intake inside the directory on systems without ``/proc`` (see
``_open_inside``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Generator
from pathlib import Path
from typing import Any

from jurat.campaign import campaign_line
from jurat.campaign._paths import campaign_path_problem
from jurat.canonical import canonical_json, sha256_digest
from jurat.errors import CampaignError
from jurat.judges._destinations import check_destinations as _check_policy
from jurat.models import Artifact, ArtifactSpec, Campaign, Policy
from jurat.models._artifact import ARTIFACT_BYTES_CEILING, TESTS_BYTES_CEILING

__all__ = [
    "check_destinations",
    "intake",
    "intake_artifact",
    "intake_spec",
    "read_lines",
    "read_tests",
]

PAIR_MEDIA_TYPE = "application/vnd.jurat.pair+json"
_CHUNK = 1024 * 1024
#: Test files kept by ``intake_spec``'s cache.
_CACHED = 64
_ESCAPE_FIX = (
    "keep the file inside the campaign directory: copy it in rather than link to it, and "
    "name it relative to the campaign file without '..'"
)


def check_destinations(policy: Policy, source: str | None = None) -> None:
    """Refuse any judge (or subject) whose endpoint is not in allowed_destinations.

    The rule and its normalisation live in ``jurat.judges._destinations``, which the engine
    applies again before any request; intake applies it first so that a refusal exits 3
    with nothing sent and nothing written.
    """
    _check_policy(policy, source=source)


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath((path, root)) == root


def _escape(campaign: Campaign, rel: str, field: str, how: str) -> CampaignError:
    return CampaignError(
        f"{rel!r} {how}; campaign paths stay inside the campaign file's directory, and "
        "nothing was read", file=campaign.source, field=field, fix=_ESCAPE_FIX,
        line=campaign_line(campaign.source, field),
    )


def _resolve_inside(campaign: Campaign, rel: str, field: str) -> tuple[str, str]:
    """(campaign root, the resolved path), refusing a path that leads outside the root."""
    problem = campaign_path_problem(rel)
    if problem:
        raise _escape(campaign, rel, field, problem)
    root = os.path.realpath(campaign.base_dir)
    target = os.path.realpath(os.path.join(root, rel))
    if not _inside(target, root) or target == root:
        raise _escape(campaign, rel, field, "leads outside the campaign directory")
    return root, target


def _open_inside(campaign: Campaign, rel: str, field: str) -> int:
    """A read-only descriptor of the regular file ``rel`` names inside the campaign directory.

    The path is resolved once (symlinks included) and checked against the directory; the
    resolved path is opened with O_NOFOLLOW, so a last component swapped for a symlink
    after the check fails to open, and O_NONBLOCK, so a FIFO cannot stall intake. Between
    the check and the open a writer could still swap a directory on the way for a symlink;
    so the check is repeated on what was actually opened: on Linux the descriptor's own
    path (``/proc/self/fd``); elsewhere the path is resolved again and must still be
    itself, naming the same device and inode as the descriptor.
    """
    root, target = _resolve_inside(campaign, rel, field)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise CampaignError(
            f"cannot read {rel!r}: {exc.strerror}", file=campaign.source, field=field,
            fix="check the path (relative paths are resolved against the campaign file)",
            line=campaign_line(campaign.source, field),
        ) from exc
    try:
        info = os.fstat(fd)
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            opened = None
        if opened is not None:
            moved = not _inside(opened, root)
        else:
            # Without /proc: the path must still resolve to itself and name the opened
            # file; a swap undone again between the open and this check goes unseen.
            now = os.stat(target)
            moved = os.path.realpath(target) != target or (now.st_dev, now.st_ino) != (
                info.st_dev, info.st_ino)
        if moved:
            raise _escape(campaign, rel, field, "led outside the campaign directory when opened")
        if not stat.S_ISREG(info.st_mode):
            raise CampaignError(
                f"{rel!r} is not a regular file", file=campaign.source, field=field,
                fix="name a file, not a directory, device or pipe",
                line=campaign_line(campaign.source, field),
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _too_large(campaign: Campaign, field: str, what: str, cap: int, key: str) -> CampaignError:
    ceiling = ARTIFACT_BYTES_CEILING if key == "max_artifact_bytes" else TESTS_BYTES_CEILING
    return CampaignError(
        f"{what} is larger than the cap of {cap} bytes; nothing was sent",
        file=campaign.source, field=field,
        fix=f"shrink it, or raise [intake] {key} (at most {ceiling})",
        line=campaign_line(campaign.source, field),
    )


def _read(campaign: Campaign, rel: str, field: str, *, cap: int, what: str, key: str) -> str:
    """The UTF-8 text of a file inside the campaign directory; no more than cap + 1 bytes."""
    fd = _open_inside(campaign, rel, field)
    try:
        if os.fstat(fd).st_size > cap:
            raise _too_large(campaign, field, what, cap, key)
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:  # a file that grew, or one whose size fstat does not report
        raise _too_large(campaign, field, what, cap, key)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CampaignError(
            f"cannot read {rel!r}: not UTF-8 text", file=campaign.source, field=field,
            fix="save the file as UTF-8", line=campaign_line(campaign.source, field),
        ) from exc


def read_tests(campaign: Campaign, rel: str, field: str = "checks.python.tests") -> str:
    """The UTF-8 text of the test file ``rel`` names inside the campaign directory, read as
    intake reads it (``_open_inside``: confined, no symlink out, a regular file), within
    ``[intake] max_tests_bytes``; ``field`` is the campaign key that names it. Raises
    CampaignError naming ``field``."""
    return _read(campaign, rel, field, cap=campaign.intake.max_tests_bytes,
                 what=f"test file {rel!r}", key="max_tests_bytes")


def read_lines(
    campaign: Campaign, rel: str, field: str, *, max_line: int, file: str
) -> Generator[tuple[int, bytes], None, None]:
    """Each line of the file ``rel`` names inside the campaign directory, numbered from 1,
    without its line ending (``\\n`` or ``\\r\\n``); streamed, one line in memory at a time.

    The file is opened as ``_open_inside`` opens it (``field`` is the campaign key that
    names it). A line longer than ``max_line`` bytes is refused, naming ``file`` (the name
    messages show) and the line, after reading no more than ``max_line`` + 2 bytes of it.
    The descriptor is closed when the iteration ends or is closed.
    """
    fd = _open_inside(campaign, rel, field)
    with os.fdopen(fd, "rb", buffering=_CHUNK) as handle:
        number = 0
        while True:
            try:
                line = handle.readline(max_line + 2)  # + 2: room for a "\r\n"
            except OSError as exc:
                raise CampaignError(
                    f"cannot read {rel!r}: {exc.strerror}", file=file, line=number + 1,
                    fix="check the file") from exc
            if not line:
                return
            number += 1
            line = line[:-1] if line.endswith(b"\n") else line
            line = line[:-1] if line.endswith(b"\r") else line
            if len(line) > max_line:  # a line cut at the limit is at least max_line + 1
                raise CampaignError(
                    f"line {number} is longer than {max_line} bytes; nothing was sent",
                    file=file, line=number,
                    fix="one artifact per line, each part within [intake] max_artifact_bytes",
                )
            yield number, line


def _inline(campaign: Campaign, text: str, field: str, what: str) -> str:
    cap = campaign.intake.max_artifact_bytes
    # Cheap bound first: a UTF-8 character is at most 4 bytes.
    if len(text) > cap // 4 and len(text.encode("utf-8")) > cap:
        raise _too_large(campaign, field, what, cap, "max_artifact_bytes")
    return text


def _media_type(spec: ArtifactSpec) -> str:
    if spec.media_type:
        return spec.media_type
    if spec.path and spec.path.endswith(".py"):
        return "text/x-python"
    return "text/plain"


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
        _, target = _resolve_inside(campaign, config.replay_file, field)
        # The replay judge opens the name as given, relative to the working directory.
        if os.path.realpath(config.replay_file) != target:
            raise CampaignError(
                f"{config.replay_file!r} is read relative to the working directory, which is "
                "not the campaign file's directory", file=campaign.source, field=field,
                fix="run jurat from the campaign file's directory",
                line=campaign_line(campaign.source, field),
            )


def intake_artifact(
    campaign: Campaign, index: int, *, cache: dict[str, str] | None = None
) -> Artifact:
    """Read and digest one ``[[artifacts]]`` entry; refuse it if a pinned digest does not
    match.

    ``cache`` keeps test files by path across one campaign's intake, so that a shared
    ``[checks.python] tests`` file is read once, not once per artifact.
    """
    return intake_spec(campaign, campaign.artifacts[index], f"artifacts[{index}]", cache=cache)


def intake_spec(
    campaign: Campaign, spec: ArtifactSpec, where: str, *, cache: dict[str, str] | None = None
) -> Artifact:
    """Read and digest one artifact entry; ``where`` is its place in the campaign file
    (``artifacts[3]``), which every refusal names. A dataset row (runner/_datasets.py) is
    read through here too and re-places the refusal in its file and line.

    ``cache`` keeps test files by path (see ``intake_artifact``); at most ``_CACHED`` of
    them, as a dataset's rows may each name their own.
    """
    label = f"artifact {spec.id!r}"
    limits = campaign.intake
    tests: dict[str, str] = {}
    policy = campaign.policy
    tests_rel = spec.tests or (campaign.tests_path if policy.python else None)
    if tests_rel:
        cache = {} if cache is None else cache
        if tests_rel not in cache:
            if len(cache) >= _CACHED:
                del cache[next(iter(cache))]  # the oldest: rows usually share a few files
            tests_field = f"{where}.tests" if spec.tests else "checks.python.tests"
            cache[tests_rel] = read_tests(campaign, tests_rel, tests_field)
        tests[Path(tests_rel).name] = cache[tests_rel]

    def read_artifact(rel: str, field: str, what: str) -> str:
        return _read(campaign, rel, field, cap=limits.max_artifact_bytes, what=what,
                     key="max_artifact_bytes")

    common: dict[str, Any] = {"id": spec.id, "truth": spec.truth, "contributor": spec.contributor,
              "task": spec.task, "tests": tests}
    if spec.a is not None or spec.b is not None or spec.a_path or spec.b_path:
        if spec.a is not None:
            a = _inline(campaign, spec.a, f"{where}.a", f"{label} part a")
        else:
            a = read_artifact(spec.a_path or "", f"{where}.a_path", f"{label} part a")
        if spec.b is not None:
            b = _inline(campaign, spec.b, f"{where}.b", f"{label} part b")
        else:
            b = read_artifact(spec.b_path or "", f"{where}.b_path", f"{label} part b")
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
    if spec.sha256 and spec.sha256 != artifact.sha256:
        raise CampaignError(
            f"artifact content was altered: sha256 {artifact.sha256} does not match the pinned "
            f"{spec.sha256}", file=campaign.source, field=f"{where}.sha256",
            fix="re-submit the artifact through intake or restore the original bytes",
        )
    return artifact


def intake(campaign: Campaign) -> list[Artifact]:
    """Intake the whole campaign before anything is evaluated or sent, and return every
    artifact, ``[[datasets]]`` rows included, held in one list.

    For small campaigns and tests; a run checks everything first and then streams the
    artifacts instead (runner/_datasets.py: ``check_artifacts``, ``iter_artifacts``).
    """
    from jurat.runner._datasets import check_artifacts, iter_artifacts

    cache: dict[str, str] = {}
    if not campaign.datasets:  # one pass: every artifact is held anyway
        check_destinations(campaign.policy, campaign.source)
        _check_replay_files(campaign)
        return [intake_artifact(campaign, i, cache=cache) for i in range(len(campaign.artifacts))]
    check_artifacts(campaign, cache=cache)
    return list(iter_artifacts(campaign, cache=cache))
