"""The app the page's developer-loop tests drive: answers, failures, a transfer.

Copied as ``agent.py`` into a temporary agents folder. Its ScriptedLlm reads the last part:

* ``refund AMOUNT``: calls ``issue_refund``, which asks for a confirmation first; then says
  "Refunded AMOUNT." or "The refund was not made.";
* ``deploy ENV``: calls the long-running ``start_deploy`` (no result yet); the user's
  FunctionResponse resumes it: "Deploy finished: <status>.";
* ``crash``: calls ``explode``, which raises; then "The tool failed.";
* ``fail``: the model call raises;
* ``handoff``: transfers to the sub-agent ``helper``, which answers "helper here: ...";
* anything else: ``echo: <text>`` streamed in two chunks.
"""

import reactivex as rx
from google.genai import types

from adk_rx import FunctionTool, LlmAgent, LongRunningFunctionTool
from adk_rx.models import LlmResponse
from adk_rx.models.llm_response import model_content
from adk_rx.testing import ScriptedLlm


def issue_refund(amount: float) -> dict:
    """Refunds an amount in EUR."""
    return {"status": "refunded", "amount": amount}


def start_deploy(env: str) -> None:
    """Starts a deploy; its result arrives later."""
    return None


def explode(reason: str = "") -> dict:
    """Always raises."""
    raise RuntimeError("the tool exploded on purpose")


def chunk(text):
    return LlmResponse(content=model_content(types.Part(text=text)), partial=True)


def final(text):
    return LlmResponse(content=model_content(types.Part(text=text)), turn_complete=True)


def streamed(pieces):
    return rx.from_iterable([chunk(p) for p in pieces] + [final("".join(pieces))])


def call(name, **args):
    return LlmResponse(
        content=model_content(types.Part(function_call=types.FunctionCall(name=name, args=args)))
    )


def respond(request):
    part = request.contents[-1].parts[-1]
    if part.function_response is not None:
        response = part.function_response.response or {}
        name = part.function_response.name
        if name == "issue_refund":
            if "error" in response:
                return streamed(["The refund was not made."])
            return streamed([f"Refunded {response.get('amount')}."])
        if name == "start_deploy":
            return streamed([f"Deploy finished: {response.get('status', '?')}."])
        return streamed(["The tool failed."])
    text = part.text or ""
    command, _, rest = text.partition(" ")
    if command == "refund":
        return call("issue_refund", amount=float(rest or 1))
    if command == "deploy":
        return call("start_deploy", env=rest or "prod")
    if command == "crash":
        return call("explode")
    if command == "handoff":
        return call("transfer_to_agent", agent_name="helper")
    if command == "fail":
        return ValueError("the model failed on purpose")
    return streamed(["echo: ", text])


def helper_respond(request):
    texts = [p.text for c in request.contents for p in c.parts or [] if p.text]
    return streamed(["helper here: ", texts[-1] if texts else ""])


helper = LlmAgent(
    name="helper",
    model=ScriptedLlm([helper_respond] * 100_000),
    description="Takes over conversations handed to it.",
)
root_agent = LlmAgent(
    name="assistant",
    model=ScriptedLlm([respond] * 100_000),
    instruction="You answer questions.",
    tools=[
        FunctionTool(issue_refund, require_confirmation=True),
        LongRunningFunctionTool(start_deploy),
        explode,
    ],
    sub_agents=[helper],
)
