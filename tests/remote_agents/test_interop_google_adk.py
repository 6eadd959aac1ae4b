"""Interop with google-adk 2.13 both ways: its RemoteA2aAgent calling ``adk-rx api-server
--a2a``, and adk_rx's RemoteA2aAgent calling google-adk's ``to_a2a`` app under uvicorn."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import types

from adk_rx import InMemoryRunner
from adk_rx.a2a import RemoteA2aAgent
from tests.cli.server_process import ServerProcess, api_server_process
from tests.remote_agents.support import events_of, served

pytest.importorskip("google.adk.a2a", reason="google-adk is not installed (the compat extra)")

from google.adk.a2a.agent import RemoteA2aAgent as AdkRemoteA2aAgent
from google.adk.a2a.utils.agent_to_a2a import to_a2a as adk_to_a2a
from google.adk.agents import LlmAgent as AdkLlmAgent
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
from google.adk.runners import Runner as AdkRunner
from google.adk.sessions import InMemorySessionService as AdkSessions

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*:UserWarning"),  # google-adk's A2A parts
]

AGENTS = Path(__file__).resolve().parent / "agents"
CONTEXT_ID = "a2a:context_id"


@pytest.fixture(scope="module")
def adk_rx_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("interop")
    with api_server_process(AGENTS, root, "--a2a", "--session-service-uri", "memory://") as server:
        yield server


async def _adk_turns(agent: Any, *texts: str) -> list[list[Any]]:
    runner = AdkInMemoryRunner(agent=agent, app_name="adk_caller")
    session = await runner.session_service.create_session(app_name="adk_caller", user_id="u")
    turns = []
    for text in texts:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        turns.append(
            [
                e
                async for e in runner.run_async(
                    user_id="u", session_id=session.id, new_message=message
                )
            ]
        )
    return turns


def test_google_adks_remote_agent_calls_the_adk_rx_server(adk_rx_server: ServerProcess):
    card = f"{adk_rx_server.url}/a2a/helper/.well-known/agent-card.json"
    agent = AdkRemoteA2aAgent(name="remote_helper", agent_card=card)
    first, second = asyncio.run(_adk_turns(agent, "hello", "again"))

    answers = [e for e in first if e.content and e.content.parts and not e.partial]
    assert answers[-1].content.parts[0].text == "echo: hello"
    context = answers[-1].custom_metadata[CONTEXT_ID]
    later = [e for e in second if e.content and e.content.parts and not e.partial]
    assert later[-1].content.parts[0].text == "echo: again"
    assert later[-1].custom_metadata[CONTEXT_ID] == context
    path = f"/apps/helper/users/A2A_USER_{context}/sessions/{context}"
    remote = httpx.get(adk_rx_server.url + path).json()
    said = [e["content"]["parts"][0]["text"] for e in remote["events"] if e["author"] == "user"]
    assert said == ["hello", "again"]  # one remote session: google-adk sent only what is new


class _AdkEcho(AdkBaseLlm):
    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        said = [
            part.text
            for content in llm_request.contents
            if content.role == "user"
            for part in content.parts or []
            if part.text
        ]
        reply = f"google-adk heard: {' | '.join(said)}"
        yield AdkLlmResponse(content=types.Content(role="model", parts=[types.Part(text=reply)]))


def test_adk_rxs_remote_agent_calls_google_adks_to_a2a_app():
    sessions = AdkSessions()
    agent = AdkLlmAgent(name="adk_helper", model=_AdkEcho(model="echo"), instruction="Echo.")

    def app(port: int) -> Any:
        runner = AdkRunner(app_name="adk_helper", agent=agent, session_service=sessions)
        return adk_to_a2a(agent, host="127.0.0.1", port=port, runner=runner)

    with served(app) as url:
        runner = InMemoryRunner(agent=RemoteA2aAgent(name="remote", agent_card=url), app_name="c")
        sid = runner.session_service.create_session(app_name="c", user_id="user").run().id
        first = [e for e in events_of(runner, sid, "hello") if not e.partial]
        second = [e for e in events_of(runner, sid, "again") if not e.partial]

    assert (first[-1].author, first[-1].text()) == ("remote", "google-adk heard: hello")
    # The second turn continued google-adk's session: its model saw both messages.
    assert second[-1].text() == "google-adk heard: hello | again"
    assert second[-1].custom_metadata[CONTEXT_ID] == first[-1].custom_metadata[CONTEXT_ID]
