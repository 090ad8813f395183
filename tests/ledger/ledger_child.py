"""A separate process appending to a ledger, for the concurrency and SIGKILL tests.

usage: ledger_child.py MODE URL SCHEMA|- CHECKPOINT KEY RUN [COUNT]

``append``: COUNT plain entries, then exit. ``fault``: simulated receipts
forever (every 5th followed by a checkpoint), printing ``<seq> <job id>
<receipt sha256>`` after each commit, until killed.
"""

from __future__ import annotations

import hashlib
import sys

from jurat.ledger import job_id, load_or_create_log_key, open_ledger

POLICY = hashlib.sha256(b"policy").hexdigest()


def main() -> None:
    mode, url, schema, checkpoint, key, run = sys.argv[1:7]
    ledger = open_ledger(url, schema=None if schema == "-" else schema, checkpoint_path=checkpoint)
    signer = load_or_create_log_key(key)
    print("ready", flush=True)
    if mode == "append":
        for i in range(int(sys.argv[7])):
            entry = ledger.append("sample_recorded", f"{run}", {"run": run, "i": i})
            print(entry.seq, flush=True)
        return
    i = 0
    while True:
        artifact = hashlib.sha256(f"{run}-{i}".encode()).hexdigest()
        job = job_id(artifact, "task/1", POLICY, "jurat-test/1", 0)
        receipt = f"receipt run={run} i={i} ".encode() * 20
        subject = f"a{i % 3}"
        slot = ledger.next_review("camp", subject)
        entry = ledger.append_receipt(
            job, receipt, campaign_id="camp", artifact_id=subject, review=slot
        )
        print(entry.seq, job, hashlib.sha256(receipt).hexdigest(), flush=True)
        if i % 5 == 4:
            ledger.checkpoint(signer)
        i += 1


if __name__ == "__main__":
    main()
