"""A resumable app with compaction: pause for an approval, resume the same invocation later.

Runs offline (scripted models): ``python examples/durable_app.py``.
"""

from __future__ import annotations

from google.genai import types

from adk_rx import (
    App,
    EventsCompactionConfig,
    LlmAgent,
    LongRunningFunctionTool,
    ResumabilityConfig,
    Runner,
    SequentialAgent,
    SqlSessionService,
)
from adk_rx.models import LlmRequest, LlmResponse
from adk_rx.testing import ScriptedLlm


def ask_manager(amount: int) -> None:
    """Asks a manager to approve a refund; the answer comes later."""


def refund_call(amount: int) -> LlmResponse:
    call = types.FunctionCall(id="approval-1", name="ask_manager", args={"amount": amount})
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def approver(request: LlmRequest) -> LlmResponse | str:
    """Asks the manager, or reports the manager's answer once it is in the request.

    It reads the request rather than counting calls, so a session resumed in another process
    (``adk-rx run examples/durable_app.py --session-id ...``) gets the answer, not a new ask.
    """
    last = request.contents[-1].parts or [] if request.contents else []
    answers = [p.function_response for p in last if p.function_response]
    if not answers:
        return refund_call(40)
    approved = (answers[0].response or {}).get("approved")
    return "Approved: refunding 40 EUR." if approved else "Not approved: no refund."


app = App(
    name="refunds",
    root_agent=SequentialAgent(
        name="refund_flow",
        sub_agents=[
            LlmAgent(name="check", model=ScriptedLlm(["Order 1234 qualifies for a refund."])),
            LlmAgent(
                name="approve",
                model=ScriptedLlm([approver, approver]),
                tools=[LongRunningFunctionTool(ask_manager)],
            ),
            LlmAgent(name="notify", model=ScriptedLlm(["Customer notified."])),
        ],
    ),
    resumability_config=ResumabilityConfig(is_resumable=True),
    events_compaction_config=EventsCompactionConfig(compaction_interval=10, overlap_size=1),
)


def main(url: str = "sqlite:///:memory:") -> list[str]:
    sessions = SqlSessionService(url)
    runner = Runner(app=app, session_service=sessions)
    sessions.create_session(app_name="refunds", user_id="ada", session_id="s1").run()
    said: list[str] = []

    # The first run stops at the pending approval: "notify" does not start.
    first = list(runner.run(user_id="ada", session_id="s1", new_message="Refund order 1234"))
    said += [f"{e.author}: {e.text()}" for e in first if e.text()]
    paused = first[0].invocation_id

    # Later (another process would do the same with the same database): the manager's
    # answer resumes that invocation; "check" does not run again.
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id="approval-1", name="ask_manager", response={"approved": True}
                )
            )
        ],
    )
    resumed = runner.run(user_id="ada", session_id="s1", new_message=answer, invocation_id=paused)
    said += [f"{e.author}: {e.text()}" for e in resumed if e.text()]

    # Deleting the session through the Runner deletes its artifacts and memories too.
    runner.delete_session(user_id="ada", session_id="s1").run()
    sessions.close()
    return said


if __name__ == "__main__":
    for line in main():
        print(line)
