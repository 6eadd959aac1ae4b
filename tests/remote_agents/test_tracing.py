"""The remote run joins the caller's trace: ``traceparent`` rides on the A2A request, so the
spans of both sides (each exported by its own SDK, in memory) make one tree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_rx import LlmAgent, Runner
from adk_rx.a2a import RemoteA2aAgent, to_a2a
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.telemetry.tree_text import span_tree_lines
from tests.cli.server_process import api_server_process
from tests.remote_agents.agents.helper.agent import SwitchLlm
from tests.remote_agents.support import served
from tests.telemetry.support import Traces, tree, turn

pytestmark = pytest.mark.timeout(120)

AGENTS = Path(__file__).resolve().parent / "agents"


def _names(node: list[Any]) -> list[Any]:
    name, children = node
    return [
        name.split(" ")[0] if name.startswith("invocation") else name,
        [_names(c) for c in children],
    ]


def test_the_remote_runs_spans_nest_under_the_calling_agents_span_in_one_trace():
    local, remote = Traces(), Traces()
    helper = LlmAgent(name="helper", model=SwitchLlm(model="switch"), instruction="Echo.")
    helper_runner = Runner(
        agent=helper,
        app_name="helper",
        session_service=InMemorySessionService(),
        tracer_provider=remote.provider,
    )

    with served(lambda port: to_a2a(helper, port=port, runner=helper_runner)) as url:
        caller = local.runner(RemoteA2aAgent(name="remote_helper", agent_card=url))
        turn(caller, "hello")
        helper_runner.close()  # every remote span has ended

    spans = local.spans() + remote.spans()
    assert len({s.context.trace_id for s in spans}) == 1, "two traces: the hop lost the context"
    (root,) = tree(spans)
    assert _names(root) == [
        "invocation",
        [
            [
                "invoke_agent remote_helper",
                [["invocation", [["invoke_agent helper", [["call_llm", []]]]]]],
            ]
        ],
    ]
    # ``adk-rx run --trace`` prints the same tree, the remote side included.
    text = "\n".join(span_tree_lines(spans))
    assert "invoke_agent remote_helper" in text and "invoke_agent helper" in text


def test_an_api_server_run_continues_the_callers_trace_as_its_trace_route_shows(
    tmp_path: Path,
):
    local = Traces()
    with api_server_process(
        AGENTS, tmp_path, "--a2a", "--session-service-uri", "memory://"
    ) as server:
        caller = local.runner(
            RemoteA2aAgent(name="remote_helper", agent_card=f"{server.url}/a2a/helper")
        )
        answer = [e for e in turn(caller, "hello") if not e.partial][-1]
        context = answer.custom_metadata["a2a:context_id"]
        session = f"/apps/helper/users/A2A_USER_{context}/sessions/{context}"
        with httpx.Client(base_url=server.url, timeout=30) as http:
            invocation = http.get(session).json()["events"][-1]["invocationId"]
            trace = http.get(f"{session}/invocations/{invocation}/trace").json()

    assert trace["source"] == "spans"
    calling = local.one("invoke_agent remote_helper")
    remote_root = [s for s in trace["spans"] if s["name"] == "invocation"]
    assert {s["trace_id"] for s in trace["spans"]} == {f"{calling.context.trace_id:032x}"}
    assert remote_root[0]["parent_span_id"] == f"{calling.context.span_id:016x}"
