"""The server's stores from URIs: sessions, artifacts and memory, durable together.

``--session-service-uri`` names where sessions live. Artifacts and memory follow it unless
named on their own (``--artifact-service-uri``, ``--memory-service-uri``): with a SQL session
database they go to the same database (:class:`SqlArtifactService`, :class:`SqlMemoryService`),
so nothing a client saved lives only in the process that answered, and every replica of a
deployment sees it. ``memory://`` sessions keep artifacts and memory in the process too.
Without any URI the server's defaults apply (:func:`~adk_rx.cli.server.app.create_app`:
SQLite sessions and artifact files in the data folder).
"""

from __future__ import annotations

from pathlib import Path

from adk_rx.artifacts import (
    BaseArtifactService,
    FileArtifactService,
    InMemoryArtifactService,
    SqlArtifactService,
)
from adk_rx.auth import BaseCredentialService, InMemoryCredentialService, SqlCredentialService
from adk_rx.errors import ConfigurationError
from adk_rx.memory.base import BaseMemoryService
from adk_rx.memory.sql import SqlMemoryService
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.sql import SqlSessionService

__all__ = [
    "artifact_service_from_uri",
    "credential_service_from_uri",
    "follow_sessions",
    "session_service_from_uri",
]

_SQL = ("sqlite", "postgresql", "postgres")


def _scheme(uri: str) -> str:
    return uri.partition(":")[0].lower().split("+")[0]


def session_service_from_uri(uri: str) -> BaseSessionService:
    """The session service a ``--session-service-uri`` names.

    ``memory://`` keeps sessions in this process; ``sqlite:///PATH`` and
    ``postgresql://...`` (several server processes share one PostgreSQL database) go to
    :class:`SqlSessionService`.

    Raises:
        ConfigurationError: any other scheme.
    """
    scheme = _scheme(uri)
    if scheme == "memory":
        from adk_rx.sessions.in_memory import InMemorySessionService

        return InMemorySessionService()
    if scheme in _SQL:
        return SqlSessionService(uri)
    raise ConfigurationError(
        f"the session service URI must be memory://, sqlite:///PATH or postgresql://..., "
        f"got {uri!r}"
    )


def artifact_service_from_uri(uri: str) -> BaseArtifactService:
    """The artifact service an ``--artifact-service-uri`` names: ``memory://`` (this
    process), ``file://DIR`` (files under DIR), ``sqlite:///PATH`` or ``postgresql://...``
    (:class:`SqlArtifactService`).

    Raises:
        ConfigurationError: any other scheme, or ``file://`` without a folder.
    """
    scheme = _scheme(uri)
    if scheme == "memory":
        return InMemoryArtifactService()
    if scheme == "file":
        folder = uri.partition("://")[2]
        if not folder:
            raise ConfigurationError(f"file:// needs a folder, e.g. file:///srv/artifacts: {uri!r}")
        return FileArtifactService(Path(folder))
    if scheme in _SQL:
        return SqlArtifactService(uri)
    raise ConfigurationError(
        "the artifact service URI must be memory://, file://DIR, sqlite:///PATH or "
        f"postgresql://..., got {uri!r}"
    )


def follow_sessions(
    sessions: BaseSessionService,
    artifacts: BaseArtifactService | None,
    memory: BaseMemoryService | None,
) -> tuple[BaseArtifactService, BaseMemoryService | None]:
    """Artifacts and memory not given otherwise go where the sessions go: a SQL session
    database holds them too; sessions in memory keep them in memory (memory None: the
    server's in-process default)."""
    if isinstance(sessions, SqlSessionService):
        url = sessions.database.url.render_as_string(hide_password=False)
        return artifacts or SqlArtifactService(url), memory or SqlMemoryService(url)
    return artifacts or InMemoryArtifactService(), memory


def credential_service_from_uri(uri: str) -> BaseCredentialService:
    """The credential service a ``--credential-service-uri`` names.

    ``memory://`` keeps credentials in this process; ``sqlite:///PATH`` and
    ``postgresql://...`` keep them encrypted at rest (the key in ``ADK_RX_CREDENTIAL_KEY``).

    Raises:
        ConfigurationError: another scheme, or a SQL URL without a key.
    """
    scheme = _scheme(uri)
    if scheme == "memory":
        return InMemoryCredentialService()
    if scheme in _SQL:
        return SqlCredentialService(uri)
    raise ConfigurationError(
        f"--credential-service-uri must be memory://, sqlite:///PATH or postgresql://..., "
        f"got {scheme}://"
    )
