"""Every file a campaign reads: the campaign file itself, and each file it names.

Threat model (docs/design.md, "Trust boundaries"). A campaign file may be copied from a
stranger, along with the directory it sits in; whatever it names is read here and then
sent to judges, shown to reviewers or trusted as a key. So every file it names (an
artifact, a test file, a dataset, a grounding reference, an upstream key) is read here and
nowhere else, and must be a regular file inside the campaign file's directory, of bounded
size: an absolute path, a ``..`` component, or a symlink anywhere on the way that leads
outside is refused before a byte of it is read, as is anything over its cap, of which no
more than cap + 1 bytes are read. Symlinks that stay inside the directory are followed.
Out of scope: hard links (a hard link is the file's own name; archives and version control
do not carry one to a file outside, and with the kernel's ``protected_hardlinks`` a local
user can only link files they could read anyway), and a writer racing a read inside the
directory on systems without ``/proc`` (see ``open_inside``).

Every refusal is a CampaignError naming the campaign file, the field that names the file,
its line and the fix. The campaign file itself is the operator's to name; it is read within
``MAX_CAMPAIGN_BYTES``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Generator
from pathlib import Path, PurePosixPath

from jurat.campaign._toml_lines import TomlLines
from jurat.errors import CampaignError
from jurat.models import Campaign
from jurat.models._artifact import (
    ARTIFACT_BYTES_CEILING,
    EXPLANATION_BYTES_CEILING,
    TESTS_BYTES_CEILING,
)

__all__ = [
    "MAX_CAMPAIGN_BYTES",
    "campaign_line",
    "campaign_path_problem",
    "inside",
    "open_inside",
    "read_campaign",
    "read_inside",
    "read_lines",
    "read_tests",
    "read_text",
    "resolve_inside",
    "too_large",
]

#: The largest campaign file read. Inline artifacts live in it, each capped by
#: ``[intake] max_artifact_bytes``; bigger inputs belong in files next to it.
MAX_CAMPAIGN_BYTES = 64 * 1024 * 1024
_CHUNK = 1024 * 1024
#: The ``[intake]`` keys that raise a cap, and how far they may raise it.
_CEILINGS = {"max_artifact_bytes": ARTIFACT_BYTES_CEILING, "max_tests_bytes": TESTS_BYTES_CEILING,
             "max_explanation_bytes": EXPLANATION_BYTES_CEILING}
_ESCAPE_FIX = (
    "keep the file inside the campaign directory: copy it in rather than link to it, and "
    "name it relative to the campaign file without '..'"
)


def read_campaign(file: Path) -> str:
    """The text of the campaign file ``file``: at most ``MAX_CAMPAIGN_BYTES``, UTF-8."""
    try:
        with file.open("rb") as handle:
            raw = handle.read(MAX_CAMPAIGN_BYTES + 1)
    except OSError as exc:
        raise CampaignError(
            f"cannot read campaign file: {exc.strerror}",
            file=str(file),
            fix="check the path",
        ) from exc
    if len(raw) > MAX_CAMPAIGN_BYTES:
        raise CampaignError(
            f"the campaign file is larger than {MAX_CAMPAIGN_BYTES} bytes",
            file=str(file),
            fix="move large artifacts into files next to it (path = …) or split the campaign",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CampaignError(
            "the campaign file is not UTF-8 text", file=str(file), fix="save it as UTF-8"
        ) from exc


def campaign_line(source: str | None, field: str) -> int | None:
    """The line of ``field`` (``artifacts[0].path``) in the campaign file ``source``.

    For problems found after loading (intake): the file is read again, and a file that
    cannot be read just gives no line.
    """
    if not source:
        return None
    try:
        with open(source, "rb") as handle:
            text = handle.read(MAX_CAMPAIGN_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    loc: list[str | int] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", field):
        loc.append(int(index) if index else name)
    return TomlLines(text).line(tuple(loc))


def campaign_path_problem(value: str) -> str | None:
    """Why ``value`` cannot be a campaign path, judged from its text alone; None if it can.

    Absolute paths and ``..`` components are refused outright, not resolved and compared:
    a path that names its way out and back in is still a path a stranger wrote to probe.
    Symlinks are judged when the file is opened (``open_inside``).
    """
    if not value:
        return "is empty"
    if "\x00" in value:
        return "contains a NUL byte"
    pure = PurePosixPath(value)
    if pure.is_absolute():
        return "is absolute"
    if ".." in pure.parts:
        return "has a '..' component"
    return None


def inside(path: str, root: str) -> bool:
    """Whether the resolved ``path`` is ``root`` or below it (both resolved already)."""
    return os.path.commonpath((path, root)) == root


def _refused(campaign: Campaign, field: str, message: str, fix: str) -> CampaignError:
    return CampaignError(message, file=campaign.source, field=field, fix=fix,
                         line=campaign_line(campaign.source, field))


def _escape(campaign: Campaign, rel: str, field: str, how: str) -> CampaignError:
    return _refused(campaign, field, f"{rel!r} {how}; campaign paths stay inside the campaign "
                    "file's directory, and nothing was read", _ESCAPE_FIX)


def resolve_inside(campaign: Campaign, rel: str, field: str) -> tuple[str, str]:
    """(campaign root, the resolved path), refusing a path that leads outside the root.

    ``field`` is the campaign key that names ``rel``, which every refusal names.
    """
    problem = campaign_path_problem(rel)
    if problem:
        raise _escape(campaign, rel, field, problem)
    root = os.path.realpath(campaign.base_dir)
    target = os.path.realpath(os.path.join(root, rel))
    if not inside(target, root) or target == root:
        raise _escape(campaign, rel, field, "leads outside the campaign directory")
    return root, target


def open_inside(campaign: Campaign, rel: str, field: str) -> int:
    """A read-only descriptor of the regular file ``rel`` names inside the campaign directory.

    The path is resolved once (symlinks included) and checked against the directory; the
    resolved path is opened with O_NOFOLLOW, so a last component swapped for a symlink
    after the check fails to open, and O_NONBLOCK, so a FIFO cannot stall the read. Between
    the check and the open a writer could still swap a directory on the way for a symlink;
    so the check is repeated on what was actually opened: on Linux the descriptor's own
    path (``/proc/self/fd``); elsewhere the path is resolved again and must still be
    itself, naming the same device and inode as the descriptor.
    """
    root, target = resolve_inside(campaign, rel, field)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise _refused(campaign, field, f"cannot read {rel!r}: {exc.strerror}",
                       "check the path (relative paths are resolved against the campaign "
                       "file)") from exc
    try:
        info = os.fstat(fd)
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            opened = None
        if opened is not None:
            moved = not inside(opened, root)
        else:
            # Without /proc: the path must still resolve to itself and name the opened
            # file; a swap undone again between the open and this check goes unseen.
            now = os.stat(target)
            moved = os.path.realpath(target) != target or (now.st_dev, now.st_ino) != (
                info.st_dev, info.st_ino)
        if moved:
            raise _escape(campaign, rel, field, "led outside the campaign directory when opened")
        if not stat.S_ISREG(info.st_mode):
            raise _refused(campaign, field, f"{rel!r} is not a regular file",
                           "name a file, not a directory, device or pipe")
    except BaseException:
        os.close(fd)
        raise
    return fd


def too_large(campaign: Campaign, field: str, what: str, cap: int,
              key: str | None) -> CampaignError:
    """``what`` is over its cap of ``cap`` bytes; ``key`` is the ``[intake]`` key that raises
    the cap (None: a fixed cap)."""
    fix = f"shrink it, or raise [intake] {key} (at most {_CEILINGS[key]})" if key else (
        f"shrink it to at most {cap} bytes")
    return _refused(campaign, field, f"{what} is larger than the cap of {cap} bytes; nothing "
                    "was sent", fix)


def read_inside(campaign: Campaign, rel: str, field: str, *, cap: int, what: str,
                key: str | None = None) -> bytes:
    """The bytes of the file ``rel`` names inside the campaign directory (``open_inside``),
    no more than ``cap`` of them: of a larger file no more than cap + 1 bytes are read.

    ``field`` is the campaign key that names the file, ``what`` the file as messages name
    it, ``key`` the ``[intake]`` key that raises ``cap`` (None: the cap is fixed).
    """
    fd = open_inside(campaign, rel, field)
    try:
        if os.fstat(fd).st_size > cap:
            raise too_large(campaign, field, what, cap, key)
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
        raise too_large(campaign, field, what, cap, key)
    return data


def read_text(campaign: Campaign, rel: str, field: str, *, cap: int, what: str,
              key: str | None = None) -> str:
    """``read_inside``'s bytes as UTF-8 text; a file that is not UTF-8 is refused."""
    data = read_inside(campaign, rel, field, cap=cap, what=what, key=key)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refused(campaign, field, f"cannot read {rel!r}: not UTF-8 text",
                       "save the file as UTF-8") from exc


def read_tests(campaign: Campaign, rel: str, field: str = "checks.python.tests") -> str:
    """The UTF-8 text of the test file ``rel`` names inside the campaign directory, within
    ``[intake] max_tests_bytes``; ``field`` is the campaign key that names it."""
    return read_text(campaign, rel, field, cap=campaign.intake.max_tests_bytes,
                     what=f"test file {rel!r}", key="max_tests_bytes")


def read_lines(
    campaign: Campaign, rel: str, field: str, *, max_line: int, file: str
) -> Generator[tuple[int, bytes], None, None]:
    """Each line of the file ``rel`` names inside the campaign directory, numbered from 1,
    without its line ending (``\\n`` or ``\\r\\n``); streamed, one line in memory at a time.

    The file is opened as ``open_inside`` opens it (``field`` is the campaign key that
    names it). A line longer than ``max_line`` bytes is refused, naming ``file`` (the name
    messages show) and the line, after reading no more than ``max_line`` + 2 bytes of it.
    The descriptor is closed when the iteration ends or is closed.
    """
    fd = open_inside(campaign, rel, field)
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
