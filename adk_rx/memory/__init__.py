"""Memory services: the seam, keyword search (in memory, SQL) and vector memory.

:class:`VectorMemoryService` ranks memories by similarity of meaning, with the vectors of an
:class:`Embedder`: :class:`HashingEmbedder` (offline, deterministic), :class:`LocalEmbedder`
(a small sentence model shipped in a package), :class:`GeminiEmbedder`, :class:`OpenAiEmbedder`.
"""

from adk_rx.memory.base import BaseMemoryService, MemoryEntry, SearchMemoryResponse
from adk_rx.memory.embedder import Embedder
from adk_rx.memory.gemini_embedder import GeminiEmbedder
from adk_rx.memory.hashing import HashingEmbedder
from adk_rx.memory.in_memory import InMemoryMemoryService
from adk_rx.memory.local_embedder import LocalEmbedder
from adk_rx.memory.openai_embedder import OpenAiEmbedder
from adk_rx.memory.sql import SqlMemoryService
from adk_rx.memory.vector import VectorMemoryService

__all__ = [
    "BaseMemoryService",
    "Embedder",
    "GeminiEmbedder",
    "HashingEmbedder",
    "InMemoryMemoryService",
    "LocalEmbedder",
    "MemoryEntry",
    "OpenAiEmbedder",
    "SearchMemoryResponse",
    "SqlMemoryService",
    "VectorMemoryService",
]
