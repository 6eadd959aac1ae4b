"""A real OpenTelemetry SDK with an in-memory exporter, and a span tree view for asserts."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_rx import InMemoryRunner, Runner


class Traces:
    """A tracer provider whose finished spans can be read back."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.metric_reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.metric_reader])

    def runner(self, agent: Any, **kwargs: Any) -> InMemoryRunner:
        runner = InMemoryRunner(
            agent=agent,
            app_name="app",
            tracer_provider=self.provider,
            meter_provider=self.meter_provider,
            **kwargs,
        )
        runner.session_service.create_session(app_name="app", user_id="u1", session_id="s1").run()
        return runner

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.tree()}"
        return found[0]

    def tree(self) -> list[Any]:
        """The finished spans as nested ``[name, [children...]]`` lists, in start order."""
        return tree(self.spans())

    def metrics(self) -> dict[str, list[Any]]:
        """Data points by metric name."""
        out: dict[str, list[Any]] = {}
        data = self.metric_reader.get_metrics_data()
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out.setdefault(metric.name, []).extend(metric.data.data_points)
        return out


def tree(spans: list[ReadableSpan]) -> list[Any]:
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    ids = {s.context.span_id for s in spans}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent is not None else None
        by_parent.setdefault(parent if parent in ids else None, []).append(span)

    def build(parent: int | None) -> list[Any]:
        return [[s.name, build(s.context.span_id)] for s in by_parent.get(parent, [])]

    return build(None)


def turn(runner: Runner, message: str = "hi", **kwargs: Any) -> list[Any]:
    return list(runner.run(user_id="u1", session_id="s1", new_message=message, **kwargs))
