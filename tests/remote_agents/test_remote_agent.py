"""RemoteA2aAgent against an agent served in process by ``to_a2a`` (uvicorn on 127.0.0.1):
anywhere in a tree, streaming, the remote context kept per session, errors, cancellation."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from google.genai import types
from reactivex import operators as ops

from adk_rx import AgentTool, InMemoryRunner, LlmAgent, Runner, ToolContext
from adk_rx.a2a import RemoteA2aAgent, to_a2a
from adk_rx.errors import (
    ConfigurationError,
    RemoteAgentError,
    RemoteAgentUnavailableError,
    RemoteTaskFailedError,
)
from adk_rx.models import LlmResponse
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.testing import ScriptedLlm
from adk_rx.workflow import START, Workflow
from tests.cli.server_process import free_port
from tests.remote_agents.agents.helper.agent import SwitchLlm
from tests.remote_agents.support import events_of, served

pytestmark = pytest.mark.timeout(60)

CONTEXT_ID = "a2a:context_id"


class Helper:
    """The remote side: the helper agent served by ``to_a2a``, its sessions inspectable, and
    a tool whose start and cancellation the tests observe."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.sessions = InMemorySessionService()

        async def wait_for_cancel(tool_context: ToolContext) -> dict[str, Any]:
            """Waits until it is cancelled."""
            self.tool_session = tool_context.invocation_context.session
            self.started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.stopped.set()
                raise
            return {"waited": True}

        self.agent = LlmAgent(
            name="helper",
            description="Echoes what it is told.",
            model=SwitchLlm(model="switch"),
            tools=[wait_for_cancel],
        )
        self.runner = Runner(agent=self.agent, app_name="helper", session_service=self.sessions)

    def app(self, port: int) -> Any:
        return to_a2a(self.agent, port=port, runner=self.runner)

    def remote_session(self, user_id: str, session_id: str) -> Any:
        found = self.sessions.get_session(app_name="helper", user_id=user_id, session_id=session_id)
        return found.run()


@pytest.fixture(scope="module")
def helper() -> Any:
    found = Helper()
    with served(found.app) as url:
        found.url = url  # type: ignore[attr-defined]
        yield found


def _runner(agent: Any) -> InMemoryRunner:
    return InMemoryRunner(agent=agent, app_name="caller")


def _session(runner: InMemoryRunner) -> str:
    return runner.session_service.create_session(app_name="caller", user_id="user").run().id


def _stored(runner: InMemoryRunner, sid: str) -> list[Any]:
    got = runner.session_service.get_session(app_name="caller", user_id="user", session_id=sid)
    return got.run().events


def test_as_root_it_streams_the_remote_answer_as_partials_and_stores_it_once(helper: Any):
    runner = _runner(RemoteA2aAgent(name="remote_helper", agent_card=helper.url))
    sid = _session(runner)

    events = events_of(runner, sid, "hello")

    partial = [e.text() for e in events if e.partial]
    final = [e for e in events if not e.partial]
    assert "".join(partial[:3]) == "echo: hello"  # the remote model's chunks, as they came
    assert [(e.author, e.text()) for e in final] == [("remote_helper", "echo: hello")]
    stored = _stored(runner, sid)
    assert [e.author for e in stored] == ["user", "remote_helper"]
    assert stored[-1].custom_metadata[CONTEXT_ID]


def test_the_next_turn_continues_the_remote_context_and_sends_only_what_is_new(helper: Any):
    runner = _runner(RemoteA2aAgent(name="remote_helper", agent_card=helper.url))
    sid = _session(runner)

    first = [e for e in events_of(runner, sid, "hello") if not e.partial][-1]
    second = [e for e in events_of(runner, sid, "again") if not e.partial][-1]

    context = first.custom_metadata[CONTEXT_ID]
    assert second.custom_metadata[CONTEXT_ID] == context
    assert second.text() == "echo: again"
    remote = helper.remote_session(f"A2A_USER_{context}", context)  # an anonymous caller
    said = [e.content.parts[0].text for e in remote.events if e.author == "user"]
    assert said == ["hello", "again"]


def test_a_sub_agent_reached_by_transfer(helper: Any):
    remote = RemoteA2aAgent(name="remote_helper", agent_card=helper.url, description="echoes")
    transfer = types.Part(
        function_call=types.FunctionCall(
            name="transfer_to_agent", args={"agent_name": "remote_helper"}
        )
    )
    root = LlmAgent(
        name="root",
        model=ScriptedLlm([LlmResponse(content=types.Content(role="model", parts=[transfer]))]),
        sub_agents=[remote],
    )
    runner = _runner(root)

    events = [e for e in events_of(runner, _session(runner), "hi there") if not e.partial]

    assert (events[-1].author, events[-1].text()) == ("remote_helper", "echo: hi there")


def test_an_agent_tool_child(helper: Any):
    remote = RemoteA2aAgent(name="remote_helper", agent_card=helper.url, description="echoes")
    call = types.Part(
        function_call=types.FunctionCall(name="remote_helper", args={"request": "ping"})
    )
    outer = LlmAgent(
        name="outer",
        model=ScriptedLlm([LlmResponse(content=types.Content(role="model", parts=[call])), "ok"]),
        tools=[AgentTool(remote)],
    )
    runner = _runner(outer)

    events = [e for e in events_of(runner, _session(runner), "go") if not e.partial]

    responses = [r.response for e in events for r in e.get_function_responses()]
    assert responses == [{"result": "echo: ping"}]
    assert events[-1].text() == "ok"


def test_a_workflow_node_whose_answer_feeds_the_next_node(helper: Any):
    remote = RemoteA2aAgent(name="remote_helper", agent_card=helper.url)

    def shout(node_input: Any) -> str:
        return str(node_input).upper()

    runner = _runner(Workflow(name="wf", edges=[(START, remote, shout)]))

    events = events_of(runner, _session(runner), "quiet")

    assert [e.output for e in events if e.output is not None][-1] == "ECHO: QUIET"


def test_a_failed_remote_task_is_a_remote_task_failed_error(helper: Any):
    runner = _runner(RemoteA2aAgent(name="remote_helper", agent_card=helper.url))

    with pytest.raises(RemoteTaskFailedError, match="model is down") as caught:
        events_of(runner, _session(runner), "please fail")

    assert caught.value.state == "failed"
    assert caught.value.agent == "remote_helper"


def test_an_unreachable_remote_agent_is_a_remote_agent_unavailable_error():
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    runner = _runner(RemoteA2aAgent(name="remote_helper", agent_card=url))

    with pytest.raises(RemoteAgentUnavailableError, match="could not be read"):
        events_of(runner, _session(runner), "hello")


def test_a_card_that_is_not_a_card_is_a_remote_agent_error(tmp_path: Any):
    card = tmp_path / "card.json"
    card.write_text("[1, 2]")
    runner = _runner(RemoteA2aAgent(name="remote_helper", agent_card=str(card)))

    with pytest.raises(RemoteAgentError, match="no valid agent card"):
        events_of(runner, _session(runner), "hello")


def test_an_agent_card_must_be_given():
    with pytest.raises(ConfigurationError, match="agent_card"):
        RemoteA2aAgent(name="remote_helper", agent_card="")


def test_disposing_the_turn_cancels_the_remote_task_and_its_tool_stops_within_a_second(
    helper: Any,
):
    helper.started.clear()
    helper.stopped.clear()
    runner = _runner(RemoteA2aAgent(name="remote_helper", agent_card=helper.url))
    sid = _session(runner)
    ended = threading.Event()

    subscription = (
        runner.run_async(user_id="user", session_id=sid, new_message="use the tool")
        .pipe(ops.finally_action(ended.set))
        .subscribe(on_error=lambda _: None)
    )
    assert helper.started.wait(20), "the remote tool never started"
    subscription.dispose()

    assert helper.stopped.wait(1.0), "the remote tool still runs a second after the cancel"
    assert ended.wait(5)
    ran = helper.tool_session
    helper.runner.when_idle(user_id=ran.user_id, session_id=ran.id).run()
    remote = helper.remote_session(ran.user_id, ran.id)  # the session stored where it stopped
    assert [e.error_code for e in remote.events][-1] == "CANCELLED"
