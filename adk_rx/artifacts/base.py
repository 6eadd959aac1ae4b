"""The artifact-service seam: versioned files attached to a session (or to a user)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import reactivex
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.rx._engine.awaitable import awaitable_results

__all__ = ["USER_PREFIX", "BaseArtifactService"]

USER_PREFIX = "user:"
"""A file name starting with this prefix is shared by all sessions of the user."""


class BaseArtifactService(ABC):
    """Stores artifacts; every save makes a new version (0, 1, 2, ...).

    Every method takes keyword arguments and returns a cold Observable.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Every implementation's results can be awaited from asyncio
        # (see adk_rx.rx._engine.awaitable).
        awaitable_results(
            cls,
            (
                "save_artifact",
                "load_artifact",
                "list_artifact_keys",
                "list_versions",
                "delete_artifact",
                "delete_session_artifacts",
            ),
        )

    @abstractmethod
    def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        artifact: types.Part,
    ) -> Observable[int]:
        """Saves a new version and emits its number."""

    @abstractmethod
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

    @abstractmethod
    def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[list[str]]:
        """Emits the sorted file names visible to the session (its own and the user's)."""

    @abstractmethod
    def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[list[int]]:
        """Emits the versions of a file (empty list when it does not exist)."""

    @abstractmethod
    def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[None]:
        """Deletes every version of a file; a Completable."""

    def delete_session_artifacts(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[None]:
        """Deletes every artifact of the session (not the user's ``user:`` files); a
        Completable. The default lists the session's files and deletes each one."""

        def delete_all(names: list[str]) -> Observable[None]:
            own = [name for name in names if not name.startswith(USER_PREFIX)]
            deletes = [
                self.delete_artifact(
                    app_name=app_name, user_id=user_id, session_id=session_id, filename=name
                )
                for name in own
            ]
            return reactivex.concat(*deletes).pipe(ops.ignore_elements())

        return self.list_artifact_keys(
            app_name=app_name, user_id=user_id, session_id=session_id
        ).pipe(ops.flat_map(delete_all))
