"""Model contents from session history, as one agent in one branch sees it.

* Events without visible content are skipped, and so are events of other branches (a
  branch sees its ancestors' events, never its siblings').
* The user's and the agent's own events keep their content; another agent's turn becomes
  a user-role ``For context:`` message, so the model does not take it for its own.
* Confirmation and credential requests and their answers (``adk_request_confirmation``,
  ``adk_request_credential``) are left out.
* A function response that arrives later than its call (long-running tools) is moved next
  to its call, merged with earlier responses to the same call.
* ``include_contents="none"`` keeps only the current turn.
* A delegated run (a sub-agent in ``single_turn`` or ``task`` mode) and its caller do not see
  each other's conversation (``delegated.py``).

Converted history is memoised on the session (shared by the views of one stored session),
so a turn on a long session converts only the events added since the previous turn.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from google.genai import types

from adk_rx.compaction.contents import apply_compactions
from adk_rx.events import CONFIRMATION_FUNCTION, PAUSE_FUNCTIONS, Event
from adk_rx.flows.delegated import DelegatedView
from adk_rx.sessions.rewind import live_events
from adk_rx.sessions.session import Session

__all__ = ["CONFIRMATION_FUNCTION", "build_contents", "is_in_branch"]


def is_in_branch(event_branch: str | None, branch: str | None) -> bool:
    """True when an event of ``event_branch`` is visible from ``branch``."""
    if not event_branch or not branch or event_branch == branch:
        return True
    return branch.startswith(event_branch + ".")


def _for_context(event: Event) -> types.Content:
    parts = [types.Part(text="For context:")]
    assert event.content is not None
    for part in event.content.parts or []:
        if part.thought:
            continue
        if part.text:
            parts.append(types.Part(text=f"[{event.author}] said: {part.text}"))
        elif part.function_call:
            call = part.function_call
            args = json.dumps(call.args or {}, default=str)
            parts.append(
                types.Part(
                    text=f"[{event.author}] called tool `{call.name}` with parameters: {args}"
                )
            )
        elif part.function_response:
            resp = part.function_response
            result = json.dumps(resp.response or {}, default=str)
            parts.append(
                types.Part(text=f"[{event.author}] `{resp.name}` tool returned result: {result}")
            )
        else:
            parts.append(part)
    return types.Content(role="user", parts=parts)


class _Converted:
    """Memo entry: the kept (event, content) pairs of the first ``count`` events."""

    __slots__ = ("compactions", "count", "last_id", "needs_pairing", "pairs", "view")

    def __init__(self) -> None:
        self.count = 0
        self.last_id: str | None = None
        self.pairs: list[tuple[Event, types.Content]] = []
        self.needs_pairing = False
        self.compactions: list[Event] = []
        self.view: DelegatedView | None = None  # made at the first delegated event

    def sees(self, event: Event, branch: str | None) -> bool:
        """False for an event of a delegation the viewer is not part of (or, inside one,
        for the conversation around it)."""
        view = self.view
        if view is None:
            if not (event.branch and "@" in event.branch) and not (branch and "@" in branch):
                return True  # no delegation so far: nothing to decide (the common case)
            view = self.view = DelegatedView(branch)
        return view.visible(event)


def _convert(event: Event, agent_name: str, branch: str | None) -> types.Content | None:
    # Visible, in the branch (as is_in_branch decides), not a confirmation: one pass over the
    # parts (once per event of a session).
    content = event.content
    if event.partial or content is None or not content.role or not content.parts:
        return None
    visible = False
    for part in content.parts:
        call, response = part.function_call, part.function_response
        if (call is not None and call.name in PAUSE_FUNCTIONS) or (
            response is not None and response.name in PAUSE_FUNCTIONS
        ):
            return None  # a confirmation or credential request, or its answer
        if visible or (part.thought and not (call or response)):
            continue
        visible = bool(
            part.text
            or part.inline_data
            or part.file_data
            or call
            or response
            or part.executable_code
            or part.code_execution_result
        )
    if not visible:
        return None
    event_branch = event.branch
    if (
        event_branch
        and branch
        and event_branch != branch
        and not branch.startswith(event_branch + ".")
    ):
        return None  # another branch's
    if event.author == agent_name or event.author == "user":
        return content
    return _for_context(event)


def _history(session: Session, agent_name: str, branch: str | None) -> _Converted:
    events = session.events
    key = ("contents", agent_name, branch)
    memo: _Converted | None = session._memo.get(key)
    if (
        memo is None
        or memo.count > len(events)
        or (memo.count and events[memo.count - 1].id != memo.last_id)
    ):
        memo = _Converted()
    fresh: Sequence[Event] = events[memo.count :]
    for event in fresh:  # (has_rewind, without a call per event)
        if event.actions.rewind_before_invocation_id:
            # A rewind drops earlier events: convert what still counts again.
            memo, fresh = _Converted(), live_events(events)
            break
    delegated = bool(branch and "@" in branch)
    for event in fresh:
        if event.actions.compaction is not None:
            memo.compactions.append(event)
            continue
        if (
            delegated or memo.view is not None or (event.branch and "@" in event.branch)
        ) and not memo.sees(event, branch):
            continue  # (asked only once a delegation is in sight: see _Converted.sees)
        content = _convert(event, agent_name, branch)
        if content is not None:
            for part in event.content.parts or ():  # pyright: ignore[reportOptionalMemberAccess]
                if part.function_response is not None:
                    if not _answers_previous(memo.pairs, event):
                        memo.needs_pairing = True
                    break
            memo.pairs.append((event, content))
    memo.count = len(events)
    memo.last_id = events[-1].id if events else None
    session._memo[key] = memo
    return memo


def _answers_own_call(pairs: list[tuple[Event, types.Content]], i: int, agent_name: str) -> bool:
    """A user's answer to the agent's own (long-running) calls: part of the agent's turn."""
    responses = pairs[i][0].get_function_responses()
    if not responses or i == 0 or pairs[i - 1][0].author != agent_name:
        return False
    call_ids = {c.id for c in pairs[i - 1][0].get_function_calls()}
    return all(r.id in call_ids for r in responses)


def _answers_previous(pairs: list[tuple[Event, types.Content]], event: Event) -> bool:
    if not pairs:
        return False
    # Loops rather than comprehensions: asked for every function response event.
    previous = pairs[-1][0].content
    call_ids: set[str | None] = set()
    for part in previous.parts or () if previous is not None else ():
        if part.function_call is not None:
            call_ids.add(part.function_call.id)
    for part in event.content.parts or () if event.content is not None else ():
        if part.function_response is not None and part.function_response.id not in call_ids:
            return False
    return True


def _pair_responses(pairs: list[tuple[Event, types.Content]]) -> list[types.Content]:
    """Moves each function response right after its call, merging repeated answers."""
    call_index: dict[str, int] = {}
    for i, (event, _) in enumerate(pairs):
        for call in event.get_function_calls():
            if call.id:
                call_index[call.id] = i
    # responses[i] = parts answering calls of pair i, latest answer per call id wins
    responses: dict[int, dict[str, types.Part]] = {}
    moved: set[int] = set()
    for i, (event, content) in enumerate(pairs):
        frs = event.get_function_responses()
        if not frs or content is not event.content:
            continue
        targets = {call_index.get(r.id or "") for r in frs}
        if len(targets) != 1 or None in targets:
            continue  # orphan or spread over several calls: keep where it is
        target = targets.pop()
        assert target is not None
        answered = responses.setdefault(target, {})
        for part in content.parts or []:
            if part.function_response is not None:
                answered[part.function_response.id or ""] = part
        moved.add(i)
    out: list[types.Content] = []
    for i, (_, content) in enumerate(pairs):
        if i in moved:
            continue
        out.append(content)
        if i in responses:
            out.append(types.Content(role="user", parts=list(responses[i].values())))
    return out


def _pull_latest_response(
    pairs: list[tuple[Event, types.Content]],
) -> list[tuple[Event, types.Content]] | None:
    """When the newest entry answers an older call, history ends at that call + the answer.

    Returns None when the newest entry is not such a late function response.
    """
    if len(pairs) < 2:
        return None
    last_event, last_content = pairs[-1]
    responses = last_event.get_function_responses()
    if (
        not responses
        or last_content is not last_event.content
        or _answers_previous(pairs[:-1], last_event)
    ):
        return None
    ids = {r.id for r in responses}
    for i in range(len(pairs) - 2, -1, -1):
        if ids & {c.id for c in pairs[i][0].get_function_calls()}:
            break
    else:
        return None  # an orphan response: leave the history as it is
    answers: dict[str, types.Part] = {}
    for event, content in pairs[i + 1 :]:
        if content is not event.content:
            continue
        for part in content.parts or []:
            response = part.function_response
            if response is not None and response.id in ids:
                answers[response.id or ""] = part
    merged = types.Content(role="user", parts=list(answers.values()))
    return [*pairs[: i + 1], (last_event, merged)]


def build_contents(
    session: Session, agent_name: str, branch: str | None, include_contents: str = "default"
) -> list[types.Content]:
    """The contents of the next model request for ``agent_name`` in ``branch``."""
    memo = _history(session, agent_name, branch)
    pairs = memo.pairs
    if memo.compactions:
        pairs = apply_compactions(pairs, memo.compactions)
    if include_contents == "none":
        start = 0
        for i in range(len(pairs) - 1, -1, -1):
            event = pairs[i][0]
            if event.author != agent_name and not _answers_own_call(pairs, i, agent_name):
                start = i
                break
        pairs = pairs[start:]
    if memo.needs_pairing:
        pulled = _pull_latest_response(pairs)
        if pulled is not None:
            head, (_, merged) = pulled[:-1], pulled[-1]
            return [*_pair_responses(head), merged]
        return _pair_responses(pairs)
    return [content for _, content in pairs]
