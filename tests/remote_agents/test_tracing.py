"""The remote run joins the caller's trace: ``traceparent`` rides on the A2A request, so the
spans of both sides (each exported by its own SDK, in memory) make one tree."""

from __future__ import annotations

from typing import Any

import pytest

from adk_rx import LlmAgent, Runner
from adk_rx.a2a import RemoteA2aAgent, to_a2a
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.telemetry.tree_text import span_tree_lines
from tests.remote_agents.agents.helper.agent import SwitchLlm
from tests.remote_agents.support import served
from tests.telemetry.support import Traces, tree, turn

pytestmark = pytest.mark.timeout(60)


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
