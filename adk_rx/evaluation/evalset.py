"""Eval sets in google-adk's ``*.evalset.json`` format, and eval cases made from sessions.

The shape (snake_case on disk; camelCase accepted on input, as google-adk does)::

    {"eval_set_id": "support", "name": "...", "eval_cases": [
      {"eval_id": "where_is_my_order",
       "conversation": [
         {"invocation_id": "e-1",
          "user_content": {"role": "user", "parts": [{"text": "Where is my order 1234?"}]},
          "final_response": {"role": "model", "parts": [{"text": "It shipped with DHL."}]},
          "intermediate_data": {
           "tool_uses": [{"name": "lookup_order", "args": {"order_id": "1234"}}],
           "tool_responses": [...], "intermediate_responses": []}}],
       "session_input": {"app_name": "support_desk", "user_id": "u", "state": {}}}]}

Every model here keeps the fields it does not know (``extra="allow"``), so an eval set
written by a newer google-adk survives a load and a save unchanged.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pydantic
from google.genai import types
from pydantic.alias_generators import to_camel

from adk_rx.errors import ConfigurationError
from adk_rx.evaluation.atomic_files import write_atomically
from adk_rx.evaluation.criteria import Rubric
from adk_rx.evaluation.intermediate import (
    AppDetails,
    IntermediateData,
    InvocationEvents,
    tool_calls,
)
from adk_rx.evaluation.recording import invocations_from_events
from adk_rx.evaluation.scenario import ConversationScenario
from adk_rx.sessions.session import Session

__all__ = [
    "ConversationScenario",
    "EvalCase",
    "EvalInvocation",
    "EvalSet",
    "IntermediateData",
    "Invocation",
    "SessionInput",
]


class _EvalModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow"
    )


class EvalInvocation(_EvalModel):
    """One turn of a conversation: the user's message and what the agent should answer.

    Attributes:
        invocation_id: the id of the recorded invocation (informational).
        user_content: the user's message.
        final_response: the expected final answer (None: no expectation).
        intermediate_data: the expected tool calls (None: no expectation), as
            :class:`IntermediateData` or as the recorded :class:`InvocationEvents`.
        creation_timestamp: when it was recorded.
        rubrics: rubrics that apply to this turn only.
        app_details: the agents' instructions and tools (filled in on actual turns).
    """

    invocation_id: str = ""
    user_content: types.Content
    final_response: types.Content | None = None
    intermediate_data: IntermediateData | InvocationEvents | None = None
    creation_timestamp: float = 0.0
    rubrics: list[Rubric] | None = None
    app_details: AppDetails | None = None

    def expected_tool_uses(self) -> list[types.FunctionCall]:
        """The tool calls of the turn (empty without intermediate data)."""
        return tool_calls(self.intermediate_data)


Invocation = EvalInvocation
"""google-adk's name for one turn, expected or actual."""


class SessionInput(_EvalModel):
    """How the session of a case starts.

    Attributes:
        app_name: the app the session belongs to.
        user_id: the user.
        state: the initial state.
    """

    app_name: str = ""
    user_id: str = "eval_user"
    state: dict[str, Any] = {}


class EvalCase(_EvalModel):
    """One conversation to replay against the agent, or a scenario a simulated user plays.

    Attributes:
        eval_id: the case's name, unique in its set.
        conversation: the turns, in order. A turn whose user content is a function response
            (an approval, a long-running call's result, a credential) answers the call the
            agent left pending in the turn before it.
        conversation_scenario: instead of ``conversation``: a starting prompt and a plan
            for a simulated user (see :mod:`adk_rx.evaluation.simulation`).
        session_input: the session's app, user and initial state.
        creation_timestamp: when it was made.
        rubrics: rubrics that apply to every turn.
        final_session_state: the state expected at the end (kept, not scored).
    """

    eval_id: str
    conversation: list[EvalInvocation] | None = None
    conversation_scenario: ConversationScenario | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    rubrics: list[Rubric] | None = None
    final_session_state: dict[str, Any] | None = None

    @pydantic.model_validator(mode="after")
    def _one_kind(self) -> EvalCase:
        if self.conversation is not None and self.conversation_scenario is not None:
            raise ValueError("a case has a conversation or a conversation_scenario, not both")
        if self.conversation is None and self.conversation_scenario is None:
            self.conversation = []
        return self

    @property
    def turns(self) -> list[EvalInvocation]:
        """The recorded turns (none for a scenario)."""
        return self.conversation or []

    @classmethod
    def from_session(cls, session: Session, eval_id: str | None = None) -> EvalCase:
        """A case that expects the agent to do again what it did in ``session``.

        One turn per invocation, as google-adk records one: its user content, the tool calls
        and responses the agents made, the texts they said on the way and the last final
        answer. A user message that answers a pending call (an approval, a long-running
        call's result) is a turn of its own, so the case replays the answer. The state the
        session started from is not known from its events, so the case starts from an empty
        state (set ``session_input.state`` to change that).
        """
        turns = [
            EvalInvocation(
                invocation_id=turn.invocation_id,
                user_content=turn.user_content,
                final_response=turn.final_response,
                intermediate_data=turn.intermediate_data,
                creation_timestamp=turn.creation_timestamp,
            )
            for turn in invocations_from_events(session.events, recorded=True)
        ]
        return cls(
            eval_id=eval_id or f"case_{session.id}",
            conversation=turns,
            session_input=SessionInput(app_name=session.app_name, user_id=session.user_id),
            creation_timestamp=time.time(),
        )


class EvalSet(_EvalModel):
    """A named list of eval cases; ``EvalSet.load(path)`` / ``eval_set.save(path)``.

    Attributes:
        eval_set_id: the set's id.
        name: a display name.
        description: what the set checks.
        eval_cases: the cases.
        creation_timestamp: when it was made.
    """

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase] = []
    creation_timestamp: float = 0.0

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalSet:
        """Reads an eval set file.

        Raises:
            ConfigurationError: the file is missing, not JSON, or not an eval set.
        """
        file = Path(path)
        try:
            return cls.model_validate_json(file.read_bytes())
        except OSError as exc:
            raise ConfigurationError(f"cannot read the eval set {file}: {exc}") from exc
        except pydantic.ValidationError as exc:
            raise ConfigurationError(f"{file} is not an eval set: {exc}") from exc

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Writes the set as indented JSON (snake_case keys, like google-adk); returns the path.

        The file is replaced in one rename (see :mod:`adk_rx.evaluation.atomic_files`): a
        crash while saving leaves the previous file whole.
        """
        file = Path(path)
        write_atomically(file, self.to_json() + "\n")
        return file

    def to_json(self) -> str:
        """The set's JSON text."""
        return json.dumps(_plain(self), indent=2, ensure_ascii=False)

    def add_case(self, case: EvalCase) -> EvalSet:
        """A copy with ``case`` added.

        Raises:
            ConfigurationError: a case with the same eval_id is already in the set.
        """
        if any(c.eval_id == case.eval_id for c in self.eval_cases):
            raise ConfigurationError(f"eval set {self.eval_set_id!r} already has {case.eval_id!r}")
        return self.model_copy(update={"eval_cases": [*self.eval_cases, case]})


_OURS = "adk_rx.evaluation."


def _plain(value: Any) -> Any:
    """JSON of an eval model: None fields left out unless they were given (so a set read from
    a file is written back as it was), fields this module does not know kept as read."""
    if isinstance(value, pydantic.BaseModel) and type(value).__module__.startswith(_OURS):
        out = {
            name: _plain(getattr(value, name))
            for name in type(value).model_fields
            if getattr(value, name) is not None or name in value.model_fields_set
        }
        out.update(value.model_extra or {})
        return out
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
