"""Tracing: an agent with a tool, its spans printed as a tree, its log lines on stderr.

    pip install "adk_rx[otel]"
    python examples/tracing.py

Runs one turn offline on a scripted model with the OpenTelemetry SDK and an in-memory
exporter, prints the span tree (invocation > invoke_agent > call_llm / execute_tool, and the
tool's own span under its execute_tool span), and logs one line per step with LoggingPlugin.
Swap the in-memory exporter for ``OTLPSpanExporter`` (or run ``adk-rx run AGENT
--otlp-endpoint http://127.0.0.1:4318``) to send the spans to a collector.
"""

from __future__ import annotations

import logging

from google.genai import types
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_rx import InMemoryRunner, LlmAgent, LlmResponse
from adk_rx.telemetry import LoggingPlugin
from adk_rx.telemetry.tree_text import span_tree_lines
from adk_rx.testing import ScriptedLlm

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
tracer = provider.get_tracer("weather-service")


def get_weather(city: str) -> dict[str, str]:
    """Returns the current weather in a city.

    Args:
        city: the city's name.
    """
    # Runs on the I/O pool, yet the current span is this call's execute_tool span.
    with tracer.start_as_current_span("weather lookup"):
        return {"city": city, "sky": "sunny"}


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    call = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Oslo"}))
    model = ScriptedLlm(
        [
            LlmResponse(content=types.Content(role="model", parts=[call])),
            LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="Sunny in Oslo.")]),
                usage_metadata=types.GenerateContentResponseUsageMetadata(
                    prompt_token_count=42, candidates_token_count=5
                ),
            ),
        ]
    )
    agent = LlmAgent(name="weather", model=model, tools=[get_weather])
    runner = InMemoryRunner(
        agent=agent, app_name="demo", plugins=[LoggingPlugin()], tracer_provider=provider
    )
    session = runner.session_service.create_session(app_name="demo", user_id="ada").run()
    with tracer.start_as_current_span("http request"):  # the invocation nests under it
        for event in runner.run(user_id="ada", session_id=session.id, new_message="Oslo?"):
            if event.is_final_response():
                print("answer:", event.text())
    print("\n".join(span_tree_lines(exporter.get_finished_spans())))


if __name__ == "__main__":
    main()
