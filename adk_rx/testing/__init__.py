"""Testing kit: a scripted model, readable event sequences, service conformance suites."""

from adk_rx.testing.scripted import ScriptedLlm
from adk_rx.testing.simplify import simplify_content, simplify_events

__all__ = ["ScriptedLlm", "simplify_content", "simplify_events"]
