"""Artifact services: the seam, the in-memory store and the file store."""

from adk_rx.artifacts.base import USER_PREFIX, BaseArtifactService
from adk_rx.artifacts.file import FileArtifactService
from adk_rx.artifacts.in_memory import InMemoryArtifactService, check_artifact_filename

__all__ = [
    "USER_PREFIX",
    "BaseArtifactService",
    "FileArtifactService",
    "InMemoryArtifactService",
    "check_artifact_filename",
]
