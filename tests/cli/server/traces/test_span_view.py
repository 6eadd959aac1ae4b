"""The trace pane from the server's OpenTelemetry spans (a SpanStore), events for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from adk_rx import InMemorySessionService
from adk_rx.telemetry.span_store import SpanStore
from tests.cli.adk_client import adk, agents_folder, client_for, run_body

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("spans")


async def test_spans_come_from_the_store_with_the_ids_the_ui_needs(agents: tuple[Path, str]):
    root, app = agents
    sessions = InMemorySessionService()
    # A first run on a server that keeps no spans: its trace comes from its events.
    async with client_for(root, session_service=sessions) as http:
        await http.post(f"/apps/{app}/users/u1/sessions", json={"sessionId": "s1"})
        assert (await http.post("/run", json=run_body(app, "hello"))).status_code == 200
    store = SpanStore()
    provider = TracerProvider()
    provider.add_span_processor(store)
    options = {"session_service": sessions, "tracer_provider": provider, "span_store": store}
    async with client_for(root, **options) as http:
        assert (await http.post("/run", json=run_body(app, "weather Oslo"))).status_code == 200
        spans = (await http.get(f"/dev/apps/{app}/debug/trace/session/s1")).json()
        events = (await http.get(f"/apps/{app}/users/u1/sessions/s1")).json()["events"]
        second = events[-1]
        by_event = (await http.get(f"/dev/apps/{app}/debug/trace/{second['id']}")).json()
    first_run, second_run = events[0]["invocationId"], second["invocationId"]
    from_store = [s for s in spans if s["attributes"].get("adk_rx.invocation_id") == second_run]
    from_events = [s for s in spans if s not in from_store]
    assert {s["attributes"]["gcp.vertex.agent.invocation_id"] for s in from_events} == {first_run}
    assert "adk_rx.invocation_id" not in from_events[0]["attributes"]
    names = [s["name"] for s in from_store]
    assert names[0] == "invocation" and "execute_tool get_weather" in names
    calls = [s for s in from_store if s["name"] == "call_llm"]
    model_events = [
        e
        for e in events
        if e["invocationId"] == second_run
        and e["author"] != "user"
        and "functionResponse" not in e["content"]["parts"][0]
    ]
    assert [c["attributes"]["gcp.vertex.agent.event_id"] for c in calls] == [
        e["id"] for e in model_events
    ]
    assert all(s["attributes"]["gcp.vertex.agent.invocation_id"] == second_run for s in from_store)
    assert by_event["gen_ai.request.model"] == "scripted"  # a real span's attribute
    assert "It is sunny in Oslo." in by_event["gcp.vertex.agent.llm_response"]
    web_ui = adk("telemetry._web_ui")
    assert len([web_ui.WebUiSpan.model_validate(s) for s in spans]) == len(spans)
