"""What a delegated run sees, and what its caller does not (an LlmAgent's ``mode``).

A sub-agent in ``single_turn`` or ``task`` mode runs on its own branch,
``<caller branch>.<agent>@<call id>`` (google-adk 2.13's spelling), from the parent's call
on. Its conversation is private, both ways:

* the delegated agent sees its request (the first event of its branch) and what follows in
  its branch, plus the user's messages while the delegation is open (a task's chat); nothing
  of the conversation before, nothing of its caller;
* every other agent sees neither the delegated branch's events nor the user's messages while
  the delegation is open; the caller sees its call and, later, the call's response.

A workflow's fan-out branches (``<node>@<run number>``) are not delegations: their run part is
a number.
"""

from __future__ import annotations

from adk_rx.events import Event

__all__ = ["DelegatedView", "delegated_branch", "delegated_call"]


def delegated_branch(caller_branch: str | None, agent_name: str, call_id: str) -> str:
    """The branch of ``agent_name``'s delegated run for call ``call_id``."""
    segment = f"{agent_name}@{call_id}"
    return f"{caller_branch}.{segment}" if caller_branch else segment


def _segment_call(segment: str) -> str | None:
    _, at, call_id = segment.partition("@")
    return call_id if at and call_id and not call_id.isdigit() else None


def delegated_call(branch: str | None) -> str | None:
    """The call id of the delegation ``branch`` is the run of, or None."""
    if not branch or "@" not in branch:
        return None
    return _segment_call(branch.rsplit(".", 1)[-1])


def _delegation_in(branch: str) -> tuple[str, str] | None:
    """(branch up to the first delegated segment, its call id) of an event's branch."""
    prefix: list[str] = []
    for segment in branch.split("."):
        prefix.append(segment)
        call_id = _segment_call(segment)
        if call_id is not None:
            return ".".join(prefix), call_id
    return None


class DelegatedView:
    """Which events one viewer (an agent on ``branch``) may see, decided event by event in the
    session's order (the view keeps which delegations are open)."""

    __slots__ = ("_branch", "_inside", "_open", "_started")

    def __init__(self, branch: str | None) -> None:
        self._branch = branch
        self._inside = delegated_call(branch) is not None
        self._started = False
        self._open: set[str] = set()

    def visible(self, event: Event) -> bool:
        """Whether the viewer sees ``event`` (call for every event, in order)."""
        branch = event.branch
        if self._inside:
            mine = self._branch
            assert mine is not None
            within = branch is not None and (branch == mine or branch.startswith(mine + "."))
            if not self._started:
                self._started = within
                return within
            return within or (branch is None and event.author == "user")
        if branch and "@" in branch:
            found = _delegation_in(branch)
            if found is not None:
                prefix, call_id = found
                viewer = self._branch
                if not viewer or not (viewer == prefix or viewer.startswith(prefix + ".")):
                    self._open.add(call_id)
                    return False
        if self._open:
            if event.author == "user" and not branch and not event.get_function_responses():
                return False  # the user talks with a delegated agent
            for response in event.get_function_responses():
                self._open.discard(response.id or "")
        return True
