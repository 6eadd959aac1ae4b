"""Cases whose turns answer the agent: an approval, a long-running call's result, a credential.

A session recorded with such an answer becomes a case whose answer is a turn of its own; the
replay sends the answer to the call this run made (its id is new), so the case passes.
"""

from __future__ import annotations

from typing import Any

from google.genai import types

from adk_rx import Event, FunctionTool, InMemoryRunner, LlmAgent, LlmRequest, LlmResponse
from adk_rx.evaluation import EvalCase, EvalSet, evaluate
from adk_rx.evaluation.replay import answering_this_run
from adk_rx.testing import ScriptedLlm
from adk_rx.tools.long_running import LongRunningFunctionTool
from tests.tool_harness import call, calls, user_response

deleted: list[str] = []


def delete_file(path: str) -> dict[str, Any]:
    """Deletes a file."""
    deleted.append(path)
    return {"deleted": path}


def ask_manager(amount: int) -> None:
    """Asks a manager to approve a refund; the answer comes later."""
    return None


def _files_model(request: LlmRequest) -> LlmResponse:
    part = (request.contents[-1].parts or [types.Part()])[0]
    if part.function_response is not None:
        body = part.function_response.response or {}
        if "deleted" in body:
            return LlmResponse.text(f"Deleted {body['deleted']}.")
        if "approved" in body:
            return LlmResponse.text("The refund is approved." if body["approved"] else "Refused.")
        return LlmResponse.text("Waiting for your approval.")
    text = part.text or ""
    if text.startswith("delete "):
        return calls(call("delete_file", {"path": text.removeprefix("delete ")}))
    if text.startswith("refund "):
        return calls(call("ask_manager", {"amount": int(text.removeprefix("refund "))}))
    return LlmResponse.text("Hello.")


def files_agent() -> LlmAgent:
    return LlmAgent(
        name="files",
        model=ScriptedLlm([_files_model] * 50),
        tools=[
            FunctionTool(delete_file, require_confirmation=True),
            LongRunningFunctionTool(ask_manager),
        ],
    )


def _pending(events: list[Event], name: str) -> str:
    found = [c.id for e in events for c in e.get_function_calls() if c.name == name]
    assert found and found[-1]
    return found[-1]


def _recorded_session(first: str, answer_to: str, answer: dict[str, Any]) -> Any:
    runner = InMemoryRunner(agent=files_agent(), app_name="files")
    session = runner.session_service.create_session(app_name="files", user_id="u").run()
    message = types.Content(role="user", parts=[types.Part(text=first)])
    events = list(runner.run(user_id="u", session_id=session.id, new_message=message))
    reply = user_response(_pending(events, answer_to), answer_to, answer)
    list(runner.run(user_id="u", session_id=session.id, new_message=reply))
    return runner.session_service.get_session(
        app_name="files", user_id="u", session_id=session.id
    ).run()


def test_a_case_recorded_with_an_approval_replays_the_approval_and_passes() -> None:
    session = _recorded_session("delete a.txt", "adk_request_confirmation", {"confirmed": True})
    deleted.clear()

    case = EvalCase.from_session(session, eval_id="approved_delete")
    result = evaluate(files_agent(), EvalSet(eval_set_id="files", eval_cases=[case]))

    asked, answered = case.conversation or []
    assert [c.name for c in asked.expected_tool_uses()] == ["delete_file"]
    assert answered.user_content.parts[0].function_response.name == "adk_request_confirmation"  # type: ignore[index,union-attr]
    assert result.passed, result.cases[0]
    assert result.cases[0].scores == {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0}
    assert result.cases[0].turns[1].actual_response == "Deleted a.txt."
    assert deleted == ["a.txt"]  # the replayed approval ran the tool


def test_a_case_recorded_with_a_long_running_result_replays_the_result_and_passes() -> None:
    session = _recorded_session("refund 50", "ask_manager", {"approved": True})

    case = EvalCase.from_session(session, eval_id="refund")
    result = evaluate(files_agent(), EvalSet(eval_set_id="files", eval_cases=[case]))

    assert result.passed, result.cases[0]
    assert [t.actual_response for t in result.cases[0].turns][-1] == "The refund is approved."


def test_an_answer_gets_the_id_of_the_call_this_run_left_pending() -> None:
    run = [
        Event(author="user", invocation_id="e-1", content=types.Content(role="user", parts=[])),
        Event(
            author="root",
            invocation_id="e-1",
            content=types.Content(
                role="model",
                parts=[
                    call("adk_request_credential", {"authConfig": {}}, "new-cred"),
                    call("lookup", {}, "answered"),
                ],
            ),
        ),
        Event(
            author="root",
            invocation_id="e-1",
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id="answered", name="lookup", response={}
                        )
                    )
                ],
            ),
        ),
    ]
    recorded = user_response("old-cred", "adk_request_credential", {"authConfig": {"token": "t"}})
    unrelated = user_response("old-x", "no_such_call", {})

    sent = answering_this_run(recorded, run)

    response = sent.parts[0].function_response  # type: ignore[index]
    assert response is not None and response.id == "new-cred"
    assert response.response == {"authConfig": {"token": "t"}}
    assert answering_this_run(unrelated, run) == unrelated  # nothing to answer: sent as it is
