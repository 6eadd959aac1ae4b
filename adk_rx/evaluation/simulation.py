"""A simulated user on any model, for cases given as a :class:`ConversationScenario`.

As google-adk 2.13's ``LlmBackedUserSimulator``: the scenario's starting prompt is the first
message; after each agent turn the simulator's model gets google-adk's instructions with the
plan and the conversation so far (texts only, or with tool calls when
``include_function_calls``) and writes the user's next message. The conversation ends when
the model says the stop signal (``</finished>``) or after ``max_allowed_invocations`` user
messages (the starting prompt counts; -1 is no limit). An empty answer is an error.

``custom_instructions`` may replace the instructions; it must use the placeholders
``{{ stop_signal }}``, ``{{ conversation_plan }}`` and ``{{ conversation_history }}``
(and ``{{ persona }}`` for a persona's description).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import pydantic
import reactivex as rx
from google.genai import types
from pydantic.alias_generators import to_camel
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.errors import AdkRxError
from adk_rx.evaluation.prompts.user_simulator import PROMPT
from adk_rx.evaluation.scenario import ConversationScenario
from adk_rx.events import Event
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.registry import LlmRegistry

__all__ = ["STOP_SIGNAL", "LlmBackedUserSimulator", "LlmBackedUserSimulatorConfig"]

STOP_SIGNAL = "</finished>"
_PLACEHOLDER = re.compile(r"{{\s*(\w+)\s*}}")
_REQUIRED = ("stop_signal", "conversation_plan", "conversation_history")


class LlmBackedUserSimulatorConfig(pydantic.BaseModel):
    """google-adk's ``user_simulator_config`` of an eval config (``"type": "llm_backed"``).

    Attributes:
        model: the simulated user's model: a name (through ``LlmRegistry``) or a model.
        model_configuration: its request config.
        max_allowed_invocations: user messages at most, the starting prompt included (-1: no
            limit).
        custom_instructions: instructions that replace google-adk's.
        include_function_calls: show the agent's tool calls and results to the user model.
    """

    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", arbitrary_types_allowed=True
    )

    type: Literal["llm_backed"] = "llm_backed"
    model: str | BaseLlm = "gemini-2.5-flash"
    model_configuration: types.GenerateContentConfig = pydantic.Field(
        default_factory=lambda: types.GenerateContentConfig(
            thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=10240)
        )
    )
    max_allowed_invocations: int = 20
    custom_instructions: str | None = None
    include_function_calls: bool = False

    @pydantic.field_validator("custom_instructions")
    @classmethod
    def _has_placeholders(cls, value: str | None) -> str | None:
        if value is not None:
            found = set(_PLACEHOLDER.findall(value))
            missing = [name for name in _REQUIRED if name not in found]
            if missing:
                raise ValueError(
                    "custom_instructions must contain "
                    + ", ".join("{{ %s }}" % name for name in missing)  # noqa: UP031
                )
        return value


def _render(template: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


class LlmBackedUserSimulator:
    """The user of one scenario; :meth:`next_message` writes the next message, or None."""

    def __init__(
        self, config: LlmBackedUserSimulatorConfig, scenario: ConversationScenario
    ) -> None:
        self.config = config
        self.scenario = scenario
        self.sent = 0

    def _llm(self) -> BaseLlm:
        model = self.config.model
        return model if isinstance(model, BaseLlm) else LlmRegistry.resolve(model)

    def history(self, events: Sequence[Event]) -> str:
        """The conversation as the simulated user reads it."""
        lines: list[str] = []
        for event in events:
            for part in (event.content.parts if event.content else None) or []:
                if part.text and not part.thought:
                    lines.append(f"{event.author}: {part.text}")
                elif self.config.include_function_calls and part.function_call:
                    call = part.function_call
                    lines.append(f"{event.author} called tool '{call.name}' with args: {call.args}")
                elif self.config.include_function_calls and part.function_response:
                    response = part.function_response
                    lines.append(f"Tool '{response.name}' returned: {response.response}")
        return "\n\n".join(lines)

    def next_message(self, events: Sequence[Event]) -> Observable[types.Content | None]:
        """The next user message (the starting prompt first), or None when the user is done.

        Raises (in the stream):
            AdkRxError: the model answered nothing usable.
        """

        def start(_: object) -> Observable[types.Content | None]:
            limit = self.config.max_allowed_invocations
            if 0 <= limit <= self.sent:
                return rx.just(None)
            if self.sent == 0:
                self.sent = 1
                return rx.just(_user(self.scenario.starting_prompt))
            return self._ask(events)

        return rx.defer(start)

    def _ask(self, events: Sequence[Event]) -> Observable[types.Content | None]:
        persona = self.scenario.persona_text()
        plan = self.scenario.conversation_plan
        values = {
            "stop_signal": STOP_SIGNAL,
            "conversation_plan": f"{persona}\n\n{plan}" if persona else plan,
            "conversation_history": self.history(events),
            "persona": persona,
        }
        prompt = _render(self.config.custom_instructions or PROMPT, values)
        llm = self._llm()
        request = LlmRequest(
            model=llm.model,
            contents=[_user(prompt)],
            config=self.config.model_configuration.model_copy(deep=True),
        )

        def read(responses: list[LlmResponse]) -> types.Content | None:
            self.sent += 1
            failed = next((r for r in responses if r.error_code), None)
            text = "" if failed else "".join(r.get_text() for r in responses)
            if STOP_SIGNAL.lower() in text.lower():
                return None
            if not text:
                why = f"the model answered an error ({failed.error_code})" if failed else "empty"
                raise AdkRxError(f"the simulated user wrote no message: {why}")
            return _user(text)

        return llm.generate_content(request, stream=False).pipe(
            ops.filter(lambda r: not r.partial), ops.to_list(), ops.map(read)
        )


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])
