"""Quickstart: an LlmAgent with a tool, run offline on a scripted model.

    python examples/quickstart.py

Prints every event the Runner emits (each one is already stored in the session), then the
stored session. Swap ``ScriptedLlm`` for ``model="gemini-2.0-flash"`` (with GOOGLE_API_KEY
set) to talk to a real model.
"""

from __future__ import annotations

from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, LlmResponse
from adk_rx.testing import ScriptedLlm, simplify_events


def get_weather(city: str) -> dict[str, str]:
    """Returns the current weather in a city.

    Args:
        city: the city's name, e.g. "Paris".
    """
    return {"city": city, "sky": "sunny", "celsius": "21"}


def main() -> None:
    call = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))
    model = ScriptedLlm(
        [
            LlmResponse(content=types.Content(role="model", parts=[call])),
            "It is sunny in Paris, 21 degrees.",
        ]
    )
    agent = LlmAgent(
        name="weather_agent",
        model=model,
        instruction="You answer weather questions for {user:name?}. Use the tools.",
        tools=[get_weather],
        output_key="last_answer",
    )
    runner = InMemoryRunner(agent=agent, app_name="quickstart")
    session = runner.session_service.create_session(
        app_name="quickstart", user_id="ada", state={"user:name": "Ada"}
    ).run()

    print("events:")
    for event in runner.run(
        user_id="ada", session_id=session.id, new_message="What's the weather in Paris?"
    ):
        print("  ", simplify_events([event])[0])

    stored = runner.session_service.get_session(
        app_name="quickstart", user_id="ada", session_id=session.id
    ).run()
    print("stored session:")
    for line in simplify_events(stored.events):
        print("  ", line)
    print("state:", stored.state)


if __name__ == "__main__":
    main()
