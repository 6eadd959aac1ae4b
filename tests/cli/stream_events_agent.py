"""An app whose root agent calls a helper agent through AgentTool(stream_events=True)."""

from google.genai import types

from adk_rx import AgentTool, LlmAgent, LlmResponse
from adk_rx.testing import ScriptedLlm


def _call(name: str, args: dict, call_id: str) -> LlmResponse:
    call = types.FunctionCall(id=call_id, name=name, args=args)
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def lookup(city: str) -> dict:
    """Looks a city's weather up."""
    return {"city": city, "temp": 21}


helper = LlmAgent(
    name="helper",
    model=ScriptedLlm([_call("lookup", {"city": "Paris"}, "i-1"), "Paris: 21"]),
    tools=[lookup],
)
root_agent = LlmAgent(
    name="outer",
    model=ScriptedLlm([_call("helper", {"request": "weather?"}, "c-1"), "It is 21."]),
    tools=[AgentTool(helper, stream_events=True)],
)
