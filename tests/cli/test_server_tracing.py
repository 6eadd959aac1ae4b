"""The server and traces: an incoming ``traceparent`` is continued, and the trace route."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from adk_rx.telemetry.span_store import SpanStore
from tests.cli.server_support import unique_app, user_text, write_agents
from tests.telemetry.support import Traces

pytestmark = pytest.mark.asyncio
BASE = "http://127.0.0.1:8000"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    app = unique_app("traced")
    return write_agents(Path(tempfile.mkdtemp(prefix="adk_rx_traced_")), app), app


@pytest.fixture
def traces() -> Traces:
    return Traces()


async def _client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        yield http


@pytest_asyncio.fixture
async def traced(agents: tuple[Path, str], traces: Traces) -> AsyncIterator[httpx.AsyncClient]:
    store = SpanStore()
    traces.provider.add_span_processor(store)
    app = create_app(
        agents[0],
        session_service=InMemorySessionService(),
        tracer_provider=traces.provider,
        span_store=store,
    )
    async for http in _client(app):
        yield http


async def _run(http: httpx.AsyncClient, app: str, text: str, **headers: str) -> list[Any]:
    created = await http.post(f"/apps/{app}/users/u1/sessions", json={"session_id": "s1"})
    assert created.status_code == 200, created.text
    body = {"app_name": app, "user_id": "u1", "session_id": "s1", "new_message": user_text(text)}
    response = await http.post("/run", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_run_continues_the_callers_traceparent(
    traced: httpx.AsyncClient, agents: tuple[Path, str], traces: Traces
) -> None:
    await _run(traced, agents[1], "weather Paris", traceparent=f"00-{TRACE_ID}-{PARENT_ID}-01")

    invocation = traces.one("invocation")
    assert f"{invocation.context.trace_id:032x}" == TRACE_ID
    assert invocation.parent is not None and invocation.parent.is_remote
    assert f"{invocation.parent.span_id:016x}" == PARENT_ID
    assert {f"{s.context.trace_id:032x}" for s in traces.spans()} == {TRACE_ID}
    assert {s.name for s in traces.spans()} >= {"execute_tool get_weather", "call_llm"}


async def test_without_traceparent_a_run_starts_its_own_trace(
    traced: httpx.AsyncClient, agents: tuple[Path, str], traces: Traces
) -> None:
    await _run(traced, agents[1], "hello")

    invocation = traces.one("invocation")
    assert invocation.parent is None
    assert f"{invocation.context.trace_id:032x}" != TRACE_ID


async def test_the_trace_route_answers_the_invocations_spans(
    traced: httpx.AsyncClient, agents: tuple[Path, str]
) -> None:
    app = agents[1]
    events = await _run(traced, app, "weather Oslo")
    invocation_id = events[0]["invocationId"]

    response = await traced.get(
        f"/apps/{app}/users/u1/sessions/s1/invocations/{invocation_id}/trace"
    )

    assert response.status_code == 200, response.text
    data = response.json()
    assert data["source"] == "spans"
    names = [s["name"] for s in data["spans"]]
    assert names[0] == "invocation"
    assert f"invoke_agent {app}" in " ".join(names) or any(
        n.startswith("invoke_agent") for n in names
    )
    assert "execute_tool get_weather" in names
    spans_by_id = {s["span_id"]: s for s in data["spans"]}
    tool = next(s for s in data["spans"] if s["name"] == "execute_tool get_weather")
    assert spans_by_id[tool["parent_span_id"]]["name"].startswith("invoke_agent")
    assert all(s["end_time"] >= s["start_time"] for s in data["spans"])
    other = await traced.get(f"/apps/{app}/users/u2/sessions/s1/invocations/{invocation_id}/trace")
    assert other.status_code == 404


async def test_without_a_span_store_the_trace_route_answers_the_events_with_times(
    agents: tuple[Path, str],
) -> None:
    app = create_app(agents[0], session_service=InMemorySessionService())
    async for http in _client(app):
        events = await _run(http, agents[1], "weather Rome")
        invocation_id = events[0]["invocationId"]

        response = await http.get(
            f"/apps/{agents[1]}/users/u1/sessions/s1/invocations/{invocation_id}/trace"
        )

        assert response.status_code == 200
        data = response.json()
        assert data["source"] == "events"
        rows = data["events"]
        assert rows[0]["author"] == "user"  # the turn starts with the stored user message
        assert rows[1]["function_calls"] == ["get_weather"]
        stamps = [e["timestamp"] for e in rows]
        assert stamps == sorted(stamps) and len(stamps) == len(events) + 1
        missing = await http.get(f"/apps/{agents[1]}/users/u1/sessions/s1/invocations/e-x/trace")
        assert missing.status_code == 404
