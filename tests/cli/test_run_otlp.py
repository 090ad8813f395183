"""``jurat run --otlp`` (issue 29, seed 001 §6): spans received by a loopback OTLP/HTTP
collector (a real http.server on 127.0.0.1 that accepts POST /v1/traces and decodes the
protobuf body with opentelemetry-proto's ExportTraceServiceRequest): one ``chat`` span per
judge sample with the GenAI semantic-convention attributes, one ``jurat.criterion`` span per
criterion with its samples and agreement, one ``jurat.job`` span per job, all of one job
in one trace; and nothing the judged party wrote in any of them. A collector that is down
costs the run a warning, not its exit status.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from jurat.ledger import open_ledger
from tests.support.fake_openai import FakeOpenAI, echo_judge

from ._run_support import run

CAMPAIGN = """\
[campaign]
id = "traced"
kind = "criteria"
allowed_destinations = ["{url}"]

[criteria]
samples = 3
blocker_samples = 3
items = [{{ id = "polite", text = "{question}", blocker = true }}]

[[judges]]
id = "paid"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
retries = 0
timeout_s = 10

[[artifacts]]
id = "r1"
text = "{text1}"

[[artifacts]]
id = "r2"
text = "{text2}"
"""
#: Words only the prompt holds: none may reach a span.
QUESTION = "Is the reply polite? [criterion-text-5e1f]"
TEXTS = ("Thank you kindly [artifact-text-a71c]", "Much obliged [artifact-text-09bd]")


class Collector:
    """An OTLP/HTTP traces receiver on 127.0.0.1: every request's decoded spans."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.paths: list[str] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                collector.paths.append(self.path)
                collector.bodies.append(body)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200 if self.path == "/v1/traces" else 404)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def spans(self) -> list[dict[str, Any]]:
        found = []
        for body in self.bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        found.append({
                            "name": span.name, "trace": span.trace_id.hex(),
                            "id": span.span_id.hex(), "parent": span.parent_span_id.hex(),
                            "status": span.status.code,
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                        })
        return found

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind)


@pytest.fixture
def collector() -> Iterator[Collector]:
    receiver = Collector()
    yield receiver
    receiver.close()


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAI(behaviour=echo_judge) as fake:
        yield fake


def write(root: Path, url: str) -> Path:
    path = root / "campaign.toml"
    path.write_text(CAMPAIGN.format(url=url, question=QUESTION, text1=TEXTS[0],
                                    text2=TEXTS[1]))
    return path


def test_one_span_per_sample_criterion_and_job_reaches_the_collector(
    tmp_path: Path, judge: FakeOpenAI, collector: Collector
) -> None:
    result = run(tmp_path, write(tmp_path, judge.url), judge, "--otlp", collector.url,
                 "--telemetry", str(tmp_path / "t.ndjson"))
    assert result.code == 0, result.out + result.err
    assert f"otlp: one span per judge sample, criterion and job to {collector.url}/v1/traces" \
        in " ".join(result.err.split())
    assert collector.paths and set(collector.paths) == {"/v1/traces"}
    spans = collector.spans()
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        jobs = {e.artifact_id: e.job_id for e in ledger.entries(kind="receipt")}
    assert set(jobs) == {"r1", "r2"}

    samples = [s for s in spans if s["name"] == "chat fake-judge"]
    assert len(samples) == 6 == len(judge.received)
    for span in samples:
        a = span["attributes"]
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] == a["gen_ai.system"] == "openai"
        assert a["gen_ai.request.model"] == "fake-judge"
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (120, 40)
        assert a["gen_ai.response.finish_reasons"] == ["stop"]
        assert a["jurat.job.id"] == jobs[a["jurat.artifact.id"]]
        assert (a["jurat.criterion.id"], a["jurat.judge.id"]) == ("polite", "paid")
        assert a["jurat.vote.label"] == "yes" and a["jurat.sample.of"] == 3
        assert "jurat.vote.error" not in a and span["status"] != 2  # not STATUS_CODE_ERROR
    for artifact in ("r1", "r2"):
        mine = [s for s in samples if s["attributes"]["jurat.artifact.id"] == artifact]
        assert sorted(s["attributes"]["jurat.sample.index"] for s in mine) == [1, 2, 3]

    criteria = [s for s in spans if s["name"] == "jurat.criterion"]
    assert len(criteria) == 2
    for span in criteria:
        a = span["attributes"]
        assert (a["jurat.criterion.id"], a["jurat.samples"], a["jurat.agreement_count"],
                a["jurat.agreement"], a["jurat.criterion.verdict"], a["jurat.criterion.gate"]) == (
            "polite", 3, 3, 1.0, "yes", "pass")
        assert a["jurat.sample_verdicts"] == ["yes", "yes", "yes"]

    roots = {s["attributes"]["jurat.job.id"]: s for s in spans if s["name"] == "jurat.job"}
    assert set(roots) == set(jobs.values())
    for span in samples + criteria:
        root = roots[span["attributes"]["jurat.job.id"]]
        assert (span["trace"], span["parent"]) == (root["trace"], root["id"])
    for root in roots.values():
        a = root["attributes"]
        assert (a["jurat.decision.kind"], a["jurat.decision.outcome"],
                a["jurat.decision.samples"]) == ("criteria", "SHIP", 3)
        assert root["parent"] == ""
    assert len({r["trace"] for r in roots.values()}) == 2

    # Ids, enums and counts only: neither the artifacts' text nor the prompt's.
    wire = b"".join(collector.bodies)
    for secret in (*TEXTS, QUESTION):
        for word in (secret, secret.split("[")[1].rstrip("]")):
            assert word.encode() not in wire

    # The same criterion events, from the same construction, in the NDJSON file.
    events = [json.loads(line) for line in (tmp_path / "t.ndjson").read_text().splitlines()]
    assert [e["event"] for e in events].count("judge.sample") == 6
    criterion = [e for e in events if e["event"] == "judge.criterion"]
    assert [(e["samples"], e["agreement"], e["agreement_count"]) for e in criterion] == [
        (3, 1.0, 3)] * 2
    assert [e["outcome"] for e in events if e["event"] == "judge.decision"] == ["SHIP"] * 2


def test_the_standard_variable_names_the_collector(
    tmp_path: Path, judge: FakeOpenAI, collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
    result = run(tmp_path, write(tmp_path, judge.url), judge)
    assert result.code == 0, result.out + result.err
    assert "(OTEL_EXPORTER_OTLP_ENDPOINT)" in result.err
    assert len([s for s in collector.spans() if s["name"].startswith("chat")]) == 6


def test_a_collector_that_is_down_is_a_warning_not_a_failure(
    tmp_path: Path, judge: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")
    result = run(tmp_path, write(tmp_path, judge.url), judge, "--otlp", f"http://127.0.0.1:{port}")
    assert result.code == 0, result.out + result.err
    err = " ".join(result.err.split())
    assert f"warning: OTLP export to http://127.0.0.1:{port}/v1/traces failed" in err
    assert "the run and its receipts are unaffected" in err
    assert len(list((tmp_path / "out").glob("*.sigstore.json"))) == 2


def test_a_missing_exporter_is_refused_before_anything_is_sent(
    tmp_path: Path, judge: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules,
                        "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    result = run(tmp_path, write(tmp_path, judge.url), judge, "--otlp", "http://127.0.0.1:9")
    assert result.code == 3, result.out + result.err
    assert "pip install 'jurat[otlp]'" in " ".join(result.err.split())
    assert judge.received == [] and not result.has_ledger()


def test_a_url_that_is_not_http_is_refused(tmp_path: Path, judge: FakeOpenAI) -> None:
    result = run(tmp_path, write(tmp_path, judge.url), judge, "--otlp", "localhost:4318")
    assert result.code == 3, result.out + result.err
    assert "--otlp 'localhost:4318': not an http(s) URL" in " ".join(result.err.split())


def test_spans_are_exported_by_one_process(tmp_path: Path, judge: FakeOpenAI) -> None:
    result = run(tmp_path, write(tmp_path, judge.url), judge, "--otlp", "http://127.0.0.1:9",
                 "--workers", "2")
    assert result.code == 3, result.out + result.err
    assert "--workers 2 with --otlp" in " ".join(result.err.split())
    assert judge.received == []
