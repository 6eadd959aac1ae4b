"""``adk-rx run --trace`` and ``--otlp-endpoint``, through subprocesses.

The OTLP test starts a real HTTP receiver on 127.0.0.1 that decodes the protobuf payloads
(``opentelemetry-proto``), like a collector would.
"""

from __future__ import annotations

import gzip
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from tests.cli.server_support import unique_app, write_agents
from tests.cli.test_run import adk_rx

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def agent() -> Path:
    app = unique_app("otel")
    return write_agents(Path(tempfile.mkdtemp(prefix="adk_rx_otel_")), app) / app


class Collector:
    """An OTLP/HTTP receiver: keeps every decoded export request by path."""

    def __init__(self) -> None:
        self.requests: dict[str, list[Any]] = {}
        self.lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    message: Any = trace_service_pb2.ExportTraceServiceRequest()
                    reply: Any = trace_service_pb2.ExportTraceServiceResponse()
                else:
                    message = metrics_service_pb2.ExportMetricsServiceRequest()
                    reply = metrics_service_pb2.ExportMetricsServiceResponse()
                message.ParseFromString(body)
                with collector.lock:
                    collector.requests.setdefault(self.path, []).append(message)
                payload = reply.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list[Any]:
        with self.lock:
            exports = list(self.requests.get("/v1/traces", []))
        return [
            span
            for request in exports
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def services(self) -> set[str]:
        with self.lock:
            exports = list(self.requests.get("/v1/traces", []))
        return {
            attribute.value.string_value
            for request in exports
            for resource in request.resource_spans
            for attribute in resource.resource.attributes
            if attribute.key == "service.name"
        }

    def metric_names(self) -> set[str]:
        with self.lock:
            exports = list(self.requests.get("/v1/metrics", []))
        return {
            metric.name
            for request in exports
            for resource in request.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        }


@pytest.fixture
def collector() -> Iterator[Collector]:
    receiver = Collector()
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
        thread.join(5)


def test_otlp_endpoint_exports_the_turns_spans_and_metrics(
    agent: Path, collector: Collector, tmp_path: Path
) -> None:
    result = adk_rx(
        tmp_path, "run", str(agent), "--in-memory", "-m", "weather Paris",
        "--otlp-endpoint", collector.url,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    spans = collector.spans()
    names = {span.name for span in spans}
    assert {"invocation", "call_llm", "execute_tool get_weather"} <= names
    assert any(name.startswith("invoke_agent ") for name in names)
    assert len({span.trace_id for span in spans}) == 1
    by_id = {span.span_id: span for span in spans}
    tool = next(span for span in spans if span.name == "execute_tool get_weather")
    assert by_id[tool.parent_span_id].name.startswith("invoke_agent ")
    attributes = {a.key: a.value.string_value for a in tool.attributes}
    assert attributes["gen_ai.tool.name"] == "get_weather"
    assert attributes["adk_rx.invocation_id"].startswith("e-")
    assert collector.services() == {"adk-rx"}
    assert {"gen_ai.client.operation.duration", "adk_rx.invocations"} <= collector.metric_names()


def test_the_standard_endpoint_variable_is_honoured(
    agent: Path, collector: Collector, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "support-desk")

    result = adk_rx(tmp_path, "run", str(agent), "--in-memory", "-m", "hello")

    assert result.returncode == 0, result.stderr
    assert "invocation" in {span.name for span in collector.spans()}
    assert collector.services() == {"support-desk"}


def test_trace_prints_the_span_tree_of_the_turn(agent: Path, tmp_path: Path) -> None:
    result = adk_rx(
        tmp_path, "run", str(agent), "--in-memory", "--jsonl", "-m", "weather Oslo", "--trace"
    )

    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if " ms" in line and "turn:" not in line]
    assert lines[0].startswith("invocation  ")
    assert lines[1].startswith("└─ invoke_agent ")
    assert any(line.startswith("   ├─ execute_tool get_weather  ") for line in lines)
    assert sum("call_llm" in line for line in lines) == 2
    assert all(line.startswith("{") for line in result.stdout.splitlines())  # stdout: events only
