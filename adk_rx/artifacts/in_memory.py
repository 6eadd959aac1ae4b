"""InMemoryArtifactService: versioned artifacts in process memory.

Also home of :func:`check_artifact_filename`, the one rule for artifact file names that every
artifact service applies, so that an app tested in memory behaves the same on disk.
"""

from __future__ import annotations

import threading

from google.genai import types
from reactivex import Observable

from adk_rx.artifacts.base import USER_PREFIX, BaseArtifactService
from adk_rx.artifacts.parts import is_rewind_marker
from adk_rx.errors import ConfigurationError
from adk_rx.rx._engine.sync import completable, maybe, single

__all__ = ["InMemoryArtifactService", "check_artifact_filename"]

# (app_name, user_id, session_id or None for the user's own files, filename)
_Key = tuple[str, str, str | None, str]


def check_artifact_filename(filename: str) -> str:
    """Returns ``filename`` if it is a safe artifact name, else raises ConfigurationError.

    A name must be a non-empty string other than ``.``, without ``..``, ``/``, ``\\`` or
    NUL, so that no service can be led to write outside its storage (``user:`` is a prefix,
    not part of the name that is checked).
    """
    if not isinstance(filename, str):
        raise ConfigurationError(f"artifact filename must be a str, got {type(filename).__name__}")
    name = filename.removeprefix(USER_PREFIX)
    if name in ("", ".") or ".." in name or "/" in name or "\\" in name or "\x00" in name:
        raise ConfigurationError(
            f"invalid artifact filename {filename!r}: use a non-empty name without '..', "
            "'/', '\\' or NUL (optionally prefixed with 'user:')"
        )
    return filename


def _scope(session_id: str, filename: str) -> str | None:
    # ``user:`` files belong to the user, whatever session saves or reads them.
    return None if filename.startswith(USER_PREFIX) else session_id


class InMemoryArtifactService(BaseArtifactService):
    """Keeps every version of every artifact in a dict; thread-safe.

    Parts are copied on the way in and on the way out, so neither the caller nor a reader
    can change a stored version. Names starting with ``user:`` are shared by all sessions
    of the user. Reading or listing a file that does not exist stores nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._versions: dict[_Key, list[types.Part]] = {}

    def _key(self, app_name: str, user_id: str, session_id: str, filename: str) -> _Key:
        check_artifact_filename(filename)
        return (app_name, user_id, _scope(session_id, filename), filename)

    def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        artifact: types.Part,
    ) -> Observable[int]:
        """Saves a new version and emits its number (0 for the first save)."""

        def save() -> int:
            key = self._key(app_name, user_id, session_id, filename)
            stored = artifact.model_copy(deep=True)
            with self._lock:
                versions = self._versions.setdefault(key, [])
                versions.append(stored)
                return len(versions) - 1

        return single(save)

    def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> Observable[types.Part]:
        """Emits the given version (latest when None), or completes empty."""

        def load() -> types.Part | None:
            key = self._key(app_name, user_id, session_id, filename)
            with self._lock:
                versions = self._versions.get(key)
                if not versions:
                    return None
                if version is None:
                    part = versions[-1]
                elif 0 <= version < len(versions):
                    part = versions[version]
                else:
                    return None
            if is_rewind_marker(part):  # a rewind removed the file
                return None
            return part.model_copy(deep=True)

        return maybe(load)

    def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[list[str]]:
        """Emits the sorted names of the session's files and the user's ``user:`` files."""

        def list_keys() -> list[str]:
            with self._lock:
                return sorted(
                    name
                    for (app, user, scope, name) in self._versions
                    if app == app_name and user == user_id and scope in (session_id, None)
                )

        return single(list_keys)

    def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[list[int]]:
        """Emits ``[0, ..., n-1]`` for a file with n versions (``[]`` when it does not exist)."""

        def versions() -> list[int]:
            key = self._key(app_name, user_id, session_id, filename)
            with self._lock:
                return list(range(len(self._versions.get(key, ()))))

        return single(versions)

    def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[None]:
        """Deletes every version of a file (a no-op when it does not exist)."""

        def delete() -> None:
            key = self._key(app_name, user_id, session_id, filename)
            with self._lock:
                self._versions.pop(key, None)

        return completable(delete)
