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
from adk_rx.events import Event
from adk_rx.sessions.session import Session

__all__ = ["EvalCase", "EvalInvocation", "EvalSet", "IntermediateData", "SessionInput"]

# The confirmation round trip is the runtime's, not a tool the agent chose.
_INTERNAL_CALLS = frozenset({"adk_request_confirmation"})


class _EvalModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow"
    )


class IntermediateData(_EvalModel):
    """What happened between the user's message and the final response.

    Attributes:
        tool_uses: the function calls the agents made, in order.
        tool_responses: their responses, in order.
        intermediate_responses: ``[author, parts]`` of texts agents said on the way.
    """

    tool_uses: list[types.FunctionCall] = []
    tool_responses: list[types.FunctionResponse] = []
    intermediate_responses: list[tuple[str, list[types.Part]]] = []


class EvalInvocation(_EvalModel):
    """One turn of a conversation: the user's message and what the agent should answer.

    Attributes:
        invocation_id: the id of the recorded invocation (informational).
        user_content: the user's message.
        final_response: the expected final answer (None: no expectation).
        intermediate_data: the expected tool calls (None: no expectation).
        creation_timestamp: when it was recorded.
    """

    invocation_id: str = ""
    user_content: types.Content
    final_response: types.Content | None = None
    intermediate_data: IntermediateData | None = None
    creation_timestamp: float = 0.0

    def expected_tool_uses(self) -> list[types.FunctionCall]:
        """The expected tool calls (empty without intermediate data)."""
        return list(self.intermediate_data.tool_uses) if self.intermediate_data else []


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
    """One conversation to replay against the agent.

    Attributes:
        eval_id: the case's name, unique in its set.
        conversation: the turns, in order.
        session_input: the session's app, user and initial state.
        creation_timestamp: when it was made.
    """

    eval_id: str
    conversation: list[EvalInvocation] = []
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0

    @classmethod
    def from_session(cls, session: Session, eval_id: str | None = None) -> EvalCase:
        """A case that expects the agent to do again what it did in ``session``.

        Each user message starts a turn; the turn expects the tool calls the agents made
        and the last final text an agent gave. The session's state before its first event
        is not known from the events, so the case starts from an empty state (set
        ``session_input.state`` to change that).
        """
        turns: list[EvalInvocation] = []
        current: dict[str, Any] | None = None
        for event in session.events:
            if event.author == "user" and _user_text_message(event):
                current = _new_turn(event)
                turns.append(EvalInvocation(**current))
                continue
            if not turns or event.partial:
                continue
            turns[-1] = _with_event(turns[-1], event)
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


def _plain(value: Any) -> Any:
    """JSON of an eval model: unset (None) fields left out, except fields this module does
    not know, which are written back exactly as they were read."""
    if isinstance(value, _EvalModel):
        out = {
            name: _plain(getattr(value, name))
            for name in type(value).model_fields
            if getattr(value, name) is not None
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


def _user_text_message(event: Event) -> bool:
    parts = event.content.parts if event.content else None
    return bool(parts) and not event.get_function_responses()


def _new_turn(event: Event) -> dict[str, Any]:
    assert event.content is not None
    return {
        "invocation_id": event.invocation_id,
        "user_content": event.content,
        "intermediate_data": IntermediateData(),
        "creation_timestamp": event.timestamp,
    }


def _with_event(turn: EvalInvocation, event: Event) -> EvalInvocation:
    data = turn.intermediate_data or IntermediateData()
    calls = [c for c in event.get_function_calls() if c.name not in _INTERNAL_CALLS]
    responses = [r for r in event.get_function_responses() if r.name not in _INTERNAL_CALLS]
    update: dict[str, Any] = {}
    if calls or responses:
        update["intermediate_data"] = data.model_copy(
            update={
                "tool_uses": [*data.tool_uses, *calls],
                "tool_responses": [*data.tool_responses, *responses],
            }
        )
    text = event.text()
    if text and event.author != "user" and event.is_final_response():
        if turn.final_response is not None and turn.final_response.parts:
            previous = "".join(p.text or "" for p in turn.final_response.parts)
            said = (event.author, [types.Part(text=previous)])
            data = update.get("intermediate_data", data)
            update["intermediate_data"] = data.model_copy(
                update={"intermediate_responses": [*data.intermediate_responses, said]}
            )
        update["final_response"] = types.Content(role="model", parts=[types.Part(text=text)])
    return turn.model_copy(update=update) if update else turn
