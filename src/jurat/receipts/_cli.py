"""``jurat verify`` and ``jurat keygen``: thin printing layers over the library functions.

Exit codes: 0 every step held; 1 a verification step failed (whatever the receipt's
bytes: too large, too deep, not UTF-8, not a bundle); 3 the receipt, key or artifact
could not be read, or the options contradict each other (nothing was verified).
"""

from __future__ import annotations

import hashlib
import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from jurat.canonical import loads_strict
from jurat.errors import ConfigError, DependencyError, JuratError, LedgerError
from jurat.receipts._bundle import MAX_BUNDLE_BYTES, MAX_DEPTH, receipt_digest
from jurat.receipts._keys import (
    default_public_key_path,
    keygen,
    load_public_key,
    public_key_hint,
)
from jurat.receipts._verify import INCLUSION_STEP, STEPS, VerifyReport, verify_bundle

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 3

#: An inclusion proof holds the ledger entry, and so the receipt as base64 (4/3 of its
#: size), plus a few hashes: twice the receipt limit bounds it.
MAX_PROOF_BYTES = 2 * MAX_BUNDLE_BYTES
#: A checkpoint is a signed note of a few lines (the ledger caps notes at 64 KiB).
MAX_CHECKPOINT_BYTES = 64 * 1024
_DIGEST = re.compile(r"sha256:([0-9a-fA-F]{64})")
_SHOWN_CHARS = 300

#: Checks a receipt's inclusion: (bundle bytes, proof file, checkpoint file) -> detail.
#: Raises a JuratError when the proof does not hold.
InclusionCheck = Callable[[bytes, Path, Path], str]


def proof_path_for(receipt: Path) -> Path:
    """Where an inclusion proof sits: beside the receipt, ``c1.sigstore.json.proof.json``."""
    return receipt.with_name(receipt.name + ".proof.json")


def _ledger_inclusion(bundle_bytes: bytes, proof: Path, checkpoint: Path) -> str:
    # The ledger package is another engineer's; import it only when a checkpoint is given.
    try:
        ledger: Any = importlib.import_module("jurat.ledger")
    except ImportError as exc:
        raise DependencyError(f"step 8 needs jurat.ledger, which fails to import: {exc}") from exc
    check = getattr(ledger, "verify_receipt_inclusion", None)
    if check is None:
        raise DependencyError(
            "step 8 needs jurat.ledger.verify_receipt_inclusion(bundle_bytes, proof_path, "
            "checkpoint_path), which this build does not provide"
        )
    result = check(bundle_bytes, proof, checkpoint)
    return str(result) if result else f"included under checkpoint {checkpoint.name}"


def _console(*, stderr: bool = False) -> Console:
    return Console(highlight=False, soft_wrap=True, stderr=stderr)


def _shown(text: str) -> str:
    """Receipt-derived text made safe to print: one line, no control characters, short.

    A receipt must not be able to print a forged line (a newline, an ANSI sequence, Rich
    markup) or flood the terminal.
    """
    clean = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[: _SHOWN_CHARS + 1])
    if len(text) > _SHOWN_CHARS:
        clean = clean[:_SHOWN_CHARS] + "..."
    return escape(clean)


def _print_steps(console: Console, report: VerifyReport) -> None:
    for s in report.steps:
        mark = "[green]ok  [/]" if s.ok else "[red]FAIL[/]"
        console.print(f"  {s.number}. {mark} {s.name:<21} {_shown(s.detail)}")
    for number in range(len(report.steps) + 1, len(STEPS) + 1):
        console.print(f"  {number}. [dim]--   {STEPS[number - 1]:<21} not run[/]")


def _read_at_most(path: Path, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``path``: enough to tell that it is too large."""
    with Path(path).open("rb") as fh:
        return fh.read(limit + 1)


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
    about = f"artifact {_shown(report.artifact_id)} sha256:{_shown(report.artifact_sha256)}"
    if expected is None:
        return about + " (not compared with any artifact: pass --artifact FILE)"
    given = f"--artifact {escape(str(artifact))}" if artifact is not None else "--artifact-digest"
    if report.artifact_sha256 != expected:
        return f"{about}, NOT the digest of {given}"
    return f"{about}, the digest of {given}"


def verify_main(
    receipt: Path,
    key: Path | None,
    checkpoint: Path | None = None,
    *,
    artifact: Path | None = None,
    artifact_digest: str | None = None,
    inclusion: InclusionCheck | None = None,
) -> int:
    """``jurat verify RECEIPT [--key PUB] [--artifact FILE] [--artifact-digest sha256:HEX]
    [--checkpoint CP]``: print each step and, on the last line, the outcome and the
    artifact the receipt is about; 0 iff all hold.

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
        bundle_bytes = _read_at_most(Path(receipt), MAX_BUNDLE_BYTES)
    except OSError as exc:
        _console(stderr=True).print(
            f"[red]error:[/] cannot read receipt {escape(str(receipt))}: {exc.strerror or exc}"
        )
        return EXIT_INPUT
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
        _console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_INPUT
    console.print(f"verifying {escape(str(receipt))} with key {public_key_hint(public_key)}")
    report = verify_bundle(bundle_bytes, public_key, artifact_sha256=expected)
    _print_steps(console, report)
    ok = report.ok
    if checkpoint is not None:
        ok = _inclusion_step(console, bundle_bytes, Path(receipt), checkpoint, inclusion) and ok
    about = _about(report, expected, artifact)
    if ok:
        d = report.decision
        outcome = (d.disposition or d.rollout or f"equivalent={d.equivalent}") if d else "?"
        console.print(
            f"[green]verified[/]: {outcome} \u2014 {about}; "
            f"receipt sha256:{receipt_digest(bundle_bytes)}"
        )
        return EXIT_OK
    failed = report.failed
    where = f"step {failed.number} ({failed.name})" if failed else f"step 8 ({INCLUSION_STEP})"
    console.print(f"[red]not verified[/]: {where} failed \u2014 {about}")
    return EXIT_FAILED


def _inclusion_input(proof: Path, checkpoint: Path) -> None:
    """Bound the two files before the ledger reads them: sizes, and the proof's JSON."""
    if len(_read_at_most(checkpoint, MAX_CHECKPOINT_BYTES)) > MAX_CHECKPOINT_BYTES:
        raise LedgerError(f"the checkpoint is larger than {MAX_CHECKPOINT_BYTES} bytes")
    data = _read_at_most(proof, MAX_PROOF_BYTES)
    try:
        doc = loads_strict(data, max_bytes=MAX_PROOF_BYTES, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise LedgerError(f"the inclusion proof is not a strict JSON document: {exc}") from exc
    if not isinstance(doc, dict):
        raise LedgerError("the inclusion proof is not a JSON object")


def _inclusion_step(
    console: Console,
    bundle_bytes: bytes,
    receipt: Path,
    checkpoint: Path,
    inclusion: InclusionCheck | None,
) -> bool:
    proof = proof_path_for(receipt)
    label = f"  8. {{mark}} {INCLUSION_STEP:<21} {{detail}}"
    if not proof.exists():
        detail = f"no inclusion proof at {proof}"
        console.print(label.format(mark="[red]FAIL[/]", detail=_shown(detail)))
        return False
    try:
        _inclusion_input(proof, checkpoint)
        detail = (inclusion or _ledger_inclusion)(bundle_bytes, proof, checkpoint)
    except OSError as exc:
        detail = f"cannot read the proof or checkpoint: {exc.strerror or exc}"
        console.print(label.format(mark="[red]FAIL[/]", detail=_shown(detail)))
        return False
    except JuratError as exc:
        console.print(label.format(mark="[red]FAIL[/]", detail=_shown(str(exc))))
        return False
    except Exception as exc:
        # The proof's bytes are as untrusted as the receipt's: whatever they provoke in the
        # ledger's checker is this step failing, never a traceback.
        detail = f"unexpected {type(exc).__name__} while checking: {exc}"
        console.print(label.format(mark="[red]FAIL[/]", detail=_shown(detail)))
        return False
    console.print(label.format(mark="[green]ok  [/]", detail=_shown(detail)))
    return True


def keygen_main(out: Path) -> int:
    """``jurat keygen --out DIR``: write jurat.key (0600) and jurat.pub; never overwrite."""
    console = _console()
    try:
        priv, pub = keygen(out)
        hint = public_key_hint(load_public_key(pub))
    except ConfigError as exc:
        _console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_INPUT
    console.print(f"private key: {escape(str(priv))} (PKCS#8 PEM, mode 0600; keep it secret)")
    console.print(f"public key:  {escape(str(pub))} (SPKI PEM; give it to verifiers)")
    console.print(f"key hint:    {hint}")
    return EXIT_OK
