"""Each receipt's inclusion proof, written beside it once the run's checkpoint is signed.

A run signs one checkpoint after its last job, then proves every receipt in it. With
worker processes (runner/_shards.py) each worker proves and writes its own receipts'
proofs, so the two halves of this last step run on two cores.
"""

from __future__ import annotations

from pathlib import Path

from jurat.ledger import Ledger
from jurat.receipts import proof_path_for

__all__ = ["PROOF_BATCH", "write_proofs"]

#: Receipts proven per read of the ledger: the proofs, entries included, of one batch are
#: held at once (a receipt entry is a few kilobytes).
PROOF_BATCH = 1000


def write_proofs(ledger: Ledger, receipts: list[tuple[int, str]], note: str) -> None:
    """Write the proof of each (receipt entry, receipt file) in the checkpoint ``note``
    beside its receipt; ``prove_entries`` reads the stored tree once per batch."""
    # On this thread: a run creates each proof's file, empty, beside its receipt while its
    # jobs run (runner/_run.py), so these writes fill files that exist, and threads for
    # them cost more in handoffs of the interpreter's lock than they saved (bench/README.md,
    # "Whole runs").
    for start in range(0, len(receipts), PROOF_BATCH):
        batch = receipts[start:start + PROOF_BATCH]
        proofs = ledger.prove_entries([seq for seq, _ in batch], note)
        for (_, receipt), proof in zip(batch, proofs, strict=True):
            proof_path_for(Path(receipt)).write_text(proof.model_dump_json(indent=2))
