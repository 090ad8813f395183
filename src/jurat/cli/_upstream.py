"""``jurat upstream sign|verify``: the Stage 1/2 receipts a campaign's ``[upstream]`` takes,
made by an operator's stage tool and checked as the campaign checks them
(docs/campaign-format.md, "Making upstream receipts").

``sign`` is ``jurat.receipts.sign_upstream`` on the command line: exit 0 written, 3 an input
it cannot sign (nothing written). ``verify`` runs the campaign's own check
(``jurat.runner.check_upstream``, one implementation) with one key of one stage: exit 0 the
campaign would take the receipt for these bytes, 1 it would refuse it (the reason is
printed), 3 an input could not be read.

The typer wrappers are here rather than in ``_app``; like ``_app``'s, they import the
command's machinery only when it runs.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from jurat.cli._errors import finish, print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import shown
from jurat.cli._typer import _Commands, app
from jurat.errors import ConfigError, JuratError

__all__ = ["upstream_app", "upstream_sign_command", "upstream_verify_command"]

upstream_app = typer.Typer(no_args_is_help=True, cls=_Commands,
                           help="Stage 1/2 receipts that a campaign's \\[upstream] takes.")
app.add_typer(upstream_app, name="upstream")

_FILE_HELP = "The candidate's file: its sha256 is the receipt's subject."
_DIGEST_HELP = "sha256:<hex> of the candidate's bytes, instead of --artifact."


@upstream_app.command("sign")
def upstream_sign(
    stage: Annotated[str, typer.Option(
        "--stage", help="The stage that passed the candidate, as the campaign's \\[upstream] "
        "keys name it (e.g. stage1).")],
    campaign: Annotated[str, typer.Option("--campaign", help="The \\[campaign] id.")],
    key: Annotated[Path, typer.Option(
        "--key", help="The stage's PEM private key (jurat keygen); the campaign trusts its "
        ".pub for --stage.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the receipt.")],
    artifact: Annotated[Path | None, typer.Option("--artifact", help=_FILE_HELP)] = None,
    artifact_digest: Annotated[str | None, typer.Option(
        "--artifact-digest", help=_DIGEST_HELP)] = None,
    task: Annotated[str | None, typer.Option(
        "--task", help="The \\[\\[tasks]] id the candidate answers.")] = None,
    check: Annotated[list[str] | None, typer.Option(
        "--check", help="A check the stage passed (repeat for several); recorded, not "
        "read by the campaign.")] = None,
    not_after: Annotated[str | None, typer.Option(
        "--not-after", help="Until when the receipt holds, UTC RFC 3339 "
        "(2026-03-01T00:00:00Z); default: until a later receipt supersedes it.")] = None,
) -> None:
    """Sign a Stage 1/2 receipt: the stage passed these bytes (docs/campaign-format.md,
    "Making upstream receipts"). Exit 0 written, 3 nothing written."""
    finish(lambda: upstream_sign_command(
        stage=stage, campaign=campaign, key=key, out=out, artifact=artifact,
        artifact_digest=artifact_digest, task=task, checks=check or [], not_after=not_after))


@upstream_app.command("verify")
def upstream_verify(
    receipt: Annotated[Path, typer.Argument(help="The upstream receipt (a Sigstore bundle).")],
    key: Annotated[Path, typer.Option("--key", help="The stage's PEM public key.")],
    stage: Annotated[str, typer.Option("--stage", help="The stage that key signs for.")],
    artifact: Annotated[Path | None, typer.Option("--artifact", help=_FILE_HELP)] = None,
    artifact_digest: Annotated[str | None, typer.Option(
        "--artifact-digest", help=_DIGEST_HELP)] = None,
) -> None:
    """Check an upstream receipt as a campaign trusting --key for --stage checks it.
    Exit 0 it would be taken, 1 it would be refused, 3 an input could not be read."""
    finish(lambda: upstream_verify_command(receipt, key=key, stage=stage, artifact=artifact,
                                           artifact_digest=artifact_digest))


def _digest(artifact: Path | None, artifact_digest: str | None) -> str:
    """The candidate's sha256 from exactly one of ``--artifact`` and ``--artifact-digest``,
    read as ``jurat verify`` reads them."""
    from jurat.cli._verify import _expected_digest

    if (artifact is None) == (artifact_digest is None):
        raise ConfigError("give the candidate as exactly one of --artifact FILE and "
                          "--artifact-digest sha256:HEX (fix: --artifact candidate.py)")
    digest = _expected_digest(artifact, artifact_digest)
    assert digest is not None  # one of the two was given
    return digest


def _time(value: str | None, option: str) -> datetime | None:
    from jurat.runner._upstream import _time as upstream_time_of

    if value is None:
        return None
    moment = upstream_time_of(value)
    if moment is None:
        raise ConfigError(f"{option} {value[:80]!r} is not a UTC RFC 3339 time (fix: e.g. "
                          "2026-03-01T00:00:00Z)")
    return moment


def _write(out: Path, data: bytes) -> None:
    """``data`` at ``out``, whole or not at all: written beside it, then renamed over it."""
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".",
                                   prefix=f".{out.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            # A receipt is public (the contributor sends it): not mkstemp's private 0600.
            os.chmod(tmp, 0o644)
            os.replace(tmp, out)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot write the receipt: {exc.strerror or exc} "
                          "(fix: a file in an existing, writable directory)") from exc


def upstream_sign_command(*, stage: str, campaign: str, key: Path, out: Path,
                          artifact: Path | None, artifact_digest: str | None,
                          task: str | None, checks: list[str], not_after: str | None
                          ) -> ExitCode:
    """Write the receipt to ``out``; print what was signed and the command that checks it."""
    from jurat.receipts import load_private_key, public_key_hint, sign_upstream

    try:
        digest = _digest(artifact, artifact_digest)
        private = load_private_key(key)
        signed = sign_upstream(
            stage=stage, campaign=campaign, artifact_sha256=digest, key=private,
            artifact_name=artifact.name if artifact is not None else "artifact", task=task,
            checks=checks, not_after=_time(not_after, "--not-after"))
        _write(out, signed)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    public = key.with_suffix(".pub")
    given = (f"--artifact {shlex.quote(str(artifact))}" if artifact is not None
             else f"--artifact-digest sha256:{digest}")
    console = _stdout()
    console.print(f"signed a {stage} receipt of sha256:{digest} for campaign {campaign} with "
                  f"key id {public_key_hint(private.public_key())}: {shown(out)}")
    # Not wrapped or shortened: the command is for copying.
    console.print(escape(f"verify: jurat upstream verify {shlex.quote(str(out))} --key "
                         f"{shlex.quote(str(public)) if public.is_file() else 'STAGE.pub'} "
                         f"--stage {stage} {given}"))
    return ExitCode.OK


def upstream_verify_command(receipt: Path, *, key: Path, stage: str, artifact: Path | None,
                            artifact_digest: str | None) -> ExitCode:
    """One line: ``verified: …`` (exit 0) or ``not verified: <the campaign's reason>``
    (exit 1)."""
    import hashlib
    import re

    from jurat.models._campaign import STAGE_PATTERN
    from jurat.receipts import load_public_key, read_at_most
    from jurat.receipts._keys import public_key_der
    from jurat.runner import UPSTREAM_BYTES, StageKey, UpstreamRefused, check_upstream

    try:
        digest = _digest(artifact, artifact_digest)
        if not re.fullmatch(STAGE_PATTERN, stage):
            raise ConfigError(f"--stage {stage[:80]!r} is not a stage name (fix: the stage as "
                              "the campaign's [upstream] keys name it, e.g. stage1)")
        public = load_public_key(key)
        # At most one byte over the cap: enough to refuse it as the campaign does.
        raw = read_at_most(receipt, UPSTREAM_BYTES)
    except OSError as exc:
        return print_error(ConfigError(f"cannot read upstream receipt {receipt}: "
                                       f"{exc.strerror or exc}"), code=ExitCode.INPUT)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    trusted = StageKey(stage=stage, key=public,
                       sha256=hashlib.sha256(public_key_der(public)).hexdigest())
    try:
        bound = check_upstream([raw], [trusted], [stage], digest)[0]
    except UpstreamRefused as exc:
        _stdout().print(f"not verified: {shown(exc.reason, 600)}")
        return ExitCode.ESCALATE
    # The predicate type is the receipt's own text: shown, never printed raw.
    _stdout().print(f"verified: a {bound['stage']} receipt ({shown(bound['name'])}) of "
                    f"sha256:{digest}, issued at {bound['issued_at']}, signed by the key whose "
                    f"SubjectPublicKeyInfo has sha256 {bound['key_sha256']}; a campaign binds "
                    f"it by its payload's sha256 {bound['sha256']}")
    return ExitCode.OK


def _stdout() -> Console:
    return Console(emoji=False, highlight=False, soft_wrap=True)
