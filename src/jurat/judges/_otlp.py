"""The telemetry as OTLP/HTTP spans (seed 001 §6; issue 29): ``jurat run --otlp URL``.

judges/_telemetry.py builds every event's attributes once; this module only renames them
for a trace. A job is one trace: a ``jurat.job`` span, a ``chat <model>`` child per judge
sample with OpenTelemetry's GenAI semantic-convention attributes (``gen_ai.operation.name``,
``gen_ai.provider.name`` and the older ``gen_ai.system``, ``gen_ai.request.model``, the
usage and the finish reason), and a ``jurat.criterion`` child per criterion of a criteria
decision; the job span ends with the decision's enums and counts.

Only ids, digests, enums, counts and numbers leave (docs/design.md, "The trust rule"): no
prompt, answer, artifact text, rationale or reason, and nothing the endpoint returned but
its token counts and a finish reason from a fixed list. Export runs in the SDK's batch
thread and never slows or fails the run: each export is bounded by ``OTLP_TIMEOUT_S``
(or ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` / ``OTEL_EXPORTER_OTLP_TIMEOUT``, in seconds),
after the first failed export the rest are dropped at once, and the run ends with a
warning that says so.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from jurat._version import __version__
from jurat.errors import ConfigError, DependencyError

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
    from opentelemetry.trace import Span

__all__ = ["INSTALL_HINT", "OTLP_TIMEOUT_S", "OtlpSpans", "finish_reason", "require_otlp",
           "traces_endpoint"]

#: Seconds one export may take, retries included, unless the standard variables say.
OTLP_TIMEOUT_S = 5.0
INSTALL_HINT = ("pip install 'jurat[otlp]' (opentelemetry-exporter-otlp-proto-http==1.45.2)")
#: Finish reasons as the providers spell them; any other is exported as ``other``.
_FINISH = frozenset({"stop", "length", "content_filter", "tool_calls", "function_call",
                     "refusal", "end_turn", "max_tokens", "stop_sequence", "tool_use",
                     "pause_turn", "error"})
#: ``gen_ai.provider.name`` per provider: the API an openai-compat judge speaks is
#: OpenAI's whoever serves it; local judges are jurat's own.
_PROVIDER = {"openai-compat": "openai", "anthropic": "anthropic", "sim": "jurat.sim",
             "replay": "jurat.replay"}
_TIMEOUT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")


def finish_reason(finish: str | None) -> str | None:
    """The finish reason as exported: one of a fixed list, ``other``, or None (unknown)."""
    if finish is None:
        return None
    return finish if finish in _FINISH else "other"


def provider_name(provider: str) -> str:
    """``gen_ai.provider.name`` of a judge's provider."""
    return _PROVIDER.get(provider, "jurat.stub" if provider.startswith("stub:") else "jurat")


def traces_endpoint(option: str | None, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """Where spans go and what said so: ``--otlp`` (a base URL, ``/v1/traces`` appended
    unless given, as for ``OTEL_EXPORTER_OTLP_ENDPOINT``), else
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (as given), else ``OTEL_EXPORTER_OTLP_ENDPOINT``;
    None when none is set. Raises ConfigError (exit 3) for a URL that is not http(s)."""
    if option is not None:
        url, source = option, "--otlp"
    elif environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        url, source = environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], \
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    elif environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        url, source = environ["OTEL_EXPORTER_OTLP_ENDPOINT"], "OTEL_EXPORTER_OTLP_ENDPOINT"
    else:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{source} {url!r}: not an http(s) URL of an OTLP/HTTP collector "
                          "(fix: e.g. http://localhost:4318)")
    if source != "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" and not parts.path.endswith("/v1/traces"):
        url = url.rstrip("/") + "/v1/traces"
    return url, source


def require_otlp() -> None:
    """Raise DependencyError (exit 3), saying what to install, when the OTLP exporter is
    missing: checked before the run opens its ledger."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
    except ImportError as exc:
        raise DependencyError(f"--otlp needs the OTLP exporter: {INSTALL_HINT}") from exc


def _guarded(inner: SpanExporter, failures: list[str]) -> SpanExporter:
    """``inner``, until an export fails: then every later batch is dropped at once, so a
    collector that is down costs one bounded timeout, not one per batch."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Guarded(SpanExporter):
        def __init__(self) -> None:
            self.dropped = 0
            self._lock = threading.Lock()

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            if failures:
                with self._lock:
                    self.dropped += len(spans)
                return SpanExportResult.FAILURE
            try:
                result = inner.export(spans)
            except Exception as exc:  # an exporter bug must not reach the run
                result = SpanExportResult.FAILURE
                failures.append(type(exc).__name__)
            if result is not SpanExportResult.SUCCESS:
                failures.append("export failed")
                with self._lock:
                    self.dropped += len(spans)
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return inner.force_flush(timeout_millis)

    return Guarded()


class OtlpSpans:
    """A tracer provider of the run's own (never the global one) exporting to ``url``."""

    def __init__(self, url: str, *, timeout_s: float | None = None) -> None:
        require_otlp()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        if timeout_s is None and not any(os.environ.get(v) for v in _TIMEOUT_VARIABLES):
            timeout_s = OTLP_TIMEOUT_S
        self.url = url
        self._failures: list[str] = []
        exporter = OTLPSpanExporter(endpoint=url, timeout=timeout_s)
        # The exporter logs each failure itself; the run says it once, in its own words.
        logging.getLogger("opentelemetry.exporter").addHandler(logging.NullHandler())
        self._exporter = _guarded(exporter, self._failures)
        self._processor = BatchSpanProcessor(self._exporter, schedule_delay_millis=500)
        self._provider = TracerProvider(resource=Resource.create(
            {"service.name": "jurat", "service.version": __version__}))
        self._provider.add_span_processor(self._processor)
        self._tracer = self._provider.get_tracer("jurat.judges", __version__)
        self.spans = 0
        """Spans ended (handed to the exporter)."""

    def start(self, name: str, attributes: Mapping[str, Any], *,
              parent: Context | None = None, start_ns: int | None = None) -> Span:
        """A span, started (at ``start_ns``, default now) under ``parent``."""
        return self._tracer.start_span(name, context=parent, attributes=dict(attributes),
                                       start_time=start_ns)

    def end(self, span: Span, *, error: str | None = None, end_ns: int | None = None) -> None:
        """End ``span``, with an error status when ``error`` (an enum) is given."""
        from opentelemetry.trace import Status, StatusCode

        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=end_ns)
        self.spans += 1

    def close(self) -> str | None:
        """Flush and shut the exporter down; a warning when spans could not be exported."""
        self._processor.force_flush()
        self._provider.shutdown()
        if not self._failures:
            return None
        dropped = getattr(self._exporter, "dropped", 0)
        return (f"OTLP export to {self.url} failed: {dropped} of {self.spans} spans were "
                "not exported (the run and its receipts are unaffected; check the collector)")
