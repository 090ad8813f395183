"""One exception hierarchy for everything jurat raises.

Third-party errors are converted at the boundary (``raise ... from exc``) so
callers only ever catch these. The number after each family is its ``exit_code``: the
status a command ends with when the error stops it (``jurat.cli.ExitCode``: 3 input,
4 a failure during the run; docs/design.md, "Contracts that others rely on")::

    JuratError                 (exit 4)
    ├── ConfigError            bad campaign, policy or CLI input; nothing ran (exit 3)
    │   ├── CampaignError      a campaign file field is wrong (names file, field, line, fix)
    │   │   └── CampaignErrors several problems in one campaign file, each a CampaignError
    │   ├── DestinationError   a judge would send content outside allowed_destinations
    │   └── DependencyError    an optional package or system tool is missing
    ├── ExecutionError         something failed while running; may be retried
    │   ├── TransportError     a judge call produced no answer (timeout, 429, 5xx, refused)
    │   ├── BudgetExhausted    a call was not sent: it could cross the campaign's [budget]
    │   └── SandboxError       the sandbox could not be created; fails closed
    ├── ValidationError        input or an answer violates its contract
    │   ├── FoldInputError     a fold function got votes, weights or quorum out of range
    │   ├── JudgeOutputError   a judge answer failed parsing, schema or semantic checks
    │   ├── StrictJSONError    untrusted JSON refused by the one strict parser (jurat.canonical)
    │   └── BeyondBounds       an input past a checker's bounds (checks/_guard.py): a gate error
    ├── IntakeError            stale policy, altered artifact, unreadable input (exit 3)
    ├── LedgerError            the append-only journal refused an operation or is corrupt
    │   └── TamperError        hash chain, Merkle root or checkpoint does not match
    └── VerificationError      a receipt's signature, subject or re-derivation failed

``diagnostics()`` is the text the command line prints for an error (``jurat.cli`` has the
one printer): the message, which names the field and the fix where the raiser knew them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

__all__ = [
    "BudgetExhausted",
    "CampaignError",
    "CampaignErrors",
    "ConfigError",
    "DependencyError",
    "DestinationError",
    "ExecutionError",
    "FoldInputError",
    "IntakeError",
    "JobIncomplete",
    "JudgeOutputError",
    "JuratError",
    "LedgerError",
    "SandboxError",
    "TamperError",
    "TransportError",
    "ValidationError",
    "VerificationError",
]


#: Exit statuses of the two error families; ``jurat.cli.ExitCode`` names them (the
#: library does not import the command line).
_EXIT_INPUT = 3
_EXIT_RUN_FAILURE = 4


class JuratError(Exception):
    """Root of every error jurat raises on purpose."""

    exit_code: ClassVar[int] = _EXIT_RUN_FAILURE
    """The CLI's exit status when this error stops a command: 4, a failure during the run
    (never 1, which means escalate/warn). Input errors override it with 3."""

    def diagnostics(self) -> str:
        """What the command line prints for this error: one or more lines, no traceback.

        The message, or the error's type when it has none. Subclasses that carry context
        (a campaign field, a fix) lay it out on lines of its own.
        """
        return str(self) or type(self).__name__


class ConfigError(JuratError):
    """Configuration or input is wrong; nothing was evaluated."""

    exit_code: ClassVar[int] = _EXIT_INPUT


class CampaignError(ConfigError):
    """A campaign file is wrong. The message names the file, the field, the line and the fix."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        line: int | None = None,
        fix: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.field = field
        self.line = line
        self.fix = fix
        text = self._located()
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)

    def _located(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        return where + (f"field `{self.field}`: " if self.field else "") + self.message

    def diagnostics(self) -> str:
        """File, line, field and message on the first line; the fix on its own line."""
        return self._located() + (f"\n  fix: {self.fix}" if self.fix else "")


class CampaignErrors(CampaignError):
    """Several problems in one campaign file, found in one reading: ``problems`` holds each,
    in line order, and ``diagnostics()`` lists them all, so a user fixes them in one pass."""

    def __init__(self, problems: Sequence[CampaignError]) -> None:
        self.problems = tuple(problems)
        files = {p.file for p in self.problems}
        super().__init__(
            f"{len(self.problems)} problems, listed by line",
            file=files.pop() if len(files) == 1 else None,
        )

    def diagnostics(self) -> str:
        """A heading, then each problem numbered: its file, line, field and message on one
        line, its fix on the next."""
        lines = [self._located()]
        for number, problem in enumerate(self.problems, start=1):
            lines.append(f"[{number}] {problem._located()}")
            if problem.fix:
                lines.append(f"    fix: {problem.fix}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.diagnostics()


class DestinationError(ConfigError):
    """A judge's destination is not in the campaign's allowed_destinations."""


class DependencyError(ConfigError):
    """An optional package or a system tool is missing; the message says what to install."""


class ExecutionError(JuratError):
    """A failure while running; the operation may be retried."""


class TransportError(ExecutionError):
    """A judge call produced no answer. ``kind`` is the recorded error kind."""

    def __init__(self, message: str, *, kind: str = "transport") -> None:
        self.kind = kind
        super().__init__(message)


class JobIncomplete(ExecutionError):
    """A job could not be judged because a judge gave no answer (an outage, not a
    judgment): nothing is signed, and running the same command again retries only the
    samples that got no answer (docs/design.md, "An outage is not a judgment")."""

    def __init__(self, message: str, *, judge: str) -> None:
        self.judge = judge
        super().__init__(message)


class BudgetExhausted(ExecutionError):
    """A call was not sent because its worst-case cost could cross the campaign's
    ``[budget]``: what was drawn is recorded, and a run under a raised cap resumes (exit 4)."""


class SandboxError(ExecutionError):
    """The sandbox could not be created. Checks fail closed; never run on the host."""


class ValidationError(JuratError):
    """Input or an answer violates its contract."""


class FoldInputError(ValidationError, ValueError):
    """A fold function got input out of range. The message names the field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class JudgeOutputError(ValidationError):
    """A judge answer failed validation. ``kind`` is the recorded error kind; ``path`` the
    JSON path of the failing member (``/``-joined, ``(root)`` for the whole answer), when
    the check that failed has one; ``detail`` the message without the kind."""

    def __init__(self, message: str, *, kind: str, path: str | None = None) -> None:
        self.kind = kind
        self.path = path
        self.detail = message
        super().__init__(f"{kind}: {message}")


class IntakeError(JuratError):
    """Stale policy, altered artifact or unreadable input at intake."""

    exit_code: ClassVar[int] = _EXIT_INPUT


class LedgerError(JuratError):
    """The append-only journal refused an operation or could not be read."""


class TamperError(LedgerError):
    """The hash chain, Merkle root or a checkpoint does not match what is stored."""


class VerificationError(JuratError):
    """A receipt failed a verification step. ``step`` names it."""

    def __init__(self, message: str, *, step: str = "") -> None:
        self.step = step
        super().__init__(f"{step}: {message}" if step else message)
