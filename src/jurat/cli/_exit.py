"""Exit statuses of every ``jurat`` command: part of the contract (docs/design.md, "CLI").

Each status has one meaning across commands, so a script can tell a decision from a
failure: 0, 1 and 2 are outcomes (what was evaluated or verified), 3 and 4 are errors
(nothing evaluated, or the run failed part-way).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from jurat.models import Decision

__all__ = ["ExitCode"]


class ExitCode(enum.IntEnum):
    """The status a ``jurat`` command exits with."""

    OK = 0
    """Every artifact accepted / shipped / held as equivalent or different; every check held."""
    ESCALATE = 1
    """Any escalate, WARN or undecided decision; or a verification that did not hold
    (``verify``, ``replay`` (also without ``--key``: a check was not made), ``log verify``,
    a ``selftest`` control)."""
    REJECT = 2
    """Any reject or BLOCK decision; ``check``: a required gate did not pass."""
    INPUT = 3
    """A configuration or input error, usage errors included: nothing was evaluated and
    nothing written."""
    RUN_FAILURE = 4
    """A failure during the run (a ``JuratError`` that is not an input error, or an internal
    error), or a run stopped at its ``[budget]`` cap; what completed is in the ledger, and
    running the same command again (under a raised cap) resumes."""
    INTERRUPTED = 130
    """Interrupted (128 + SIGINT, the shell's convention); completed samples are in the
    ledger."""

    @classmethod
    def for_decisions(cls, decisions: Iterable[Decision]) -> ExitCode:
        """``jurat run``: REJECT if any reject/BLOCK, else ESCALATE if any escalate/WARN or
        undecided equivalence, else OK."""
        code = cls.OK
        for d in decisions:
            if d.disposition == "reject" or d.rollout == "BLOCK":
                return cls.REJECT
            if d.disposition == "escalate" or d.rollout == "WARN":
                code = cls.ESCALATE
            if d.kind == "equivalence" and d.equivalent is None:
                code = cls.ESCALATE
        return code
