"""Re-records ``trajectory.jsonl``, the model traffic the offline support desk replays.

    python examples/support_desk/record.py          # from the script below, offline
    python examples/support_desk/record.py --live   # from the configured model (agent.py)

Runs four conversations through a Runner whose model is wrapped in ``RecordingLlm``, with
streaming on (so a replay streams too), the user approving each refund asked for:

1. "Where is my order 1234?"
2. "Please refund order 1234, it arrived broken."
3. both questions in one session, where first (the refund question reaches ``shipping``);
4. both questions in one session, refund first (the delivery question reaches ``billing``);
5. and 6. each question twice in one session (the second reaches the specialist directly).

A replay matches each turn by its user message, so the two questions are answered in a
session of their own or one after the other, in either order.
"""

from __future__ import annotations

import sys
from pathlib import Path

from google.genai import types

from adk_rx import BaseLlm, InMemoryRunner, LlmRegistry, LlmResponse, RunConfig, StreamingMode
from adk_rx.models.recording import RecordingLlm
from adk_rx.testing import ScriptedLlm

sys.path.insert(0, str(Path(__file__).parent))
from agent import TRAJECTORY, build, pick_model

WHERE = "Where is my order 1234?"
REFUND = "Please refund order 1234, it arrived broken."
CONVERSATIONS = [
    ("where", [WHERE]),
    ("refund", [REFUND]),
    ("where-then-refund", [WHERE, REFUND]),
    ("refund-then-where", [REFUND, WHERE]),
    ("where-twice", [WHERE, WHERE]),
    ("refund-twice", [REFUND, REFUND]),
]


def _call(name: str, **args: object) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def _where() -> list[LlmResponse | list[str]]:
    """The delivery answer, reached by a transfer."""
    return [
        _call("transfer_to_agent", agent_name="shipping"),
        _call("lookup_order", order_id="1234"),
        [
            "Order 1234 shipped with DHL ",
            "(tracking JD0146000032) ",
            "and should arrive on 3 December 2026.",
        ],
    ]


def _refund() -> list[LlmResponse | list[str]]:
    """The refund, reached by a transfer, asked for approval, then done."""
    return [
        _call("transfer_to_agent", agent_name="billing"),
        _call("lookup_order", order_id="1234"),
        _call("issue_refund", order_id="1234", amount_eur=59.9, reason="arrived broken"),
        ["I need your approval to refund 59.90 EUR for order 1234."],
        [
            "Done: 59.90 EUR for order 1234 is on its way back to your card ",
            "(refund R-1234-1). Sorry about the kettle!",
        ],
    ]


def scripted() -> ScriptedLlm:
    """What a good model answers, call by call, in the order the conversations make them."""
    where, refund = _where(), _refund()
    where_again = where[1:]
    refund_again = [
        _call("lookup_order", order_id="1234"),
        ["Order 1234 was refunded already (refund R-1234-1): 59.90 EUR is on its way back."],
    ]
    return ScriptedLlm(
        [
            *where,
            *refund,
            *where,
            *refund,
            *refund,
            *where,
            *where,
            *where_again,
            *refund,
            *refund_again,
        ],
        model="gemini-2.5-flash",
    )


def main() -> None:
    chosen = pick_model() if "--live" in sys.argv else scripted()
    inner: BaseLlm = LlmRegistry.resolve(chosen) if isinstance(chosen, str) else chosen
    TRAJECTORY.unlink(missing_ok=True)
    runner = InMemoryRunner(build(RecordingLlm(inner, TRAJECTORY)), app_name="support_desk")
    config = RunConfig(streaming_mode=StreamingMode.SSE, auto_create_session=True)

    def turn(session_id: str, message: types.Content | str) -> list[types.FunctionCall]:
        asks = []
        for event in runner.run(
            user_id="demo", session_id=session_id, new_message=message, run_config=config
        ):
            if not event.partial:
                print(f"{event.author}: {event.stringify_content()[:100]}")
            asks += [c for c in event.get_function_calls() if c.name == "adk_request_confirmation"]
        return asks

    def ask(session_id: str, question: str) -> None:
        for asked in turn(session_id, question):
            approve = types.FunctionResponse(
                id=asked.id, name="adk_request_confirmation", response={"confirmed": True}
            )
            content = types.Content(role="user", parts=[types.Part(function_response=approve)])
            turn(session_id, content)

    for session_id, questions in CONVERSATIONS:
        for question in questions:
            ask(session_id, question)
    print(f"wrote {TRAJECTORY}")


if __name__ == "__main__":
    main()
