"""The app of the takeover tests, copied into an agents folder as ``<app>/agent.py``.

A checkout: the model asks for ``lookup`` (completes at once), then ``charge``, which blocks
until the test releases it by writing to the FIFO ``<calls dir>/<app>.release``; then the
model answers. Every model call and tool execution appends ``<what> <pid>`` to
``<calls dir>/<app>.log`` (the calls dir is ``$CHECKOUT_CALLS``), so the test counts them
across server processes. The app is resumable when its folder name starts with
``resumable``; ``charge`` declares itself idempotent, so a resumed run executes it again (it
had no response) and never runs ``lookup`` again (its response was stored).
"""

import os
from pathlib import Path

from google.genai import types

from adk_rx import App, FunctionTool, LlmAgent, ResumabilityConfig
from adk_rx.models import LlmResponse
from adk_rx.models.llm_response import model_content
from adk_rx.testing import ScriptedLlm

NAME = Path(__file__).resolve().parent.name
CALLS = Path(os.environ["CHECKOUT_CALLS"])


def _note(what: str) -> None:
    with (CALLS / f"{NAME}.log").open("a") as out:
        out.write(f"{what} {os.getpid()}\n")


def lookup(order: str) -> dict:
    """Looks an order up."""
    _note("tool:lookup")
    return {"order": order, "total": 42}


def charge(amount: int) -> dict:
    """Charges the customer (blocks until the test releases it)."""
    _note("tool:charge")
    with (CALLS / f"{NAME}.release").open() as fifo:  # blocks until a writer opens it
        fifo.read()
    _note("tool:charge:done")
    return {"charged": amount}


def _call(name: str, **args) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=model_content(part))


def respond(request) -> object:
    answered = [
        part.function_response.name
        for content in request.contents
        for part in content.parts or ()
        if part.function_response is not None
    ]
    _note(f"model:{len(answered)}")
    if not answered:
        return _call("lookup", order="o-1")
    if answered == ["lookup"]:
        return _call("charge", amount=42)
    return "charged 42"


root_agent = LlmAgent(
    name="checkout",
    model=ScriptedLlm([respond] * 1000),
    tools=[FunctionTool(lookup), FunctionTool(charge, idempotent=True)],
)
app = App(
    name=NAME,
    root_agent=root_agent,
    resumability_config=ResumabilityConfig(is_resumable=NAME.startswith("resumable")),
)
