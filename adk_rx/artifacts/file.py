"""FileArtifactService: versioned artifacts as files under one root directory.

Layout (every path component percent-encoded)::

    <root>/<app>/<user>/sessions/<session>/<filename>/<version>        the bytes
    <root>/<app>/<user>/sessions/<session>/<filename>/<version>.json   {"kind", "mime_type", ...}
    <root>/<app>/<user>/user/<name>/...                                 ``user:<name>`` files

A version exists once its ``.json`` metadata file exists: the bytes are written first into a
file created exclusively (which also reserves the version number against other services on
the same directory), the metadata last, by an atomic rename. A save that fails half-way
leaves no visible version (its number is skipped). All I/O runs on the I/O scheduler.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast
from urllib.parse import quote, unquote

from google.genai import types
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.artifacts.base import USER_PREFIX, BaseArtifactService
from adk_rx.artifacts.in_memory import check_artifact_filename
from adk_rx.artifacts.parts import decode_part, encode_part, is_rewind_marker
from adk_rx.errors import ConfigurationError, StoreError
from adk_rx.rx import from_blocking

__all__ = ["FileArtifactService"]

T = TypeVar("T")

_META = ".json"


_MAX_NAME_BYTES = 255  # NAME_MAX of Linux, macOS and Windows file systems


def _component(value: str, what: str) -> str:
    if not isinstance(value, str):
        raise ConfigurationError(f"{what} must be a str, got {type(value).__name__}")
    encoded = quote(value, safe="")
    if encoded in ("", ".", ".."):
        raise ConfigurationError(f"invalid {what} {value!r} for a file artifact store")
    if len(encoded) > _MAX_NAME_BYTES:
        # Refused here, before the file system answers ENAMETOOLONG as a store failure.
        raise ConfigurationError(
            f"{what} {value[:40]!r}... is too long for a file artifact store: "
            f"{len(encoded)} bytes once percent-encoded, at most {_MAX_NAME_BYTES}"
        )
    return encoded


def _versions(directory: Path) -> list[int]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(
        int(name[: -len(_META)])
        for name in names
        if name.endswith(_META) and name[: -len(_META)].isdigit()
    )


class FileArtifactService(BaseArtifactService):
    """Stores each artifact version as a file plus a small JSON metadata file.

    A new service on the same directory sees what earlier ones saved. Names starting with
    ``user:`` are shared by all sessions of the user. Thread-safe; several services (or
    processes) may share a directory without overwriting each other's versions.

    Args:
        root_dir: the directory that holds everything (created when missing).
        scheduler: where the blocking file I/O runs; the shared I/O scheduler by default.
    """

    def __init__(
        self, root_dir: str | os.PathLike[str], *, scheduler: abc.SchedulerBase | None = None
    ) -> None:
        self.root_dir = Path(root_dir).resolve()
        self._scheduler = scheduler
        self._lock = threading.Lock()

    def _dir(self, app_name: str, user_id: str, session_id: str, filename: str) -> Path:
        check_artifact_filename(filename)
        base = self.root_dir / _component(app_name, "app_name") / _component(user_id, "user_id")
        if filename.startswith(USER_PREFIX):
            path = base / "user" / _component(filename.removeprefix(USER_PREFIX), "filename")
        else:
            session = _component(session_id, "session_id")
            path = base / "sessions" / session / _component(filename, "filename")
        # Names are already checked; this guards against a symlink planted under the root.
        if not path.resolve().is_relative_to(self.root_dir):
            raise ConfigurationError(f"artifact {filename!r} would be stored outside the root")
        return path

    def _io(self, what: str, fn: Callable[[], T]) -> Observable[T]:
        def guarded() -> T:
            try:
                return fn()
            except OSError as exc:
                raise StoreError(f"file artifact store: cannot {what}: {exc}") from exc

        return from_blocking(guarded, self._scheduler)

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
            directory = self._dir(app_name, user_id, session_id, filename)
            data, meta = encode_part(artifact)
            with self._lock:
                directory.mkdir(parents=True, exist_ok=True)
                version = max(_reserved(directory), default=-1) + 1
                while True:
                    try:
                        fd = os.open(directory / str(version), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
                        break
                    except FileExistsError:  # another service on this directory took it
                        version += 1
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                temp = directory / f".{version}.{uuid.uuid4().hex}.tmp"
                temp.write_text(json.dumps(meta))
                os.replace(temp, directory / f"{version}{_META}")
            return version

        return self._io("save", save)

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
            directory = self._dir(app_name, user_id, session_id, filename)
            versions = _versions(directory)
            wanted = versions[-1] if version is None and versions else version
            if wanted is None or wanted not in versions:
                return None
            try:
                meta = json.loads((directory / f"{wanted}{_META}").read_text())
                data = (directory / str(wanted)).read_bytes()
            except FileNotFoundError:  # deleted meanwhile
                return None
            part = decode_part(data, meta)
            return None if is_rewind_marker(part) else part  # a rewind removed the file

        # from_blocking is a Single; dropping None makes it the Maybe the seam promises.
        return self._io("load", load).pipe(
            ops.filter(lambda part: part is not None),
            ops.map(lambda part: cast(types.Part, part)),
        )

    def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[list[str]]:
        """Emits the sorted names of the session's files and the user's ``user:`` files."""

        def list_keys() -> list[str]:
            base = self.root_dir / _component(app_name, "app_name") / _component(user_id, "user_id")
            session = base / "sessions" / _component(session_id, "session_id")
            names = [unquote(n) for n in _listdir(session) if _versions(session / n)]
            user = base / "user"
            names += [USER_PREFIX + unquote(n) for n in _listdir(user) if _versions(user / n)]
            return sorted(names)

        return self._io("list", list_keys)

    def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[list[int]]:
        """Emits the file's versions, oldest first (``[]`` when it does not exist)."""
        return self._io(
            "list versions",
            lambda: _versions(self._dir(app_name, user_id, session_id, filename)),
        )

    def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[None]:
        """Deletes every version of a file (a no-op when it does not exist)."""

        def delete() -> None:
            directory = self._dir(app_name, user_id, session_id, filename)
            # FileNotFoundError: there is nothing to delete.
            with self._lock, contextlib.suppress(FileNotFoundError):
                shutil.rmtree(directory)

        return self._io("delete", delete).pipe(ops.ignore_elements())


def _reserved(directory: Path) -> list[int]:
    # Data files count too: a version is reserved as soon as its bytes file exists.
    return [int(name) for name in os.listdir(directory) if name.isdigit()]


def _listdir(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []
