"""An app for the dev page's tool-progress test: a tool that reports two steps, then answers."""

import asyncio

from google.genai import types

from adk_rx import LlmAgent, LlmResponse
from adk_rx.testing import ScriptedLlm


async def download(name: str):
    """Downloads a file, reporting how far it got."""
    for percent in (40, 80):
        await asyncio.sleep(0.05)
        yield {"percent": percent}
    yield {"file": name, "bytes": 42}


_call = types.FunctionCall(name="download", args={"name": "a.txt"})
root_agent = LlmAgent(
    name="fetcher",
    model=ScriptedLlm(
        [
            LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=_call)])
            ),
            "downloaded a.txt",
        ]
    ),
    tools=[download],
)
