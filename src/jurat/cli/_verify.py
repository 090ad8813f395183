"""``jurat verify`` and ``jurat keygen``: printing layers over ``jurat.receipts``.

``verify`` exits 0 every step held; 1 a verification step failed (whatever the receipt's
bytes: too large, too deep, not UTF-8, not a bundle); 3 the receipt, key or artifact could
not be read, or the options contradict each other (nothing was verified).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import shown
from jurat.errors import ConfigError
from jurat.ledger import verify_receipt_inclusion
from jurat.receipts import (
    MAX_BUNDLE_BYTES,
    STEPS,
    InclusionCheck,
    VerifyReport,
    VerifyStep,
    default_public_key_path,
    inclusion_step,
    keygen,
    load_public_key,
    public_key_hint,
    read_at_most,
    receipt_digest,
    verify_bundle,
)

__all__ = ["keygen_command", "verify_command"]

_DIGEST = re.compile(r"sha256:([0-9a-fA-F]{64})")


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _print_step(console: Console, step: VerifyStep) -> None:
    mark = "[green]ok  [/]" if step.ok else "[red]FAIL[/]"
    console.print(f"  {step.number}. {mark} {step.name:<21} {shown(step.detail)}")


def _print_steps(console: Console, report: VerifyReport) -> None:
    for step in report.steps:
        _print_step(console, step)
    for number in range(len(report.steps) + 1, len(STEPS) + 1):
        console.print(f"  {number}. [dim]--   {STEPS[number - 1]:<21} not run[/]")


def _expected_digest(artifact: Path | None, artifact_digest: str | None) -> str | None:
    """The artifact digest step 5 must find, from ``--artifact`` and/or ``--artifact-digest``.

    Raises ConfigError for an unreadable file, a malformed digest, or two that disagree.
    """
    given = None
    if artifact_digest is not None:
        match = _DIGEST.fullmatch(artifact_digest.strip())
        if match is None:
            raise ConfigError(
                f"--artifact-digest {artifact_digest[:80]!r} is not sha256:<64 hex digits>"
            )
        given = match.group(1).lower()
    if artifact is None:
        return given
    digest = hashlib.sha256()
    try:
        with Path(artifact).open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise ConfigError(f"cannot read artifact {artifact}: {exc.strerror or exc}") from exc
    if given is not None and given != digest.hexdigest():
        raise ConfigError(
            f"--artifact {artifact} has sha256:{digest.hexdigest()}, not the --artifact-digest "
            f"sha256:{given}; give one of them"
        )
    return digest.hexdigest()


def _about(report: VerifyReport, expected: str | None, artifact: Path | None) -> str:
    """The end of the last line: which artifact the receipt is about, and whether it was
    compared with the one the user holds."""
    if report.artifact_id is None or report.artifact_sha256 is None:
        return "artifact not established (no signed statement was read)"
    about = f"artifact {shown(report.artifact_id)} sha256:{shown(report.artifact_sha256)}"
    if expected is None:
        return about + " (not compared with any artifact: pass --artifact FILE)"
    given = f"--artifact {escape(str(artifact))}" if artifact is not None else "--artifact-digest"
    if report.artifact_sha256 != expected:
        return f"{about}, NOT the digest of {given}"
    return f"{about}, the digest of {given}"


def verify_command(
    receipt: Path,
    key: Path | None,
    checkpoint: Path | None = None,
    *,
    artifact: Path | None = None,
    artifact_digest: str | None = None,
    inclusion: InclusionCheck | None = None,
) -> ExitCode:
    """``jurat verify RECEIPT [--key PUB] [--artifact FILE] [--artifact-digest sha256:HEX]
    [--checkpoint CP]``: print each step and, on the last line, the outcome and the
    artifact the receipt is about; OK iff all hold.

    Without ``key``, the default public key next to the default signing key is used.
    ``artifact`` (a file, hashed) and/or ``artifact_digest`` make step 5 also check the
    statement's subject against that digest. Step 8 runs only with a checkpoint: it needs
    ``proof_path_for(receipt)`` beside the receipt and calls ``inclusion`` (default:
    ``jurat.ledger.verify_receipt_inclusion``), which returns a detail line or raises a
    JuratError.
    """
    console = _console()
    try:
        # Read no more than the limit (+1 to see it exceeded): step 1 refuses the rest.
        bundle_bytes = read_at_most(Path(receipt), MAX_BUNDLE_BYTES)
    except OSError as exc:
        return print_error(ConfigError(f"cannot read receipt {receipt}: {exc.strerror or exc}"))
    key_path = key
    if key_path is None:
        key_path = default_public_key_path()
        console.print(
            f"key: {escape(str(key_path))} (the default key; pass --key PUB to use another)"
        )
    try:
        public_key = load_public_key(key_path)
        expected = _expected_digest(artifact, artifact_digest)
    except ConfigError as exc:
        return print_error(exc)
    console.print(f"verifying {escape(str(receipt))} with key {public_key_hint(public_key)}")
    report = verify_bundle(bundle_bytes, public_key, artifact_sha256=expected)
    _print_steps(console, report)
    ok = report.ok
    included: VerifyStep | None = None
    if checkpoint is not None:
        included = inclusion_step(bundle_bytes, Path(receipt), Path(checkpoint),
                                  inclusion or verify_receipt_inclusion)
        _print_step(console, included)
        ok = included.ok and ok
    about = _about(report, expected, artifact)
    if ok:
        d = report.decision
        outcome = (d.disposition or d.rollout or f"equivalent={d.equivalent}") if d else "?"
        console.print(
            f"[green]verified[/]: {outcome} \u2014 {about}; "
            f"receipt sha256:{receipt_digest(bundle_bytes)}"
        )
        return ExitCode.OK
    failed = report.failed or included
    where = f"step {failed.number} ({failed.name})" if failed else "a step"
    console.print(f"[red]not verified[/]: {where} failed \u2014 {about}")
    return ExitCode.ESCALATE


def keygen_command(out: Path) -> ExitCode:
    """``jurat keygen --out DIR``: write jurat.key (0600) and jurat.pub; never overwrite."""
    console = _console()
    try:
        priv, pub = keygen(out)
        hint = public_key_hint(load_public_key(pub))
    except ConfigError as exc:
        return print_error(exc)
    console.print(f"private key: {escape(str(priv))} (PKCS#8 PEM, mode 0600; keep it secret)")
    console.print(f"public key:  {escape(str(pub))} (SPKI PEM; give it to verifiers)")
    console.print(f"key hint:    {hint}")
    return ExitCode.OK
