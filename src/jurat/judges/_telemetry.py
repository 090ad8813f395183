"""One OpenTelemetry event per judge sample, ``judge.sample`` (seed 001 §6).

Each event carries the criterion, sample k of N, the sample's label, ``dispatch_ms`` and the
agreement so far for that (artifact, judge, criterion), so a reader can watch a criterion
converge, or fail to. Events are OpenTelemetry log records with ``event_name`` set, emitted
through ``opentelemetry-sdk``; with a path they are exported as NDJSON, one line per sample::

    {"event":"judge.sample","artifact":"c1","judge":"A","criterion":"cites-sources",
     "sample":3,"of":5,"verdict":"no","error":null,"dispatch_ms":812,"latency_ms":95,
     "attempts":1,"agreement_so_far":1.0,"time":"2026-11-29T21:00:00.000000Z"}

``sample`` is 1-based here (the third of five); ``Vote.sample`` is the 0-based index k.
Events never contain prompt, candidate or reference text.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from jurat.models import Vote

if TYPE_CHECKING:
    from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult

__all__ = ["EVENT_NAME", "SampleTelemetry"]

EVENT_NAME = "judge.sample"


def _ndjson_exporter(path: Path) -> LogRecordExporter:
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult

    class NdjsonExporter(LogRecordExporter):
        """Writes each event as one JSON line."""

        def __init__(self) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file: TextIO | None = path.open("a", encoding="utf-8", buffering=1)
            self._lock = threading.Lock()

        def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
            lines = []
            for item in batch:
                record = item.log_record
                stamp = record.timestamp or record.observed_timestamp or 0
                line: dict[str, Any] = {"event": record.event_name}
                line.update(dict(record.attributes or {}))
                line.setdefault("error", None)  # OpenTelemetry attributes cannot hold null
                line["time"] = datetime.fromtimestamp(stamp / 1e9, UTC).strftime(
                    "%Y-%m-%dT%H:%M:%S.%fZ"
                )
                lines.append(json.dumps(line, separators=(",", ":")) + "\n")
            with self._lock:
                if self._file is None:
                    return LogRecordExportResult.FAILURE
                self._file.write("".join(lines))
            return LogRecordExportResult.SUCCESS

        def shutdown(self) -> None:
            with self._lock:
                if self._file is not None:
                    self._file.close()
                    self._file = None

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            with self._lock:
                if self._file is not None:
                    self._file.flush()
            return True

    return NdjsonExporter()


class SampleTelemetry:
    """Emits ``judge.sample`` events; with ``path``, also writes them to an NDJSON file.

    Without a path the events go to the globally configured OpenTelemetry logger provider
    (a no-op unless the application configured one, e.g. an OTLP exporter). ``exporter``
    adds any other ``LogRecordExporter`` (tests use the in-memory one).
    """

    def __init__(
        self, path: Path | str | None = None, *, exporter: LogRecordExporter | None = None
    ):
        from opentelemetry import _logs

        self.path = Path(path) if path is not None else None
        self._provider: LoggerProvider | None = None
        if self.path is not None or exporter is not None:
            from opentelemetry.sdk._logs import LoggerProvider
            from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

            self._provider = LoggerProvider()
            if self.path is not None:
                processor = SimpleLogRecordProcessor(_ndjson_exporter(self.path))
                self._provider.add_log_record_processor(processor)
            if exporter is not None:
                self._provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
            self._logger = self._provider.get_logger("jurat.judges")
        else:
            self._logger = _logs.get_logger("jurat.judges")
        self._tallies: dict[tuple[str, str, str], Counter[str]] = {}
        self._lock = threading.Lock()

    def sample(self, artifact: str, vote: Vote, *, of: int, label: str) -> dict[str, Any]:
        """Record one completed sample; returns the event's attributes."""
        key = (artifact, vote.judge, vote.criterion)
        with self._lock:
            tally = self._tallies.setdefault(key, Counter())
            tally[label] += 1
            agreement = max(tally.values()) / sum(tally.values())
        attributes: dict[str, Any] = {
            "artifact": artifact,
            "judge": vote.judge,
            "criterion": vote.criterion,
            "sample": vote.sample + 1,
            "of": of,
            "verdict": label,
            "error": vote.error,
            "attempts": vote.attempts,
            "dispatch_ms": vote.dispatch_ms,
            "latency_ms": vote.latency_ms,
            "agreement_so_far": round(agreement, 6),
            "prompt_id": vote.prompt_id,
        }
        self._logger.emit(
            event_name=EVENT_NAME,
            body=EVENT_NAME,
            attributes={k: v for k, v in attributes.items() if v is not None},
        )
        return attributes

    def close(self) -> None:
        """Flush and close the exporters."""
        if self._provider is not None:
            self._provider.shutdown()
            self._provider = None
