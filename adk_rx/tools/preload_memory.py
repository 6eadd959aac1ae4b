"""``preload_memory``: the memories most relevant to the user's message, in every request.

The model never calls it; before each model call the tool searches the memory service with
the text of the invocation's user message and, when something is found, inserts what it found
as a user content just before the latest user message (google-adk's request shape)::

    contents: [...history, <PAST_CONVERSATIONS> content, user message]

The content is request-scoped: it is not stored in the session, and it sits after the
history, so the system instruction and the earlier turns stay a stable prefix (what context
caching reuses). A search runs once per invocation; later model calls of the invocation reuse
its result. A failed search is logged and the request goes on without memories.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.rx._engine.sync import just
from adk_rx.tools.base import BaseTool

if TYPE_CHECKING:
    from adk_rx.context import ToolContext
    from adk_rx.memory.base import SearchMemoryResponse
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["PreloadMemoryTool", "memory_context", "preload_memory"]

_log = logging.getLogger("adk_rx.tools")

_REMEMBERED_INVOCATIONS = 256  # invocations whose search result is kept for their later steps


def memory_context(found: SearchMemoryResponse) -> str | None:
    """The text google-adk's preload_memory puts in the request, or None for no memories."""
    lines: list[str] = []
    for memory in found.memories:
        if memory.timestamp:
            lines.append(f"Time: {memory.timestamp}")
        text = " ".join(part.text for part in memory.content.parts or [] if part.text)
        if text:
            lines.append(f"{memory.author}: {text}" if memory.author else text)
    if not lines:
        return None
    joined = "\n".join(lines)
    return (
        "The following content is from your previous conversations with the user.\n"
        "They may be useful for answering the user's current query.\n"
        f"<PAST_CONVERSATIONS>\n{joined}\n</PAST_CONVERSATIONS>\n"
    )


def _insert_before_latest_user_turn(request: LlmRequest, content: types.Content) -> None:
    """Inserts ``content`` before the trailing user contents (after a function response)."""
    contents = request.contents
    index = len(contents)
    for i in range(len(contents) - 1, -1, -1):
        parts = contents[i].parts or []
        if contents[i].role != "user" or any(part.function_response for part in parts):
            index = i + 1
            break
        index = i
    contents.insert(index, content)


class PreloadMemoryTool(BaseTool):
    """Adds the memories relevant to the user's message to each model request.

    Put it in an agent's tools (``tools=[preload_memory]``); the Runner needs a
    ``memory_service``. Only the text of the memories is used.
    """

    def __init__(self) -> None:
        # Never declared to the model: the tool only changes the request.
        super().__init__(name="preload_memory", description="preload_memory")
        self._lock = threading.Lock()
        self._found: OrderedDict[str, str | None] = OrderedDict()

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Not for the model to call: it is never declared."""
        return rx.throw(ValueError("preload_memory runs before each model call, not as a call"))

    def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> Observable[None] | None:
        """Searches memory with the user's message and inserts what was found."""
        user = tool_context.user_content
        query = " ".join(p.text for p in (user.parts or []) if p.text) if user else ""
        if not query.strip():
            return None
        invocation = tool_context.invocation_id
        with self._lock:
            known = invocation in self._found
            text = self._found.get(invocation)
        if known:
            self._insert(llm_request, text)
            return None

        def found(response: SearchMemoryResponse) -> None:
            text = memory_context(response)
            with self._lock:
                self._found[invocation] = text
                while len(self._found) > _REMEMBERED_INVOCATIONS:
                    self._found.popitem(last=False)
            self._insert(llm_request, text)

        def failed(error: Exception, _: Any) -> Observable[Any]:
            _log.warning(
                "preload_memory: the memory search failed (query of %d characters): %s",
                len(query),
                error,
                exc_info=error,
            )
            return just(None)

        def search(_: Any) -> Observable[Any]:
            return tool_context.search_memory(query).pipe(ops.do_action(found))

        return rx.defer(search).pipe(ops.catch(failed), ops.ignore_elements())

    @staticmethod
    def _insert(request: LlmRequest, text: str | None) -> None:
        if text is not None:
            content = types.Content(role="user", parts=[types.Part(text=text)])
            _insert_before_latest_user_turn(request, content)


preload_memory = PreloadMemoryTool()
"""The shared instance to put in an agent's ``tools``."""
