"""Deduplicated calls: ``RunConfig(dedupe_tool_calls=True)`` answers a repeated call of an
idempotent tool from the earlier response instead of running the tool again.

A call repeats an earlier one when it names the same tool with the same arguments (compared as
canonical JSON) in the same invocation, and the tool says ``is_idempotent``; the earlier call
must have answered (a response that is not an error). The repeat is not run and costs no tool
call of the budget; its response event carries ``custom_metadata["deduplicated_from"]``: the
earlier call's id (a dict of call id -> earlier id when one event answers several repeats).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adk_rx.context import InvocationContext
    from adk_rx.flows.tool_call import Call

__all__ = ["DEDUPLICATED_KEY", "dedupe_metadata", "earlier_answer", "remember_answer"]

DEDUPLICATED_KEY = "deduplicated_from"


def _key(item: Call) -> tuple[str, str] | None:
    try:
        arguments = json.dumps(item.args, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):  # arguments JSON cannot hold: never deduplicated
        return None
    return (item.call.name or "", arguments)


def earlier_answer(ctx: InvocationContext, item: Call) -> Any | None:
    """The earlier response to the same call, marking ``item`` as its repeat; else None."""
    key = _key(item)
    found = None if key is None else ctx.shared.tool_answers.get(key)
    if found is None:
        return None
    item.deduplicated_from = found[0]
    return found[1]


def remember_answer(ctx: InvocationContext, item: Call, response: Any) -> None:
    """Keeps a call's response for repeats (not an error, not a pending long-running call)."""
    if not isinstance(response, dict) or "error" in response:
        return
    key = _key(item)
    if key is not None:
        ctx.shared.tool_answers.setdefault(key, (item.call.id or "", response))


def dedupe_metadata(items: list[Call]) -> dict[str, Any] | None:
    """The response event's ``custom_metadata`` entry for the repeats among ``items``."""
    repeats = {
        item.call.id or "": item.deduplicated_from for item in items if item.deduplicated_from
    }
    if not repeats:
        return None
    if len(repeats) == 1:
        return {DEDUPLICATED_KEY: next(iter(repeats.values()))}
    return {DEDUPLICATED_KEY: repeats}
