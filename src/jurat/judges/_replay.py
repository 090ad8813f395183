"""Recorded raw responses: the recorder the engine writes and the ``replay`` judge that serves them.

A replay file is NDJSON, one ``ReplayRecord`` per transport attempt. Replaying re-runs the
parser and validator on the recorded text, so a replayed vote is re-derived, not copied.
Pairwise presentation order is re-drawn from the judge's seed, so a replay judge must keep
the recorded judge's ``id`` and ``seed``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from pydantic import Field

from jurat.canonical import sha256_digest
from jurat.errors import ConfigError, JudgeOutputError
from jurat.judges._local import LocalJudge
from jurat.judges._protocol import JudgeCall, RawResponse, TransportFailure
from jurat.models import Frozen, JudgeConfig, token_count

__all__ = ["ReplayJudge", "ReplayRecord", "ReplayRecorder", "execution_key"]


class ReplayRecord(Frozen):
    """One recorded transport attempt."""

    judge: str
    """Judge id that made the call."""
    artifact_sha256: str
    """Digest of the judged artifact (or of the prompt, for execution calls)."""
    criterion: str
    """Criterion id of the sample (``execution`` for the subject under test)."""
    sample: int
    """Sample index k."""
    attempt: int = 1
    """Transport attempt, from 1."""
    text: str | None = None
    """The raw answer text, as returned."""
    error: str | None = None
    """Transport error kind when the attempt produced no answer."""
    finish: str | None = None
    """Normalised finish reason."""
    refusal: str | None = None
    """Refusal message, if any."""
    envelope_error: str | None = None
    """Envelope error kind, if any."""
    returned_model: str | None = None
    """Model id the endpoint reported (as its response recorded it: models/_echoed.py)."""
    system_fingerprint: str | None = None
    """System fingerprint the endpoint reported (likewise)."""
    usage: dict[str, int] = Field(default_factory=dict)
    """Token usage the endpoint reported (``bad_usage`` responses: none)."""

    def response(self) -> RawResponse:
        """The recorded response, its echoed strings and counts held to the shapes a live
        one has (models/_echoed.py): a replay file is a file anyone may have edited, so a
        count that is no count replays as ``bad_usage``, as it would have live."""
        usage = {key: token_count(value) for key, value in self.usage.items()}
        counted = {key: value for key, value in usage.items() if value is not None}
        bad = len(counted) != len(usage)
        return RawResponse(
            text=None if bad else self.text,
            finish=self.finish,
            refusal=self.refusal,
            envelope_error="bad_usage" if bad else self.envelope_error,
            envelope_path="usage" if bad else None,
            returned_model=self.returned_model,
            system_fingerprint=self.system_fingerprint,
            usage={} if bad else counted,
        )


def execution_key(prompt: str) -> str:
    """The replay key of an execution-phase call: the prompt's digest."""
    return sha256_digest(prompt)


class ReplayRecorder:
    """Appends one NDJSON line per transport attempt; safe to share between tasks."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def record(self, record: ReplayRecord) -> None:
        line = record.model_dump_json(exclude_defaults=False) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)


class ReplayJudge(LocalJudge):
    """Serves recorded responses for (artifact, criterion, sample, attempt)."""

    def __init__(self, config: JudgeConfig) -> None:
        super().__init__(config)
        self._records: dict[tuple[str, str, int, int], ReplayRecord] | None = None

    def preflight(self) -> None:
        self._load()

    def _load(self) -> dict[tuple[str, str, int, int], ReplayRecord]:
        if self._records is not None:
            return self._records
        name = self._config.replay_file
        if not name:
            raise ConfigError(f"judge {self._config.id}: provider replay needs replay_file")
        path = Path(name)
        try:
            lines = path.read_text("utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"judge {self._config.id}: cannot read {path}: {exc}") from exc
        records: dict[tuple[str, str, int, int], ReplayRecord] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data: Any = json.loads(line)
                record = ReplayRecord.model_validate(data)
            except ValueError as exc:
                raise ConfigError(f"{path}:{number}: not a replay record: {exc}") from exc
            if record.judge == self._config.id:
                key = (record.artifact_sha256, record.criterion, record.sample, record.attempt)
                records[key] = record
        self._records = records
        return records

    async def complete(self, call: JudgeCall) -> RawResponse:
        records = self._load()
        if call.kind == "text":
            key = (execution_key(call.prompt.user), "execution", 0, call.attempt)
        else:
            key = (call.artifact.sha256, call.criterion, call.sample, call.attempt)
        record = records.get(key)
        if record is None:
            raise JudgeOutputError(f"no recorded response for {key}", kind="replay_missing")
        if record.error is not None:
            raise TransportFailure("recorded transport failure", kind=record.error)
        return record.response()
