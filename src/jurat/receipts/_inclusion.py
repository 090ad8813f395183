"""Step 8 of verification: the receipt is in a ledger's log under a signed checkpoint.

A checkpoint is only as good as its signature: without the log's public key (the
``jurat-log.pub`` written beside the log key, docs/receipt-format.md §7) nothing shows who
committed to it, so the step fails rather than pass unchecked. The proof file
(``proof_path_for``) and the checkpoint are as untrusted as the receipt:
both are bounded before anything parses them, and whatever they provoke in the checker
is this step failing, never a crash (docs/receipt-format.md §7). The checker itself is
the caller's (``jurat.ledger.verify_receipt_inclusion``): receipts do not depend on a
ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jurat.canonical import loads_strict
from jurat.errors import JuratError, LedgerError
from jurat.receipts._bundle import MAX_BUNDLE_BYTES, MAX_DEPTH
from jurat.receipts._paths import proof_path_for
from jurat.receipts._verify import INCLUSION_STEP, STEPS, VerifyStep

__all__ = [
    "MAX_CHECKPOINT_BYTES",
    "MAX_PROOF_BYTES",
    "NO_LOG_KEY",
    "InclusionCheck",
    "inclusion_step",
    "read_at_most",
]

#: An inclusion proof holds the ledger entry, and so the receipt as base64 (4/3 of its
#: size), plus a few hashes: twice the receipt limit bounds it.
MAX_PROOF_BYTES = 2 * MAX_BUNDLE_BYTES
#: A checkpoint is a signed note of a few lines (the ledger caps notes at 64 KiB).
MAX_CHECKPOINT_BYTES = 64 * 1024
#: The step's number: after the seven of ``verify_bundle``.
INCLUSION_NUMBER = len(STEPS) + 1

#: Checks a receipt's inclusion: (bundle bytes, proof file, checkpoint file, the log's
#: C2SP verifier key) -> detail; the checkpoint's signature is checked with that key.
#: Raises a JuratError when the proof or the signature does not hold.
InclusionCheck = Callable[[bytes, Path, Path, str], str]

#: Step 8's detail when no log public key was given (the command line adds where it looked).
NO_LOG_KEY = (
    "the checkpoint's signature was NOT checked: no log public key (fix: pass --log-key "
    "DIR/jurat-log.pub, the public half of the log key that signed the checkpoint)"
)


def read_at_most(path: Path, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``path``: enough to tell that it is too large."""
    with Path(path).open("rb") as fh:
        return fh.read(limit + 1)


def _bound_inputs(proof: Path, checkpoint: Path) -> None:
    """Bound the two files before the checker reads them: sizes, and the proof's JSON."""
    if len(read_at_most(checkpoint, MAX_CHECKPOINT_BYTES)) > MAX_CHECKPOINT_BYTES:
        raise LedgerError(f"the checkpoint is larger than {MAX_CHECKPOINT_BYTES} bytes")
    data = read_at_most(proof, MAX_PROOF_BYTES)
    try:
        doc = loads_strict(data, max_bytes=MAX_PROOF_BYTES, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise LedgerError(f"the inclusion proof is not a strict JSON document: {exc}") from exc
    if not isinstance(doc, dict):
        raise LedgerError("the inclusion proof is not a JSON object")


def _step(ok: bool, detail: str) -> VerifyStep:
    return VerifyStep(number=INCLUSION_NUMBER, name=INCLUSION_STEP, ok=ok, detail=detail)


def inclusion_step(
    bundle_bytes: bytes,
    receipt: Path,
    checkpoint: Path,
    check: InclusionCheck,
    *,
    log_key: str | None,
    no_log_key: str = NO_LOG_KEY,
) -> VerifyStep:
    """Step 8: the proof beside ``receipt`` shows it under ``checkpoint``, signed by the
    log key ``log_key`` (a C2SP verifier key), by ``check``.

    Without ``log_key`` the step fails with ``no_log_key``: an unchecked checkpoint is
    never "ok".
    """
    if log_key is None:
        return _step(False, no_log_key)
    proof = proof_path_for(receipt)
    if not proof.exists():
        return _step(False, f"no inclusion proof at {proof}")
    if proof.stat().st_size == 0:
        return _step(False, f"the inclusion proof at {proof} is empty: the run that wrote "
                     "this receipt did not finish; run it again (it resumes) to write it")
    try:
        _bound_inputs(proof, checkpoint)
        detail = check(bundle_bytes, proof, checkpoint, log_key)
    except OSError as exc:
        return _step(False, f"cannot read the proof or checkpoint: {exc.strerror or exc}")
    except JuratError as exc:
        return _step(False, str(exc))
    except Exception as exc:
        # The proof's bytes are as untrusted as the receipt's: whatever they provoke in the
        # checker is this step failing, never a traceback (as in verify_bundle's steps).
        return _step(False, f"unexpected {type(exc).__name__} while checking: {exc}")
    return _step(True, detail or f"included under checkpoint {checkpoint.name}")
