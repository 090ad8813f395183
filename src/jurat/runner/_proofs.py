"""Each receipt's inclusion proof, written beside it once the run's checkpoint is signed.

A run signs one checkpoint after its last job, then proves every receipt in it. With
worker processes (runner/_shards.py) each worker proves and writes its own receipts'
proofs, so the two halves of this last step run on two cores.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jurat.ledger import EntryProof, Ledger
from jurat.receipts import proof_path_for

__all__ = ["PROOF_BATCH", "write_proofs"]

#: Receipts proven per read of the ledger: the proofs, entries included, of one batch are
#: held at once (a receipt entry is a few kilobytes).
PROOF_BATCH = 1000


def write_proofs(ledger: Ledger, receipts: list[tuple[int, str]], note: str) -> None:
    """Write the proof of each (receipt entry, receipt file) in the checkpoint ``note``
    beside its receipt; ``prove_entries`` reads the stored tree once per batch."""

    def write(receipt: str, proof: EntryProof) -> None:
        proof_path_for(Path(receipt)).write_text(proof.model_dump_json(indent=2))

    # Creating files is the kernel's work (up to a millisecond each here), done on
    # threads while the next batch is proven.
    with ThreadPoolExecutor(8, thread_name_prefix="jurat-proof-files") as files:
        for start in range(0, len(receipts), PROOF_BATCH):
            batch = receipts[start:start + PROOF_BATCH]
            proofs = ledger.prove_entries([seq for seq, _ in batch], note)
            # list(): the first failed write raises here.
            list(files.map(write, [receipt for _, receipt in batch], proofs))
