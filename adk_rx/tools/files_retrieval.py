"""FilesRetrieval: the model searches a folder of text and markdown files (RAG, offline).

    files_search({"query": "refund policy"})
        --refresh the index--nearest passages--> {"results": [{source, text, score}, ...]}|

google-adk's ``FilesRetrieval`` indexes a folder through LlamaIndex and a Gemini embedding
model; this one keeps the passages in a :class:`~adk_rx.memory.VectorMemoryService` (SQLite
or PostgreSQL, any embedder) through :class:`~adk_rx.memory.files.FileIndex`: the folder is
indexed at the first search, and each later search first takes in the files that changed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.errors import ConfigurationError
from adk_rx.memory.files import DEFAULT_EXTENSIONS, FileIndex
from adk_rx.memory.hashing import HashingEmbedder
from adk_rx.memory.vector import VectorMemoryService
from adk_rx.memory.vector_store import Hit
from adk_rx.tools.base import BaseTool

if TYPE_CHECKING:
    from adk_rx.context import ToolContext

__all__ = ["FilesRetrieval"]

NOTHING_FOUND = "No passage of the files matches the query."


def _results(hits: list[Hit]) -> dict[str, Any]:
    results = [
        {"source": hit.source, "text": hit.text, "score": round(hit.score, 4)} for hit in hits
    ]
    return {"results": results} if results else {"results": [], "message": NOTHING_FOUND}


class FilesRetrieval(BaseTool):
    """Retrieves the passages of a folder's files that best match the model's query.

    Args:
        name: the tool's name, as the model calls it.
        description: what the files are about, for the model.
        input_dir: the folder (text, markdown and reStructuredText files; see ``extensions``).
        memory: where the passages are stored and how they are embedded; default an
            in-process store with :class:`~adk_rx.memory.HashingEmbedder` (word matching).
            Pass ``VectorMemoryService(url, LocalEmbedder())`` to search by meaning and keep
            the index across restarts.
        top_k: passages per search.
        extensions: the file name endings to index.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        input_dir: str | os.PathLike[str],
        memory: VectorMemoryService | None = None,
        top_k: int = 5,
        extensions: Iterable[str] = DEFAULT_EXTENSIONS,
    ) -> None:
        super().__init__(
            name=name,
            description=description,
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The query to retrieve."}
                },
                "required": ["query"],
            },
            is_idempotent=True,
        )
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ConfigurationError(f"top_k must be an int >= 1, got {top_k!r}")
        store = memory or VectorMemoryService("memory://", HashingEmbedder())
        self.top_k = top_k
        self.index = FileIndex(input_dir, store, name=name, extensions=extensions)

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Emits ``{"results": [{"source", "text", "score"}, ...]}``, best first."""
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return rx.throw(ValueError(f"{self.name} needs a non-empty string argument 'query'"))
        return self.index.search(query, self.top_k).pipe(ops.map(_results))
