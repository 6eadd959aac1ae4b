"""Memory services: the seam and the in-memory store."""

from adk_rx.memory.base import BaseMemoryService, MemoryEntry, SearchMemoryResponse
from adk_rx.memory.in_memory import InMemoryMemoryService
from adk_rx.memory.sql import SqlMemoryService

__all__ = [
    "BaseMemoryService",
    "InMemoryMemoryService",
    "MemoryEntry",
    "SearchMemoryResponse",
    "SqlMemoryService",
]
