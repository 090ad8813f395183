"""Where receipts and their inclusion proofs sit on disk (docs/receipt-format.md §7, step 8).

``jurat run`` writes ``DIR/<artifact-id>.sigstore.json`` and, after the run's checkpoint,
the inclusion proof beside it; ``jurat verify --checkpoint`` looks for the proof there, and
``jurat verify DIR`` verifies every receipt in a directory (``receipts_in``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "PROOF_SUFFIX",
    "RECEIPT_SUFFIX",
    "proof_path_for",
    "receipt_path_for",
    "receipts_in",
]

#: The file name suffix of a receipt (a Sigstore bundle).
RECEIPT_SUFFIX = ".sigstore.json"
#: The suffix an inclusion proof adds to its receipt's file name.
PROOF_SUFFIX = ".proof.json"


def receipt_path_for(out_dir: Path, artifact_id: str) -> Path:
    """``DIR/<artifact-id>.sigstore.json``: where a run writes an artifact's receipt."""
    return out_dir / f"{artifact_id}{RECEIPT_SUFFIX}"


def proof_path_for(receipt: Path) -> Path:
    """Where an inclusion proof sits: beside the receipt, ``c1.sigstore.json.proof.json``."""
    return receipt.with_name(receipt.name + PROOF_SUFFIX)


def receipts_in(directory: Path) -> list[Path]:
    """Every receipt directly in ``directory`` (``*.sigstore.json``), sorted by name.

    Not its subdirectories, and not the inclusion proofs (``*.sigstore.json.proof.json``),
    whose names do not end in the receipt suffix.
    """
    return sorted(p for p in directory.glob(f"*{RECEIPT_SUFFIX}") if p.is_file())
