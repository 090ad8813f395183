"""Where receipts and their inclusion proofs sit on disk (docs/receipt-format.md §7, step 8).

``jurat run`` writes ``DIR/<artifact-id>.sigstore.json`` and, after the run's checkpoint,
the inclusion proof beside it; ``jurat verify --checkpoint`` looks for the proof there.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RECEIPT_SUFFIX", "proof_path_for", "receipt_path_for"]

#: The file name suffix of a receipt (a Sigstore bundle).
RECEIPT_SUFFIX = ".sigstore.json"


def receipt_path_for(out_dir: Path, artifact_id: str) -> Path:
    """``DIR/<artifact-id>.sigstore.json``: where a run writes an artifact's receipt."""
    return out_dir / f"{artifact_id}{RECEIPT_SUFFIX}"


def proof_path_for(receipt: Path) -> Path:
    """Where an inclusion proof sits: beside the receipt, ``c1.sigstore.json.proof.json``."""
    return receipt.with_name(receipt.name + ".proof.json")
