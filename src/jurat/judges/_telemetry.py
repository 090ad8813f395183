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

Each decision adds one ``judge.criterion`` event per criterion of a criteria decision (its
samples, agreement and gate) and one ``judge.decision`` event per artifact (its outcome,
samples and agreement): seed 001 §6, "every criterion event carries its sample count and
agreement". With ``otlp`` (``jurat run --otlp``, judges/_otlp.py) the same attributes are
also exported as spans, one trace per job: this module builds every attribute, that one
only renames them.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from jurat.judges._otlp import OtlpSpans, finish_reason, provider_name
from jurat.models import Decision, JudgeConfig, Vote

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
    from opentelemetry.trace import Span

__all__ = ["CRITERION_EVENT", "DECISION_EVENT", "EVENT_NAME", "SampleTelemetry"]

EVENT_NAME = "judge.sample"
CRITERION_EVENT = "judge.criterion"
DECISION_EVENT = "judge.decision"
#: What an exported label or error kind may look like: the fold's enums and error kinds.
_ENUM = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def _enum(value: object) -> str | None:
    """An enum value as exported; anything else (never expected: labels are validated) is
    ``other``, so no free text rides on a label."""
    if value is None:
        return None
    text = str(value)
    return text if _ENUM.fullmatch(text) else "other"


#: An event key's name in a span, where it is not ``jurat.`` and the key.
_SPAN_NAMES = {"artifact": "jurat.artifact.id", "judge": "jurat.judge.id",
               "criterion": "jurat.criterion.id", "sample": "jurat.sample.index",
               "of": "jurat.sample.of", "verdict": "jurat.vote.label",
               "error": "jurat.vote.error", "prompt_id": "jurat.prompt.id"}
#: In a criterion's span, the verdict and gate are the criterion's, not a vote's.
_CRITERION_NAMES = {**_SPAN_NAMES, "verdict": "jurat.criterion.verdict",
                    "gate": "jurat.criterion.gate", "blocker": "jurat.criterion.blocker"}


def _span_attributes(attributes: dict[str, Any], names: dict[str, str] = _SPAN_NAMES
                     ) -> dict[str, Any]:
    """An event's attributes as a span's: renamed, nulls left out."""
    return {names.get(k, f"jurat.{k}"): v for k, v in attributes.items() if v is not None}


@dataclass
class _Job:
    """The job whose samples are being drawn (a context variable, so each job's tasks see
    their own)."""

    job: str
    campaign: str
    span: Span | None = None
    context: Context | None = None
    decided: bool = False


_JOB: ContextVar[_Job | None] = ContextVar("jurat_telemetry_job", default=None)


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
                if record.event_name == EVENT_NAME:
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
    adds any other ``LogRecordExporter`` (tests use the in-memory one); ``otlp`` exports
    the same events as spans (judges/_otlp.py).
    """

    def __init__(
        self, path: Path | str | None = None, *, exporter: LogRecordExporter | None = None,
        otlp: OtlpSpans | None = None,
    ):
        from opentelemetry import _logs

        self.otlp = otlp
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

    def sample(self, artifact: str, vote: Vote, *, of: int, label: str,
               config: JudgeConfig | None = None, finish: str | None = None
               ) -> dict[str, Any]:
        """Record one completed sample; returns the event's attributes. ``config`` (the
        judge) and ``finish`` (the response's finish reason) name the call in its span."""
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
            "verdict": _enum(label),
            "error": _enum(vote.error),
            "attempts": vote.attempts,
            "dispatch_ms": vote.dispatch_ms,
            "latency_ms": vote.latency_ms,
            "agreement_so_far": round(agreement, 6),
            "prompt_id": vote.prompt_id,
        }
        self._emit(EVENT_NAME, attributes)
        if self.otlp is not None:
            self._sample_span(attributes, vote, config, finish)
        return attributes

    def _emit(self, event: str, attributes: dict[str, Any]) -> None:
        self._logger.emit(event_name=event, body=event,
                          attributes={k: v for k, v in attributes.items() if v is not None})

    def _sample_span(self, attributes: dict[str, Any], vote: Vote,
                     config: JudgeConfig | None, finish: str | None) -> None:
        """One ``chat`` span (the GenAI semantic conventions' client span) for the sample,
        ending now and lasting its latency."""
        assert self.otlp is not None
        job = _JOB.get()
        span = _span_attributes(attributes)
        span["gen_ai.operation.name"] = "chat"
        model = ""
        if config is not None:
            span["gen_ai.provider.name"] = span["gen_ai.system"] = provider_name(
                config.provider)
            model = config.model
            if model:
                span["gen_ai.request.model"] = model
            span["gen_ai.request.temperature"] = config.temperature
            span["gen_ai.request.max_tokens"] = config.max_tokens
        for key in ("input_tokens", "output_tokens"):
            if key in vote.usage:
                span[f"gen_ai.usage.{key}"] = int(vote.usage[key])
        reason = finish_reason(finish)
        if reason is not None:
            span["gen_ai.response.finish_reasons"] = (reason,)
        if vote.error is not None:
            span["error.type"] = _enum(vote.error)
        if job is not None:
            span["jurat.job.id"] = job.job
            span["jurat.campaign.id"] = job.campaign
        end = time.time_ns()
        started = self.otlp.start(f"chat {model}" if model else "chat", span,
                                  parent=job.context if job is not None else None,
                                  start_ns=end - vote.latency_ms * 1_000_000)
        self.otlp.end(started, error=_enum(vote.error), end_ns=end)

    @contextmanager
    def job(self, job: str, artifact: str, campaign: str) -> Iterator[None]:
        """Within it, samples and the decision belong to ``job``: with OTLP, one trace whose
        ``jurat.job`` span ends with the decision, or as incomplete (its error's class
        name as the status) when the job ends without one."""
        current = _Job(job=job, campaign=campaign)
        if self.otlp is not None:
            from opentelemetry.trace import set_span_in_context

            current.span = self.otlp.start("jurat.job", {
                "jurat.job.id": job, "jurat.artifact.id": artifact,
                "jurat.campaign.id": campaign})
            current.context = set_span_in_context(current.span)
        token = _JOB.set(current)
        error: str | None = None
        try:
            yield
        except BaseException as exc:
            error = type(exc).__name__
            raise
        finally:
            _JOB.reset(token)
            if self.otlp is not None and current.span is not None:
                if not current.decided:
                    current.span.set_attribute("jurat.job.outcome", "incomplete")
                self.otlp.end(current.span, error=error or (
                    None if current.decided else "incomplete"))

    def decision(self, artifact: str, decision: Decision) -> list[dict[str, Any]]:
        """Record one artifact's decision: a ``judge.criterion`` event per criterion (criteria
        decisions), then one ``judge.decision`` event; returns their attributes."""
        job = _JOB.get()
        events: list[dict[str, Any]] = []
        for outcome in decision.criteria:
            top = int(outcome.agreement_votes.partition("/")[0])
            attributes: dict[str, Any] = {
                "artifact": artifact, "judge": outcome.judge, "criterion": outcome.criterion_id,
                "blocker": outcome.blocker, "verdict": _enum(outcome.verdict),
                "samples": outcome.samples, "drawn": outcome.drawn,
                "agreement": round(outcome.agreement, 6), "agreement_count": top,
                "gate": _enum(outcome.gate),
                "sample_verdicts": [_enum(v) or "other" for v in outcome.sample_verdicts],
            }
            events.append(attributes)
            self._emit(CRITERION_EVENT, attributes)
            if self.otlp is not None:
                span = _span_attributes(attributes, _CRITERION_NAMES)
                if job is not None:
                    span["jurat.job.id"] = job.job
                self.otlp.end(self.otlp.start("jurat.criterion", span,
                                              parent=job.context if job else None))
        attributes = {
            "artifact": artifact, "kind": decision.kind, "outcome": _enum(decision.outcome),
            "samples": decision.samples, "valid_samples": decision.valid_samples,
            "agreement": None if decision.agreement is None else round(decision.agreement, 6),
            "independent_votes": decision.independent_votes,
            "gates_failed": [_enum(g) or "other" for g in decision.gates_failed],
        }
        events.append(attributes)
        self._emit(DECISION_EVENT, attributes)
        if job is not None and job.span is not None:
            for key, value in attributes.items():
                if value is not None and key != "artifact":
                    job.span.set_attribute(f"jurat.decision.{key}", value)
            job.decided = True
        return events

    def close(self) -> str | None:
        """Flush and close the exporters; a warning when spans could not be exported."""
        if self._provider is not None:
            self._provider.shutdown()
            self._provider = None
        otlp, self.otlp = self.otlp, None
        return otlp.close() if otlp is not None else None
