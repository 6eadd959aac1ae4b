"""The function calls of a session that may still be answered, and the check of an answer.

A model provider pairs every tool result with the call it answers: OpenAI and every
OpenAI-compatible server reject a ``tool`` message whose ``tool_call_id`` no earlier
``tool_calls`` entry carries. A user message with a function response that answers nothing
would be stored, and then every later turn of the session would fail at the model. So a
function response from the user is taken only when it answers an *open* call of the session:

* a stored function call with no stored response yet: a call a crash left unanswered, a
  call of the user's own message;
* a confirmation or credential request (``adk_request_confirmation``,
  ``adk_request_credential``) not yet answered: answering it twice
  would run the confirmed tool twice;
* a long-running call (listed in its event's ``long_running_tool_ids``, other than a
  confirmation request), answered or not: such a tool reports progress in several answers
  (``{"status": "pending"}``, then ``"approved"``, then ``"paid"``).

A call the same message carries may be answered by it too. The calls are found in one pass
over the history, memoised on the session (shared by the views of one stored session), so a
turn looks only at the events added since the previous one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from google.genai import types

from adk_rx.errors import ConfigurationError
from adk_rx.events import PAUSE_FUNCTIONS, Event
from adk_rx.sessions.session import Session

__all__ = ["OpenCall", "check_answers", "open_calls"]

_MEMO_KEY = ("adk_rx.open_calls",)
_SHOWN = 5  # open calls listed in a refusal


@dataclass(frozen=True, slots=True)
class OpenCall:
    """A stored function call that may still be answered.

    Attributes:
        call: the function call as stored.
        event: the stored event that carries it (its author, branch and invocation id).
    """

    call: types.FunctionCall
    event: Event

    @property
    def is_long_running(self) -> bool:
        """True for a call that waits for its answer on purpose (a long-running tool or a
        confirmation request)."""
        return self.call.id in (self.event.long_running_tool_ids or ())

    @property
    def takes_updates(self) -> bool:
        """True when the call stays open after an answer (a long-running tool's progress)."""
        return self.is_long_running and self.call.name not in PAUSE_FUNCTIONS


@dataclass(frozen=True, slots=True)
class _Scan:
    """What a scan of the first ``count`` events found (shared by views of one session)."""

    count: int
    last_id: str | None
    open: dict[str, OpenCall]


_NO_CALLS: Mapping[str, OpenCall] = MappingProxyType({})
_NO_SCAN = _Scan(0, None, {})


def open_calls(session: Session) -> Mapping[str, OpenCall]:
    """The session's open calls by id, in the order they were stored (do not modify)."""
    events = session.events
    count = len(events)
    if not count:  # a new session: nothing to scan, nothing to remember
        return _NO_CALLS
    memo: _Scan | None = session._memo.get(_MEMO_KEY)
    if (
        memo is None
        or memo.count > count
        or (memo.count and events[memo.count - 1].id != memo.last_id)
    ):
        memo = _NO_SCAN
    if memo.count == count:
        return memo.open
    found = dict(memo.open)  # the memo is shared: never change a published dict
    for event in events[memo.count :]:
        _track(found, event)
    session._memo[_MEMO_KEY] = _Scan(count, events[-1].id, found)
    return found


def _track(found: dict[str, OpenCall], event: Event) -> None:
    content = event.content
    if event.partial or content is None or not content.parts:
        return
    for part in content.parts:
        call = part.function_call
        if call is not None and call.id:
            found[call.id] = OpenCall(call, event)
        response = part.function_response
        if response is not None and response.id:
            answered = found.get(response.id)
            if answered is not None and not answered.takes_updates:
                del found[response.id]


def check_answers(session: Session, message: types.Content) -> None:
    """Refuses a user message whose function responses do not each answer an open call.

    Raises:
        ConfigurationError: a response without an id, for a call the session does not hold,
            for a call already answered, or naming another function than its call.
    """
    parts = message.parts or ()
    responses = [p.function_response for p in parts if p.function_response is not None]
    if not responses:
        return
    found = open_calls(session)
    own = {p.function_call.id: p.function_call for p in parts if p.function_call is not None}
    answered: set[str] = set()
    for response in responses:
        call_id = response.id
        if not call_id:
            raise ConfigurationError(
                f"the function response {response.name!r} has no id; a response answers a "
                f"call by its id ({_listed(found)})"
            )
        stored = found.get(call_id)
        call = own.get(call_id) or (stored.call if stored is not None else None)
        once = stored is None or not stored.takes_updates
        if call is None or (once and call_id in answered):
            raise ConfigurationError(
                f"the function response {response.name!r} answers no open call of session "
                f"{session.id!r}: call {call_id!r} {_why(session, call_id, answered)} "
                f"({_listed(found)})"
            )
        if response.name and call.name and response.name != call.name:
            raise ConfigurationError(
                f"the function response {response.name!r} answers call {call_id!r}, a call "
                f"of {call.name!r}; give the response the name of its call"
            )
        answered.add(call_id)


def _why(session: Session, call_id: str, answered: set[str]) -> str:
    # Only on a refusal: look for the call in the history to say what is wrong with it.
    if call_id in answered:
        return "is answered twice in this message"
    for event in session.events:
        if any(call.id == call_id for call in event.get_function_calls()):
            return "already has its response"
    return "is not in the session"


def _listed(found: Mapping[str, OpenCall]) -> str:
    if not found:
        return "the session has no open call"
    shown = [f"{i!r} ({c.call.name})" for i, c in list(found.items())[-_SHOWN:]]
    more = f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    return f"open calls: {', '.join(shown)}{more}"
