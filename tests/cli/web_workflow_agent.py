"""An app for the dev page's workflow test: plan -> slow (waits for GATE) -> writer, beside
a helper agent streamed through AgentTool(stream_events=True) in the writer's turn."""

import asyncio
import threading

from google.genai import types

from adk_rx import AgentTool, LlmAgent, LlmResponse
from adk_rx.testing import ScriptedLlm
from adk_rx.workflow import START, Workflow

GATE = threading.Event()


def plan(node_input: str) -> str:
    return f"plan for {node_input}"


async def slow(node_input: str) -> str:
    await asyncio.to_thread(GATE.wait, 30)
    return node_input + ", checked"


_call = types.FunctionCall(id="c-1", name="helper", args={"request": "facts?"})
_ask = LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=_call)]))
helper = LlmAgent(name="helper", model=ScriptedLlm(["helper: three facts"]))
writer = LlmAgent(
    name="writer",
    model=ScriptedLlm(
        [
            LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=_call)])
            ),
            "the report",
        ]
    ),
    tools=[AgentTool(helper, stream_events=True)],
)
root_agent = Workflow(name="pipeline", edges=[(START, plan, slow, writer)])
