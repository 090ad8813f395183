"""A ledger argument as a URL: the one place a bare SQLite path becomes one.

Every command that takes a ledger (``--ledger`` or a ``LEDGER`` argument) passes it through
``ledger_url`` (cli/_typer.py), so ``jurat run --ledger path.db`` and ``jurat replay path.db``
name the same file (issue 29). ``open_ledger`` itself takes URLs only: a library caller's
typo is refused, not made into a new SQLite file.
"""

from __future__ import annotations

__all__ = ["ledger_url"]


def ledger_url(value: str) -> str:
    """``value`` if it is a URL (``sqlite:///path``, ``postgresql://…``), else the SQLite
    file it names: ``path.db`` is ``sqlite:///path.db``, ``/abs/l.db`` ``sqlite:////abs/l.db``."""
    return value if "://" in value else f"sqlite:///{value}"
