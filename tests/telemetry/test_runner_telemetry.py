"""Which providers a Runner reports to: the given ones, else the global ones, else none."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from adk_rx.telemetry import NO_TRACE, Telemetry
from tests.telemetry.support import Traces

REPO = Path(__file__).resolve().parents[2]


def test_with_nothing_configured_an_invocation_gets_no_trace() -> None:
    assert Telemetry().start_invocation(app_name="a", session_id="s") is NO_TRACE


def test_a_given_provider_is_used() -> None:
    traces = Traces()
    trace = Telemetry(traces.provider).start_invocation(app_name="a", session_id="s")
    trace.end("ok")
    assert [s.name for s in traces.spans()] == ["invocation"]


def test_without_a_provider_the_global_one_set_later_is_used() -> None:
    # The global provider can be set once per process: the check runs in a fresh one.
    script = textwrap.dedent(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from adk_rx import InMemoryRunner, LlmAgent
        from adk_rx.testing import ScriptedLlm

        runner = InMemoryRunner(LlmAgent(name="root", model=ScriptedLlm(["a", "b"])), app_name="x")
        session = runner.session_service.create_session(app_name="x", user_id="u").run()
        list(runner.run(user_id="u", session_id=session.id, new_message="before"))
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)  # after the Runner was built
        list(runner.run(user_id="u", session_id=session.id, new_message="after"))
        print(sorted(s.name for s in exporter.get_finished_spans()))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO), "ADK_RX_ALLOW_REAL_MODEL_CALLS": "0", "PATH": "/usr/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['call_llm', 'invocation', 'invoke_agent root']"
