"""One exception hierarchy for everything jurat raises.

Third-party errors are converted at the boundary (``raise ... from exc``) so
callers only ever catch these::

    JuratError
    ├── ConfigError            bad campaign, policy or CLI input; nothing ran (exit 3)
    │   ├── CampaignError      a campaign file field is wrong (names file, field, line, fix)
    │   ├── DestinationError   a judge would send content outside allowed_destinations
    │   └── DependencyError    an optional package or system tool is missing
    ├── ExecutionError         something failed while running; may be retried
    │   ├── TransportError     a judge call produced no answer (timeout, 429, 5xx, refused)
    │   └── SandboxError       the sandbox could not be created; fails closed
    ├── ValidationError        input or an answer violates its contract
    │   ├── FoldInputError     a fold function got votes, weights or quorum out of range
    │   └── JudgeOutputError   a judge answer failed parsing, schema or semantic checks
    ├── IntakeError            stale policy, altered artifact, unreadable input
    ├── LedgerError            the append-only journal refused an operation or is corrupt
    │   └── TamperError        hash chain, Merkle root or checkpoint does not match
    └── VerificationError      a receipt's signature, subject or re-derivation failed
"""

from __future__ import annotations

__all__ = [
    "CampaignError",
    "ConfigError",
    "DependencyError",
    "DestinationError",
    "ExecutionError",
    "FoldInputError",
    "IntakeError",
    "JudgeOutputError",
    "JuratError",
    "LedgerError",
    "SandboxError",
    "TamperError",
    "TransportError",
    "ValidationError",
    "VerificationError",
]


class JuratError(Exception):
    """Root of every error jurat raises on purpose."""


class ConfigError(JuratError):
    """Configuration or input is wrong; nothing was evaluated."""


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
        self.file = file
        self.field = field
        self.line = line
        self.fix = fix
        where = ""
        if file:
            where = file + (f":{line}" if line else "") + ": "
        text = where + (f"field `{field}`: " if field else "") + message
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)


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
    """A judge answer failed validation. ``kind`` is the recorded error kind."""

    def __init__(self, message: str, *, kind: str) -> None:
        self.kind = kind
        super().__init__(f"{kind}: {message}")


class IntakeError(JuratError):
    """Stale policy, altered artifact or unreadable input at intake."""


class LedgerError(JuratError):
    """The append-only journal refused an operation or could not be read."""


class TamperError(LedgerError):
    """The hash chain, Merkle root or a checkpoint does not match what is stored."""


class VerificationError(JuratError):
    """A receipt failed a verification step. ``step`` names it."""

    def __init__(self, message: str, *, step: str = "") -> None:
        self.step = step
        super().__init__(f"{step}: {message}" if step else message)
