"""``jurat run``'s telemetry: ``--telemetry FILE`` (NDJSON) and ``--otlp URL`` or the
standard ``OTEL_EXPORTER_OTLP_*ENDPOINT`` variables (spans; judges/_otlp.py)."""

from __future__ import annotations

import os

from rich.console import Console
from rich.markup import escape

from jurat.errors import ConfigError
from jurat.judges import SampleTelemetry
from jurat.judges._otlp import OtlpSpans, require_otlp, traces_endpoint
from jurat.runner import RunOptions

__all__ = ["close_telemetry", "open_telemetry", "otlp_target"]


def otlp_target(options: RunOptions, option: str | None) -> str | None:
    """Where the run's spans go (``options.otlp``, set here), or None: checked before
    anything is sent or written, the exporter installed included (exit 3 otherwise)."""
    found = traces_endpoint(option, os.environ)
    if found is None:
        options.otlp = None
        return None
    require_otlp()
    options.otlp = found[0]
    return found[1]


def open_telemetry(options: RunOptions) -> SampleTelemetry | None:
    """The run's telemetry sink, or None when neither ``--telemetry`` nor OTLP is asked."""
    if options.telemetry_path is None and options.otlp is None:
        return None
    otlp = OtlpSpans(options.otlp) if options.otlp is not None else None
    try:
        return SampleTelemetry(options.telemetry_path, otlp=otlp)
    except OSError as exc:
        if otlp is not None:
            otlp.close()
        raise ConfigError(f"--telemetry {options.telemetry_path}: cannot write: "
                          f"{exc.strerror} (fix: a writable file path)") from exc


def close_telemetry(telemetry: SampleTelemetry, console: Console) -> None:
    """Flush and close it; a failed export is a warning, never the run's failure."""
    warning = telemetry.close()
    if warning is not None:
        console.print(f"[yellow]warning[/]: {escape(warning)}", highlight=False, soft_wrap=True)
