"""Testing an agent folder with a scripted model: the support desk, offline, in milliseconds.

Run it with ``python -m pytest examples/testing``. Each test builds a copy of the real agent
tree whose agents call a ScriptedLlm (``with_model``), runs turns through an InMemoryRunner,
and checks the events, the tool calls and the state, the way a user meets them.
"""

from __future__ import annotations

from google.genai import types

from adk_rx import InMemoryRunner, LlmResponse
from adk_rx.testing import ScriptedLlm, simplify_events, with_model
from examples.support_desk.agent import root_agent  # your package: from my_app.agent import ...


def call(name: str, **args: object) -> LlmResponse:
    """A model response that calls one tool."""
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def run_turn(runner: InMemoryRunner, session_id: str, message: str | types.Content) -> list:
    return list(runner.run(user_id="ada", session_id=session_id, new_message=message))


def test_an_order_question_is_routed_to_shipping_which_looks_the_order_up() -> None:
    llm = ScriptedLlm(
        [
            call("transfer_to_agent", agent_name="shipping"),  # support_root routes
            call("lookup_order", order_id="1234"),  # shipping looks it up
            "Order 1234 shipped with DHL.",  # and answers
        ]
    )
    runner = InMemoryRunner(agent=with_model(root_agent, llm), app_name="support_desk")
    session = runner.session_service.create_session(app_name="support_desk", user_id="ada").run()

    events = run_turn(runner, session.id, "Where is my order 1234?")

    assert simplify_events(events)[-1] == "shipping: Order 1234 shipped with DHL."
    (lookup,) = [r for e in events for r in e.get_function_responses() if r.name == "lookup_order"]
    assert lookup.response["carrier"] == "DHL"
    stored = runner.session_service.get_session(
        app_name="support_desk", user_id="ada", session_id=session.id
    ).run()
    assert stored.state["last_order_id"] == "1234"
    assert stored.state["shipping_answer"] == "Order 1234 shipped with DHL."
    # What the model was asked: the router saw the user's words first.
    assert llm.requests[0].contents[-1].parts[0].text == "Where is my order 1234?"


def test_a_refund_waits_for_the_users_approval_then_runs() -> None:
    llm = ScriptedLlm(
        [
            call("transfer_to_agent", agent_name="billing"),
            call("issue_refund", order_id="1234", amount_eur=59.9, reason="broken"),
            "Please approve the refund.",  # the tool asked for a confirmation
            "Refunded 59.90 EUR.",  # after the approval, the tool ran
        ]
    )
    runner = InMemoryRunner(agent=with_model(root_agent, llm), app_name="support_desk")
    session = runner.session_service.create_session(app_name="support_desk", user_id="ada").run()

    events = run_turn(runner, session.id, "Refund order 1234, it arrived broken.")
    (request,) = [c for e in events for c in e.get_function_calls()
                  if c.name == "adk_request_confirmation"]  # fmt: skip
    approval = types.Part(
        function_response=types.FunctionResponse(
            id=request.id, name="adk_request_confirmation", response={"confirmed": True}
        )
    )
    events = run_turn(runner, session.id, types.Content(role="user", parts=[approval]))

    (refund,) = [r for e in events for r in e.get_function_responses() if r.name == "issue_refund"]
    assert refund.response["status"] == "refunded"
    assert simplify_events(events)[-1] == "billing: Refunded 59.90 EUR."
