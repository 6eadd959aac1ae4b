"""SqlArtifactService: versioned artifacts in SQLite or PostgreSQL, beside the sessions.

One row per version in ``adk_artifacts``: the scope (app, user, and the session, or ``""``
for the user's ``user:`` files), the file name, the version, the metadata that rebuilds the
Part (kind, MIME type, display name) and the bytes. Several processes may share the
database: a save numbers its version inside its write transaction (SQLite serialises
writers; PostgreSQL takes a transaction lock on the file first), so two saves never get the
same number and a version is visible once its transaction commits, bytes and all.

Every name is checked as the other stores check it (:func:`check_artifact_filename`), and
a file's versions are reachable only under its own app, user and session.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, cast

import sqlalchemy as sa
from google.genai import types
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.artifacts.base import USER_PREFIX, BaseArtifactService
from adk_rx.artifacts.in_memory import check_artifact_filename
from adk_rx.artifacts.parts import decode_part, encode_part, is_rewind_marker
from adk_rx.errors import ConfigurationError
from adk_rx.rx import from_blocking
from adk_rx.sessions.sql_engine import Database
from adk_rx.sessions.sql_schema import SCHEMA_VERSIONS, check_version

__all__ = ["SqlArtifactService"]

SCHEMA_VERSION = 1
_ID_LENGTH = 256
_NAME_LENGTH = 1024

_METADATA = sa.MetaData()
_ARTIFACTS = sa.Table(
    "adk_artifacts",
    _METADATA,
    sa.Column("app_name", sa.String(_ID_LENGTH), primary_key=True),
    sa.Column("user_id", sa.String(_ID_LENGTH), primary_key=True),
    sa.Column("scope", sa.String(_ID_LENGTH), primary_key=True),  # session id, "" for user:
    sa.Column("filename", sa.String(_NAME_LENGTH), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("meta", sa.Text, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
)
_C = _ARTIFACTS.c
_FILE = sa.and_(
    _C.app_name == sa.bindparam("app"),
    _C.user_id == sa.bindparam("user"),
    _C.scope == sa.bindparam("scope"),
    _C.filename == sa.bindparam("name"),
)
_NEXT = sa.select(sa.func.coalesce(sa.func.max(_C.version), -1) + 1).where(_FILE)
_INSERT = sa.insert(_ARTIFACTS).values(
    {column.name: sa.bindparam(column.name) for column in _ARTIFACTS.columns}
)
_LATEST = sa.select(_C.version, _C.meta, _C.data).where(_FILE).order_by(_C.version.desc()).limit(1)
_ONE = sa.select(_C.version, _C.meta, _C.data).where(_FILE, _C.version == sa.bindparam("v"))
_VERSIONS = sa.select(_C.version).where(_FILE).order_by(_C.version)
_KEYS = (
    sa.select(_C.scope, _C.filename)
    .where(
        _C.app_name == sa.bindparam("app"),
        _C.user_id == sa.bindparam("user"),
        sa.or_(_C.scope == sa.bindparam("scope"), _C.scope == sa.literal_column("''")),
    )
    .distinct()
)
_DELETE = sa.delete(_ARTIFACTS).where(_FILE)
_DELETE_SESSION = sa.delete(_ARTIFACTS).where(
    _C.app_name == sa.bindparam("app"),
    _C.user_id == sa.bindparam("user"),
    _C.scope == sa.bindparam("scope"),
)
_FILE_LOCK = sa.select(sa.func.pg_advisory_xact_lock(sa.bindparam("lock")))


class SqlArtifactService(BaseArtifactService):
    """Artifacts in a SQL database: every version's bytes and metadata, shared by every
    process that uses the database.

    Creating the service does no I/O; the table is created on first use. Names starting
    with ``user:`` are shared by all sessions of the user. Thread-safe.

    Args:
        url: ``"sqlite:///path.db"`` or ``"postgresql://user@host/db"``; it may be the
            database of a :class:`~adk_rx.sessions.sql.SqlSessionService`.
        scheduler: where blocking database work runs (default: the shared I/O scheduler).
        **engine_options: passed to :func:`sqlalchemy.create_engine`.

    Example::

        artifacts = SqlArtifactService("sqlite:///agents.db")
        runner = Runner(app=app, session_service=SqlSessionService("sqlite:///agents.db"),
                        artifact_service=artifacts)
    """

    def __init__(
        self, url: str, *, scheduler: abc.SchedulerBase | None = None, **engine_options: Any
    ) -> None:
        self._db = Database(url, **engine_options)
        self._scheduler = scheduler

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
            ids = _file(app_name, user_id, session_id, filename)
            data, meta = encode_part(artifact)
            self._ready()
            with self._db.write("saving an artifact") as conn:
                if not self._db.is_sqlite:  # SQLite's writers are serialised already
                    conn.execute(_FILE_LOCK, {"lock": _lock_id(ids)})
                version = int(conn.execute(_NEXT, ids).fetchone()[0])
                conn.execute(
                    _INSERT,
                    {
                        "app_name": ids["app"],
                        "user_id": ids["user"],
                        "scope": ids["scope"],
                        "filename": ids["name"],
                        "version": version,
                        "meta": json.dumps(meta),
                        "data": data,
                        "created_at": time.time(),
                    },
                )
            return version

        return from_blocking(save, self._scheduler)

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
            ids = _file(app_name, user_id, session_id, filename)
            if version is not None and not isinstance(version, int):
                raise ConfigurationError(f"version must be an int, got {version!r}")
            self._ready()
            with self._db.read("loading an artifact") as conn:
                if version is None:
                    row = conn.execute(_LATEST, ids).fetchone()
                else:
                    row = conn.execute(_ONE, {**ids, "v": version}).fetchone()
            if row is None:
                return None
            part = decode_part(bytes(row[2]), json.loads(row[1]))
            return None if is_rewind_marker(part) else part  # a rewind removed the file

        # from_blocking is a Single; dropping None makes it the Maybe the seam promises.
        return from_blocking(load, self._scheduler).pipe(
            ops.filter(lambda part: part is not None),
            ops.map(lambda part: cast(types.Part, part)),
        )

    def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[list[str]]:
        """Emits the sorted names of the session's files and the user's ``user:`` files."""

        def list_keys() -> list[str]:
            params = {"app": app_name, "user": user_id, "scope": _session(session_id)}
            self._ready()
            with self._db.read("listing artifacts") as conn:
                rows = conn.execute(_KEYS, params).fetchall()
            return sorted(name for _, name in rows)

        return from_blocking(list_keys, self._scheduler)

    def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[list[int]]:
        """Emits the file's versions, oldest first (``[]`` when it does not exist)."""

        def versions() -> list[int]:
            ids = _file(app_name, user_id, session_id, filename)
            self._ready()
            with self._db.read("listing artifact versions") as conn:
                return [int(row[0]) for row in conn.execute(_VERSIONS, ids).fetchall()]

        return from_blocking(versions, self._scheduler)

    def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[None]:
        """Deletes every version of a file (a no-op when it does not exist)."""

        def delete() -> None:
            ids = _file(app_name, user_id, session_id, filename)
            self._ready()
            with self._db.write("deleting an artifact") as conn:
                conn.execute(_DELETE, ids)

        return from_blocking(delete, self._scheduler).pipe(ops.ignore_elements())

    def delete_session_artifacts(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[None]:
        """Deletes every artifact of the session in one statement (not the ``user:`` files)."""

        def delete() -> None:
            params = {"app": app_name, "user": user_id, "scope": _session(session_id)}
            self._ready()
            with self._db.write("deleting a session's artifacts") as conn:
                conn.execute(_DELETE_SESSION, params)

        return from_blocking(delete, self._scheduler).pipe(ops.ignore_elements())

    def close(self) -> None:
        """Closes the pooled database connections."""
        self._db.dispose()

    def _ready(self) -> None:
        self._db.ensure("artifacts", _create_tables)


def _create_tables(conn: sa.Connection) -> None:
    _METADATA.create_all(conn)
    SCHEMA_VERSIONS.create(conn, checkfirst=True)
    check_version(conn, "artifacts", SCHEMA_VERSION)


def _id(value: str, what: str, limit: int = _ID_LENGTH) -> str:
    if not isinstance(value, str):
        raise ConfigurationError(f"{what} must be a str, got {type(value).__name__}")
    if len(value) > limit or "\x00" in value:
        raise ConfigurationError(f"{what} {value[:40]!r}... is not a storable id")
    return value


def _session(session_id: str) -> str:
    scope = _id(session_id, "session_id")
    if not scope:
        raise ConfigurationError("session_id must not be empty")
    return scope


def _file(app_name: str, user_id: str, session_id: str, filename: str) -> dict[str, str]:
    check_artifact_filename(filename)
    _id(filename, "filename", _NAME_LENGTH)
    scope = "" if filename.startswith(USER_PREFIX) else _session(session_id)
    return {
        "app": _id(app_name, "app_name"),
        "user": _id(user_id, "user_id"),
        "scope": scope,
        "name": filename,
    }


def _lock_id(ids: dict[str, str]) -> int:
    key = "\0".join((ids["app"], ids["user"], ids["scope"], ids["name"])).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big", signed=True)
