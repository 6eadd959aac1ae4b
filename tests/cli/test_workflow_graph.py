"""The dev routes draw a Workflow as its graph and highlight the node an event comes from."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import httpx
import pytest

from adk_rx import InMemorySessionService, LlmAgent
from adk_rx.cli.server import create_app
from adk_rx.cli.server.routes.agent_graph import dot_source, serialize_agent
from adk_rx.testing import ScriptedLlm
from adk_rx.workflow import DEFAULT_ROUTE, START, JoinNode, Workflow
from tests.cli.adk_client import BASE
from tests.cli.server_support import unique_app


def classify(node_input: str) -> str:
    return node_input


def short(node_input: str) -> str:
    return node_input


def long(node_input: str) -> str:
    return node_input


def _workflow() -> Workflow:
    writer = LlmAgent(name="writer", model=ScriptedLlm([]))
    return Workflow(
        name="flow",
        edges=[
            (START, classify, {"short": short, DEFAULT_ROUTE: (long, writer)}),
            ((long, writer), JoinNode(name="join")),
        ],
    )


def test_a_workflow_is_drawn_as_its_nodes_and_routed_edges() -> None:
    dot = dot_source(_workflow(), highlight=frozenset({"long"}))

    assert '"flow/__START__" -> "flow/classify";' in dot
    assert '"flow/classify" -> "flow/short" [label="short"];' in dot
    assert '"flow/classify" -> "writer" [label="__DEFAULT__"];' in dot
    assert '"flow/join" [shape=diamond label="⋈ join"];' in dot
    assert '"flow/long" [shape=ellipse label="ƒ long" style=filled fillcolor="#0f5223"];' in dot
    assert '"writer" [shape=box label="🤖 writer"];' in dot


def test_the_tree_entry_of_a_workflow_lists_its_nodes_and_edges() -> None:
    tree = serialize_agent(_workflow())

    assert [n["name"] for n in tree["nodes"]] == ["classify", "short", "long", "writer", "join"]
    assert {n["type"] for n in tree["nodes"]} == {"function", "agent", "join"}
    assert {"from": "classify", "to": "short", "route": "short"} in tree["edges"]
    assert [a["name"] for a in tree["sub_agents"]] == ["writer"]


@pytest.mark.asyncio
async def test_the_event_graph_highlights_the_node_the_event_comes_from(tmp_path: Path) -> None:
    app = unique_app("graph")
    (tmp_path / app).mkdir()
    shutil.copy(Path(__file__).with_name("web_workflow_agent.py"), tmp_path / app / "agent.py")
    server = create_app(tmp_path, session_service=InMemorySessionService())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url=BASE) as http:
        await http.post(f"/apps/{app}/users/u1/sessions", json={"sessionId": "s1"})
        body = {
            "appName": app,
            "userId": "u1",
            "sessionId": "s1",
            "newMessage": {"role": "user", "parts": [{"text": "x"}]},
        }
        gate = next(m for n, m in sys.modules.items() if n.startswith(app) and hasattr(m, "GATE"))
        gate.GATE.set()  # the slow node does not wait in this test
        events = (await http.post("/run", json=body)).json()
        plan = next(e for e in events if e.get("output") == "plan for x")
        base = f"/dev/apps/{app}/users/u1/sessions/s1/events"
        dot = (await http.get(f"{base}/{plan['id']}/graph")).json()["dotSrc"]

    assert plan["nodeInfo"]["path"] == "pipeline@1/plan@1"
    assert '"pipeline/plan" [shape=ellipse label="ƒ plan" style=filled' in dot
    assert '"pipeline/slow" [shape=ellipse label="ƒ slow"];' in dot
