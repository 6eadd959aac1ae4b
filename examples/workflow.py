"""A workflow agent: draft, then a review loop that stops when the reviewer approves.

``SequentialAgent(writer, LoopAgent(reviewer, reviser))``: the writer drafts into
``state["draft"]`` (``output_key``); the loop's reviewer reads ``{draft}`` and either calls
``exit_loop`` (approved) or writes ``state["notes"]``, which the reviser uses to rewrite the
draft. Offline: each agent has its own ScriptedLlm.

Run: ``python examples/workflow.py``.
"""

from __future__ import annotations

from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, LlmResponse, LoopAgent, SequentialAgent
from adk_rx.testing import ScriptedLlm, simplify_events
from adk_rx.tools import exit_loop


def _call(name: str, **args: object) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def build() -> SequentialAgent:
    writer = LlmAgent(
        name="writer",
        model=ScriptedLlm(["Our kettle boils water."]),
        instruction="Write a one-line product blurb.",
        output_key="draft",
    )
    reviewer = LlmAgent(
        name="reviewer",
        model=ScriptedLlm(["Too plain: say how fast.", _call("exit_loop")]),
        instruction="Review this draft: {draft}. Call exit_loop when it is good.",
        tools=[exit_loop],
        output_key="notes",
    )
    reviser = LlmAgent(
        name="reviser",
        model=ScriptedLlm(["Our kettle boils water in 90 seconds."]),
        instruction="Rewrite {draft} following these notes: {notes?}",
        output_key="draft",
    )
    review = LoopAgent(name="review", sub_agents=[reviewer, reviser], max_iterations=3)
    return SequentialAgent(name="blurb", sub_agents=[writer, review])


def main() -> tuple[list[str], str]:
    runner = InMemoryRunner(agent=build())
    session = runner.session_service.create_session(app_name="blurb", user_id="u").run()
    events = list(runner.run(user_id="u", session_id=session.id, new_message="A kettle blurb."))
    stored = runner.session_service.get_session(
        app_name="blurb", user_id="u", session_id=session.id
    ).run()
    return simplify_events(events), stored.state["draft"]


if __name__ == "__main__":
    lines, draft = main()
    print("\n".join(lines))
    print(f"final draft: {draft}")
