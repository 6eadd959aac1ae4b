"""The remote agent of the A2A tests: echoes in streamed chunks, or runs a tool that waits.

* a message with "tool": the model calls ``wait_for_cancel``, an async tool that writes
  ``A2A-TEST tool started`` to stderr, waits, and writes ``A2A-TEST tool stopped`` when it is
  cancelled: the cancellation tests read those lines from the server's stderr;
* a message with "fail": the model call raises;
* anything else: ``echo: <text>`` in three chunks (streamed when the run streams).
"""

import asyncio
import sys

import reactivex as rx
from google.genai import types

from adk_rx import BaseLlm, LlmAgent, LlmResponse


def _mark(name: str) -> None:
    print(f"A2A-TEST tool {name}", file=sys.stderr, flush=True)


async def wait_for_cancel() -> dict:
    """Waits a minute; marks when it starts and when it is cancelled."""
    _mark("started")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        _mark("stopped")
        raise
    return {"waited": True}


def _said(request) -> str:
    for content in reversed(request.contents):
        for part in content.parts or []:
            if content.role == "user" and part.text:
                return part.text
    return ""


class SwitchLlm(BaseLlm):
    def generate_content(self, llm_request, stream=False):
        text = _said(llm_request)
        if "fail" in text:
            return rx.throw(RuntimeError("the helper's model is down"))
        if "tool" in text:
            call = types.Part(function_call=types.FunctionCall(name="wait_for_cancel", args={}))
            return rx.just(LlmResponse(content=types.Content(role="model", parts=[call])))
        answer = f"echo: {text}"
        if not stream:
            return rx.just(LlmResponse.text(answer))
        third = max(1, len(answer) // 3)
        chunks = [answer[:third], answer[third : 2 * third], answer[2 * third :]]
        partial = [
            LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=c)]), partial=True
            )
            for c in chunks
        ]
        return rx.from_iterable([*partial, LlmResponse.text(answer)])


root_agent = LlmAgent(
    name="helper",
    description="Echoes what it is told; can wait on a tool.",
    model=SwitchLlm(model="switch"),
    instruction="Echo.",
    tools=[wait_for_cancel],
)
