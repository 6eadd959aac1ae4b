"""``load_memory(query)``: lets the model search the user's long-term memory.

    load_memory({"query": "name"})  --search_memory--> {"memories": [{content, author, timestamp}]}|

The tool also tells the model, in the system instruction, that it has a memory to search.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.tools.base import BaseTool

if TYPE_CHECKING:
    from adk_rx.context import ToolContext
    from adk_rx.memory.base import MemoryEntry, SearchMemoryResponse
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["MEMORY_INSTRUCTION", "LoadMemoryTool", "load_memory"]

MEMORY_INSTRUCTION = (
    "You have memory. You can use it to answer questions. If any questions need you to look "
    "up the memory, you should call load_memory function with a query."
)
"""Added to the system instruction of an agent that has the tool."""


def _entry(entry: MemoryEntry) -> dict[str, Any]:
    found: dict[str, Any] = {
        "content": entry.content.model_dump(mode="json", exclude_none=True),
        "author": entry.author,
        "timestamp": entry.timestamp,
    }
    if entry.score is not None:  # a ranking service's similarity, most similar first
        found["score"] = round(entry.score, 4)
    return found


def _response(found: SearchMemoryResponse) -> dict[str, Any]:
    return {"memories": [_entry(entry) for entry in found.memories]}


class LoadMemoryTool(BaseTool):
    """Searches the memory service of the run (``Runner(memory_service=...)``).

    The response is ``{"memories": [...]}``, each entry a dict with the remembered
    ``content`` (a Content as JSON), its ``author`` and ``timestamp``, in the order the
    service ranks them; a ranking service (:class:`~adk_rx.memory.VectorMemoryService`) adds
    each entry's ``score``.
    """

    def __init__(self) -> None:
        super().__init__(
            name="load_memory",
            description="Loads the memory for the current user.",
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look up in memory"}
                },
                "required": ["query"],
            },
        )

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Emits ``{"memories": [...]}`` for ``args["query"]``."""

        def search(_: Any) -> Observable[Any]:
            query = args.get("query")
            if not isinstance(query, str):
                raise ValueError("load_memory needs a string argument 'query'")
            return tool_context.search_memory(query).pipe(ops.map(_response))

        return rx.defer(search)

    def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> Observable[None] | None:
        """Declares the tool and tells the model it has memory."""
        super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        llm_request.append_instructions([MEMORY_INSTRUCTION])
        return None


load_memory = LoadMemoryTool()
"""Lets the model search the memory of earlier sessions of the user."""
