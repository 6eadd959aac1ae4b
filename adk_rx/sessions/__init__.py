"""Session services: the store seam, the in-memory store and the SQL store."""

from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.sessions.session import GetSessionConfig, ListSessionsResponse, Session
from adk_rx.sessions.sql import SqlSessionService

__all__ = [
    "BaseSessionService",
    "GetSessionConfig",
    "InMemorySessionService",
    "ListSessionsResponse",
    "Session",
    "SqlSessionService",
]
