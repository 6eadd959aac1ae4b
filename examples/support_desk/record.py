"""Re-records ``trajectory.jsonl``, the model traffic the offline support desk replays.

    python examples/support_desk/record.py          # from the script below, offline
    python examples/support_desk/record.py --live   # from the configured model (agent.py)

Runs two conversations through a Runner whose model is wrapped in ``RecordingLlm``, with
streaming on (so a replay streams too):

1. "Where is my order 1234?"
2. "Please refund order 1234, it arrived broken.", then the user approves the refund.
"""

from __future__ import annotations

import sys
from pathlib import Path

from google.genai import types

from adk_rx import BaseLlm, InMemoryRunner, LlmResponse, RunConfig, StreamingMode
from adk_rx.models.recording import RecordingLlm
from adk_rx.testing import ScriptedLlm

sys.path.insert(0, str(Path(__file__).parent))
from agent import TRAJECTORY, build, pick_model

WHERE = "Where is my order 1234?"
REFUND = "Please refund order 1234, it arrived broken."


def _call(name: str, **args: object) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def scripted() -> ScriptedLlm:
    """What a good model answers, call by call, in the order the conversations make them."""
    return ScriptedLlm(
        [
            _call("transfer_to_agent", agent_name="shipping"),
            _call("lookup_order", order_id="1234"),
            [
                "Order 1234 shipped with DHL ",
                "(tracking JD0146000032) ",
                "and should arrive on 3 December 2026.",
            ],
            _call("transfer_to_agent", agent_name="billing"),
            _call("lookup_order", order_id="1234"),
            _call("issue_refund", order_id="1234", amount_eur=59.9, reason="arrived broken"),
            ["I need your approval to refund 59.90 EUR for order 1234."],
            [
                "Done: 59.90 EUR for order 1234 is on its way back to your card ",
                "(refund R-1234-1). Sorry about the kettle!",
            ],
        ],
        model="gemini-2.5-flash",
    )


def main() -> None:
    inner: BaseLlm | str = pick_model() if "--live" in sys.argv else scripted()
    if isinstance(inner, str):
        from adk_rx import LlmRegistry

        inner = LlmRegistry.resolve(inner)
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

    turn("where", WHERE)
    for ask in turn("refund", REFUND):
        approve = types.FunctionResponse(
            id=ask.id, name="adk_request_confirmation", response={"confirmed": True}
        )
        turn("refund", types.Content(role="user", parts=[types.Part(function_response=approve)]))
    print(f"wrote {TRAJECTORY}")


if __name__ == "__main__":
    main()
