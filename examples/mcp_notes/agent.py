"""Notes: an agent whose tools come from a local MCP server (``notes_server.py``, over stdio).

    adk-rx run examples/mcp_notes -m "remember to water the plants"

The model, in this order: ``ADK_RX_MODEL`` (``adk-rx run --model NAME``); Gemini
(``gemini-2.5-flash``) when ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` is set; otherwise a small
offline stand-in (:class:`OfflineNotesLlm`) that maps "remember ..." to ``add_note``, "index"
to ``index_notes`` and anything else to ``list_notes``, so the example runs without a network.
The tools, their descriptions and their schemas all come from the server.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from google.genai import types
from mcp import StdioServerParameters
from reactivex import Observable

from adk_rx import BaseLlm, LlmAgent, LlmRequest, LlmResponse
from adk_rx.rx import single
from adk_rx.tools.mcp import McpToolset, StdioConnectionParams

SERVER = Path(__file__).with_name("notes_server.py")


class OfflineNotesLlm(BaseLlm):
    """Picks a notes tool from the user's words, then reports what the tool answered."""

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        last = llm_request.contents[-1]
        answered = [p.function_response for p in last.parts or [] if p.function_response]
        if answered:
            said = json.dumps(answered[0].response)
            reply = LlmResponse.text(f"{answered[0].name} answered: {said}")
            return single(lambda: reply)
        words = "".join(p.text or "" for p in last.parts or []).strip()
        if words.lower().startswith("remember"):
            call = types.FunctionCall(
                name="add_note", args={"text": words[len("remember") :].strip()}
            )
        elif "index" in words.lower():
            call = types.FunctionCall(name="index_notes", args={})
        else:
            call = types.FunctionCall(name="list_notes", args={})
        content = types.Content(role="model", parts=[types.Part(function_call=call)])
        response = LlmResponse(content=content)
        return single(lambda: response)


def pick_model() -> str | BaseLlm:
    if name := os.environ.get("ADK_RX_MODEL"):
        return name
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return "gemini-2.5-flash"
    return OfflineNotesLlm(model="offline-notes")


notes = McpToolset(
    connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    )
)

root_agent = LlmAgent(
    name="notes",
    model=pick_model(),
    instruction="You keep the user's notes with your tools. Answer in one short sentence.",
    tools=[notes],
)
