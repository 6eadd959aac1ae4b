"""Two agents in two processes, talking A2A on 127.0.0.1, offline.

``desk`` (this folder) hands every message to ``shouter``, an agent served by another
process: a :class:`~adk_rx.a2a.RemoteA2aAgent` in its tree stands for it. Run the remote
side in one terminal and the desk in another::

    adk-rx api-server examples/a2a --a2a --port 8001
    adk-rx run examples/a2a/desk --in-memory -m "hello over there"

The first serves every app of ``examples/a2a`` over A2A, ``shouter`` at
``http://127.0.0.1:8001/a2a/shouter`` (its card at ``.../.well-known/agent-card.json``); the
second transfers to ``shouter``, whose answer comes back over A2A and is stored in the desk's
session with the remote context id, so the next message continues the same remote
conversation. ``SHOUTER_URL`` names another address. Disposing the desk's run (Ctrl-C)
cancels the remote task too.
"""

from __future__ import annotations

import os

import reactivex as rx
from google.genai import types
from reactivex import Observable

from adk_rx import BaseLlm, LlmAgent, LlmRequest, LlmResponse
from adk_rx.a2a import RemoteA2aAgent

SHOUTER_URL = os.environ.get("SHOUTER_URL", "http://127.0.0.1:8001/a2a/shouter")


class Router(BaseLlm):
    """A model that always transfers to ``shouter`` (a real model would choose)."""

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        call = types.FunctionCall(name="transfer_to_agent", args={"agent_name": "shouter"})
        content = types.Content(role="model", parts=[types.Part(function_call=call)])
        return rx.just(LlmResponse(content=content))


root_agent = LlmAgent(
    name="desk",
    description="Takes the user's messages and hands them on.",
    model=Router(model="router"),
    instruction="Hand every message to shouter.",
    sub_agents=[
        RemoteA2aAgent(
            name="shouter", agent_card=SHOUTER_URL, description="Shouts back whatever it is told."
        )
    ],
)
