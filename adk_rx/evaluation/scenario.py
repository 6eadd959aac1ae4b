"""``ConversationScenario``: what a simulated user wants, in google-adk's shape.

.. code-block:: json

    {"eval_id": "book_a_flight",
     "conversation_scenario": {
       "starting_prompt": "I need to book a flight.",
       "conversation_plan": "You want a one-way flight from SFO to LAX next Tuesday morning,
          under $150. Confirm the booking when the agent finds one."},
     "session_input": {"app_name": "travel", "user_id": "u"}}

The starting prompt is the first user message; every later one comes from the simulated user
(:mod:`adk_rx.evaluation.simulation`), which follows the plan until it says it is done.
"""

from __future__ import annotations

from typing import Any

import pydantic
from pydantic.alias_generators import to_camel

__all__ = ["ConversationScenario"]


class ConversationScenario(pydantic.BaseModel):
    """A starting prompt and the plan the simulated user follows.

    Attributes:
        starting_prompt: the first user message, sent as it is.
        conversation_plan: what the user wants, in order, and how to react.
        user_persona: a persona (an object with ``description`` and ``behaviors``, or the id
            of one of google-adk's pre-built personas); its description is added to the
            simulated user's instructions.
    """

    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow"
    )

    starting_prompt: str
    conversation_plan: str
    user_persona: dict[str, Any] | str | None = None

    def persona_text(self) -> str:
        """The persona's description and behaviours as plain text ('' without one)."""
        persona = self.user_persona
        if persona is None:
            return ""
        if isinstance(persona, str):
            return f"Persona: {persona}"
        lines = [str(persona.get("description") or persona.get("id") or "")]
        for behavior in persona.get("behaviors") or []:
            if isinstance(behavior, dict):
                lines.append(f"- {behavior.get('description', '')}")
        return "\n".join(line for line in lines if line)
