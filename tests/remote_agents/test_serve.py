"""``to_a2a`` served in process: a resumable app's task that waits for input continues the
same invocation when the answer comes on the same task."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from google.genai import types

from adk_rx import App, LlmAgent, LongRunningFunctionTool, Runner
from adk_rx.a2a import to_a2a
from adk_rx.apps import ResumabilityConfig
from adk_rx.models import LlmResponse
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.testing import ScriptedLlm
from tests.remote_agents.support import served

pytestmark = pytest.mark.timeout(60)


def ask_approval(amount: int) -> None:
    """Asks a person to approve a refund; the answer comes later (None: not yet)."""
    return None


def _send(url: str, message: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    answer = httpx.post(url, json=body, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def test_a_resumable_apps_task_waits_for_input_then_its_invocation_goes_on():
    call = types.FunctionCall(name="ask_approval", args={"amount": 5}, id="call-1")
    model = ScriptedLlm(
        [
            LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=call)])
            ),
            "refund approved",
        ]
    )
    agent = LlmAgent(name="refunds", model=model, tools=[LongRunningFunctionTool(ask_approval)])
    app = App(name="refunds", root_agent=agent, resumability_config=ResumabilityConfig(True))
    sessions = InMemorySessionService()
    runner = Runner(app=app, session_service=sessions)

    with served(lambda port: to_a2a(app, port=port, runner=runner)) as url:
        waiting = _send(
            url,
            {"messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "refund 5"}]},
        )
        answer = {
            "kind": "data",
            "data": {"id": "call-1", "name": "ask_approval", "response": {"approved": True}},
            "metadata": {"adk_type": "function_response"},
        }
        done = _send(
            url,
            {
                "messageId": "m2",
                "role": "user",
                "parts": [answer],
                "taskId": waiting["id"],
                "contextId": waiting["contextId"],
            },
        )

    assert waiting["status"]["state"] == "input-required"
    pending = waiting["status"]["message"]["parts"][0]
    assert pending["data"]["name"] == "ask_approval"
    assert pending["metadata"]["adk_is_long_running"] is True
    assert done["id"] == waiting["id"]
    assert done["status"]["state"] == "completed"
    assert done["artifacts"][-1]["parts"][0]["text"] == "refund approved"
    context = waiting["contextId"]
    session = sessions.get_session(
        app_name="refunds", user_id=f"A2A_USER_{context}", session_id=context
    ).run()
    # One invocation, resumed: the answer and the final reply carry the first one's id.
    assert len({e.invocation_id for e in session.events}) == 1
