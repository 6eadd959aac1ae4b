"""Structured output: the agent's final answer is JSON of a pydantic model, validated.

``LlmAgent(output_schema=Ticket, output_key="ticket")``: every request carries the JSON
schema (``response_mime_type="application/json"``), the final text is validated against
``Ticket`` and ``state["ticket"]`` keeps the validated value. A model that answers with
invalid JSON is sent the validation error once and asked again. Offline: a ScriptedLlm
plays a model that gets it wrong once, then right.

Run: ``python examples/structured_output.py``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from adk_rx import InMemoryRunner, LlmAgent
from adk_rx.testing import ScriptedLlm


class Ticket(BaseModel):
    """A support ticket triaged from a customer's message."""

    category: Literal["billing", "shipping", "other"]
    priority: int
    summary: str


def main() -> dict[str, object]:
    llm = ScriptedLlm(
        [
            '{"category": "billing", "priority": "high"}',  # invalid: sent back once
            '{"category": "billing", "priority": 1, "summary": "Charged twice for 1234"}',
        ]
    )
    agent = LlmAgent(
        name="triage",
        model=llm,
        instruction="Triage the customer's message into a ticket.",
        output_schema=Ticket,
        output_key="ticket",
    )
    runner = InMemoryRunner(agent=agent)
    session = runner.session_service.create_session(app_name="triage", user_id="u").run()
    for _ in runner.run(user_id="u", session_id=session.id, new_message="I was charged twice!"):
        pass
    stored = runner.session_service.get_session(
        app_name="triage", user_id="u", session_id=session.id
    ).run()
    ticket = Ticket.model_validate(stored.state["ticket"])
    first = llm.requests[0].config
    return {
        "mime type sent": first.response_mime_type,
        "model calls": len(llm.requests),
        "ticket": ticket,
    }


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key}: {value!r}")
