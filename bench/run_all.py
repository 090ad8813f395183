"""Run every benchmark in this folder, one after the other (`make bench`).

Each script prints its own table with ratios against a baseline measured in the same
run; the machine is noisy, so compare ratios rather than absolute numbers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: bench/run_scale.py is not among them: its 100,000-artifact rows take about half an hour
#: per ledger backend on two cores; run it on its own.
SCRIPTS = ("orchestration.py", "code_checks.py", "ledger.py", "receipts.py", "equivalence.py",
           "run_e2e.py", "service.py")


def main() -> int:
    failed = []
    for name in SCRIPTS:
        print(f"\n=== bench/{name} ===", flush=True)
        if subprocess.call([sys.executable, str(HERE / name)], cwd=HERE.parent) != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
