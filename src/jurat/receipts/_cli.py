"""``jurat verify`` and ``jurat keygen``: thin printing layers over the library functions.

Exit codes: 0 every step held; 1 a verification step failed; 3 the receipt or key
could not be read (nothing was verified).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from jurat.errors import ConfigError, DependencyError, JuratError
from jurat.receipts._bundle import receipt_digest
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


def _print_steps(console: Console, report: VerifyReport) -> None:
    for s in report.steps:
        mark = "[green]ok  [/]" if s.ok else "[red]FAIL[/]"
        console.print(f"  {s.number}. {mark} {s.name:<21} {escape(s.detail)}")
    for number in range(len(report.steps) + 1, len(STEPS) + 1):
        console.print(f"  {number}. [dim]--   {STEPS[number - 1]:<21} not run[/]")


def verify_main(
    receipt: Path,
    key: Path | None,
    checkpoint: Path | None = None,
    *,
    inclusion: InclusionCheck | None = None,
) -> int:
    """``jurat verify RECEIPT [--key PUB] [--checkpoint CP]``: print each step; 0 iff all hold.

    Without ``key``, the default public key next to the default signing key is used.
    Step 8 runs only with a checkpoint: it needs ``proof_path_for(receipt)`` beside the
    receipt and calls ``inclusion`` (default: ``jurat.ledger.verify_receipt_inclusion``),
    which returns a detail line or raises a JuratError.
    """
    console = _console()
    try:
        bundle_bytes = Path(receipt).read_bytes()
    except OSError as exc:
        _console(stderr=True).print(
            f"[red]error:[/] cannot read receipt {escape(str(receipt))}: {exc.strerror}"
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
    except ConfigError as exc:
        _console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_INPUT
    console.print(f"verifying {escape(str(receipt))} with key {public_key_hint(public_key)}")
    report = verify_bundle(bundle_bytes, public_key)
    _print_steps(console, report)
    ok = report.ok
    if checkpoint is not None:
        ok = _inclusion_step(console, bundle_bytes, Path(receipt), checkpoint, inclusion) and ok
    if ok:
        d = report.decision
        outcome = (d.disposition or d.rollout or f"equivalent={d.equivalent}") if d else "?"
        console.print(
            f"[green]verified[/]: {outcome}; receipt sha256:{receipt_digest(bundle_bytes)}"
        )
        return EXIT_OK
    failed = report.failed
    where = f"step {failed.number} ({failed.name})" if failed else f"step 8 ({INCLUSION_STEP})"
    console.print(f"[red]not verified[/]: {where} failed")
    return EXIT_FAILED


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
        console.print(label.format(mark="[red]FAIL[/]", detail=escape(detail)))
        return False
    try:
        detail = (inclusion or _ledger_inclusion)(bundle_bytes, proof, checkpoint)
    except JuratError as exc:
        console.print(label.format(mark="[red]FAIL[/]", detail=escape(str(exc))))
        return False
    console.print(label.format(mark="[green]ok  [/]", detail=escape(detail)))
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
