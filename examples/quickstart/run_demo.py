"""What `make demo` runs: the quickstart campaigns, a verification, a replay, a report.

Run from this directory with the project's virtualenv python. Outputs go to ./out/.
A second run reuses every receipt from the ledger (jobs are idempotent).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
KEYS = OUT / "keys"
LEDGER = f"sqlite:///{OUT / 'jurat.db'}"
CAMPAIGNS = ("rubric", "criteria", "equivalence", "dataset")
# run exit codes 0/1/2 are decisions (accept / escalate-warn / reject-block); 3 is an input
# error, 4 a failure during the run.
DECISION_CODES = (0, 1, 2)


def jurat(*args: str) -> int:
    cmd = [sys.executable, "-m", "jurat", *args]
    print(f"\n$ jurat {' '.join(args)}", flush=True)
    return subprocess.call(cmd, cwd=HERE)


def main() -> int:
    OUT.mkdir(exist_ok=True)
    if not (KEYS / "jurat.key").exists():
        if jurat("keygen", "--out", str(KEYS)) != 0:
            return 1
    for name in CAMPAIGNS:
        code = jurat("run", f"{name}/campaign.toml", "--out", str(OUT / name), "--ledger", LEDGER,
                     "--key", str(KEYS / "jurat.key"), "--telemetry",
                     str(OUT / f"{name}.telemetry.ndjson"))
        if code not in DECISION_CODES:
            print(f"demo: `jurat run` on {name} failed with exit code {code}", file=sys.stderr)
            return 1
    receipt = OUT / "rubric" / "c1-canonical.sigstore.json"
    # --artifact: the receipt must be about this very file (its sha256 is the subject).
    if jurat("verify", str(receipt), "--key", str(KEYS / "jurat.pub"),
             "--artifact", "rubric/contributions/c1_canonical.py") != 0:
        print("demo: the receipt did not verify", file=sys.stderr)
        return 1
    # With --key, replay also checks every receipt's signature (without it, it exits 1:
    # the signatures were not checked, so not everything was shown to hold).
    if jurat("replay", LEDGER, "--key", str(KEYS / "jurat.pub")) != 0:
        print("demo: replay found a mismatch", file=sys.stderr)
        return 1
    jurat("report", LEDGER, "--html", str(OUT / "report.html"), "--key", str(KEYS / "jurat.pub"))
    print(f"\nreceipts:  {OUT}/{{{','.join(CAMPAIGNS)}}}/*.sigstore.json")
    print(f"ledger:    {OUT / 'jurat.db'}")
    print(f"report:    {OUT / 'report.html'}")
    print(f"verify:    .venv/bin/jurat verify {receipt} --key {KEYS / 'jurat.pub'} "
          f"--artifact {HERE / 'rubric' / 'contributions' / 'c1_canonical.py'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
