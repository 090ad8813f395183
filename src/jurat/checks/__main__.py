"""``python -m jurat.checks CANDIDATE.py [--tests T.py] [--limits ...] [--json]``."""

import sys

from jurat.checks._cli import main

if __name__ == "__main__":
    sys.exit(main())
