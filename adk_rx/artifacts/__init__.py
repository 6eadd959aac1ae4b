"""Artifact services: the seam, the in-memory store, the file store and the SQL store."""

from adk_rx.artifacts.base import USER_PREFIX, BaseArtifactService
from adk_rx.artifacts.file import FileArtifactService
from adk_rx.artifacts.in_memory import InMemoryArtifactService, check_artifact_filename
from adk_rx.artifacts.sql import SqlArtifactService

__all__ = [
    "USER_PREFIX",
    "BaseArtifactService",
    "FileArtifactService",
    "InMemoryArtifactService",
    "SqlArtifactService",
    "check_artifact_filename",
]
