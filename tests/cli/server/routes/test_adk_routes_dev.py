"""google-adk's developer routes: the agent graph, the trace pane's spans, builder and evals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from tests.cli.adk_client import adk, agents_folder, client_for, run_body

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    root, app = agents_folder("dev")
    (root / app / "README.md").write_text("# Weather\nAsk about the weather.\n")
    return root, app


@pytest_asyncio.fixture
async def client(agents: tuple[Path, str]) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(agents[0], tokens={"t1": "u1", "t2": "u2"}) as http:
        http.headers["Authorization"] = "Bearer t1"
        await http.post(f"/apps/{agents[1]}/users/u1/sessions", json={"sessionId": "s1"})
        yield http


async def test_build_graph_serialises_the_agent_tree_with_the_readme(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    body = (await client.get(f"/dev/apps/{agents[1]}/build_graph")).json()
    assert body["name"] == agents[1] and body["readme"].startswith("# Weather")
    root = body["root_agent"]
    assert (root["name"], root["agent_class"], root["model"]) == (
        "assistant",
        "LlmAgent",
        "scripted",
    )
    assert [t["name"] for t in root["tools"]] == ["get_weather", "save_note"]
    assert root["sub_agents"] == []


async def test_graph_images_are_dot_source_the_ui_renders(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    image = (await client.get(f"/dev/apps/{agents[1]}/build_graph_image?dark_mode=true")).json()
    dot = image[""]["dotSrc"]
    assert dot.startswith("digraph {") and '"assistant" -> "assistant/get_weather"' in dot
    assert "#333537" in dot  # the dark background
    plain = (await client.get(f"/dev/apps/{agents[1]}/graph")).json()["dotSrc"]
    assert "#ffffff" in plain
    missing = await client.get(f"/dev/apps/{agents[1]}/build_graph_image?node=nobody")
    assert missing.status_code == 404
    assert (await client.get("/dev/apps/nope/build_graph")).status_code == 404


async def test_session_trace_has_one_tree_per_run_with_the_attributes_the_ui_requires(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    assert (await client.post("/run", json=run_body(app, "weather Oslo"))).status_code == 200
    spans = (await client.get(f"/dev/apps/{app}/debug/trace/session/s1")).json()
    names = [s["name"] for s in spans]
    assert names == [
        "invocation",
        "invoke_agent assistant",
        "call_llm",
        "execute_tool get_weather",
        "call_llm",
    ]
    root, agent, first_call, tool, last_call = spans
    assert agent["parent_span_id"] == root["span_id"]
    assert {first_call["parent_span_id"], tool["parent_span_id"]} == {agent["span_id"]}
    assert len({s["trace_id"] for s in spans}) == 1
    assert all(s["span_id"] < 2**53 and s["start_time"] <= s["end_time"] for s in spans)
    assert root["start_time"] <= first_call["start_time"] <= tool["start_time"]
    assert tool["end_time"] <= last_call["end_time"] <= root["end_time"]
    assert agent["attributes"]["gen_ai.conversation.id"] == "s1"
    stored = (await client.get(f"/apps/{app}/users/u1/sessions/s1")).json()["events"]
    assert last_call["attributes"]["gcp.vertex.agent.event_id"] == stored[-1]["id"]
    assert last_call["attributes"]["gcp.vertex.agent.invocation_id"] == stored[-1]["invocationId"]
    web_ui = adk("telemetry._web_ui")
    assert [web_ui.WebUiSpan.model_validate(s).name for s in spans] == names


async def test_event_trace_answers_its_model_call_attributes(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    await client.post("/run", json=run_body(app, "hello"))
    stored = (await client.get(f"/apps/{app}/users/u1/sessions/s1")).json()["events"]
    reply = stored[-1]
    trace = (await client.get(f"/dev/apps/{app}/debug/trace/{reply['id']}")).json()
    assert trace["gcp.vertex.agent.event_id"] == reply["id"]
    assert "echo: hello" in trace["gcp.vertex.agent.llm_response"]
    assert isinstance(trace["span_id"], int) and isinstance(trace["trace_id"], int)
    assert (await client.get(f"/dev/apps/{app}/debug/trace/none")).status_code == 404


async def test_traces_of_another_users_session_stay_hidden(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    await client.post("/run", json=run_body(app, "hello"))
    reply = (await client.get(f"/apps/{app}/users/u1/sessions/s1")).json()["events"][-1]
    other = {"Authorization": "Bearer t2"}
    session = await client.get(f"/dev/apps/{app}/debug/trace/session/s1", headers=other)
    assert session.status_code == 200 and session.json() == []
    event = await client.get(f"/dev/apps/{app}/debug/trace/{reply['id']}", headers=other)
    assert event.status_code == 404
    unknown = await client.get(f"/dev/apps/{app}/debug/trace/session/never")
    assert unknown.json() == []


async def test_builder_and_eval_lists_answer_empty(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    builder = await client.get(f"/dev/apps/{app}/builder?ts=1")
    assert builder.status_code == 200 and builder.text == ""
    assert (await client.get(f"/dev/apps/{app}/eval_sets")).json() == []
    assert (await client.get(f"/dev/apps/{app}/eval_results")).json() == []


@pytest.mark.asyncio
async def test_event_graph_highlights_the_author_and_the_tool_it_called(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    await client.post("/run", json=run_body(app, "weather Rome"))
    events = (await client.get(f"/apps/{app}/users/u1/sessions/s1")).json()["events"]
    call = next(e for e in events if "functionCall" in e["content"]["parts"][0])
    base = f"/dev/apps/{app}/users/u1/sessions/s1/events"
    dot = (await client.get(f"{base}/{call['id']}/graph")).json()["dotSrc"]
    filled = [line for line in dot.splitlines() if "style=filled" in line]
    assert len(filled) == 2
    assert any('"assistant" [' in line for line in filled)
    assert any('"assistant/get_weather"' in line for line in filled)
    assert (await client.get(f"{base}/none/graph")).json() == {}
    other = await client.get(f"{base}/{call['id']}/graph", headers={"Authorization": "Bearer t2"})
    assert other.status_code == 404


async def test_a_state_patch_alone_has_no_trace(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    patched = await client.patch(f"/apps/{app}/users/u1/sessions/s1", json={"stateDelta": {"a": 1}})
    assert patched.status_code == 200
    assert (await client.get(f"/dev/apps/{app}/debug/trace/session/s1")).json() == []
