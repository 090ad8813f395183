"""Write one benchmark's results into bench/README.md, between that benchmark's markers."""

from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"


def write_section(name: str, text: str) -> None:
    """Replace the text between ``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end -->``."""
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    body = README.read_text(encoding="utf-8") if README.exists() else ""
    if start not in body or end not in body:
        print(f"note: markers for {name} not found in {README}; not written", file=sys.stderr)
        return
    head, rest = body.split(start, 1)
    _, tail = rest.split(end, 1)
    README.write_text(f"{head}{start}\n{text}\n{end}{tail}", encoding="utf-8")
