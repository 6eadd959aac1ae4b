"""Whose eval sets a request reaches, and where they live.

* **The caller** is the bearer token's user when the server has tokens (see
  :mod:`adk_rx.cli.server.edge.security`). Without tokens the server trusts every client as
  its one local user (the same trust that lets any client name any user's sessions), so every
  client shares the local user's sets.
* **The caller's own sets and results** live under the server's data directory, in
  google-adk's layout (see :class:`~adk_rx.evaluation.eval_store.EvalSetStore`)::

      <data_dir>/evals/<app>/users/<user>/<eval_set_id>.evalset.json   a token's user
      <data_dir>/evals/<app>/local/<eval_set_id>.evalset.json          no tokens

  (``<user>`` percent-encoded, dots too, so every user id is one plain folder name). Only
  the caller creates, changes and deletes them; ``adk-rx eval <app> <that folder>`` runs them.
* **The sets shipped in the app's folder** (``<app>/*.evalset.json``, google-adk's place)
  are listed, read and run for every caller, and never written through the routes: a
  write answers 403. A caller's own set of the same id (made before the app shipped one)
  wins.
* **Another user's set or result** is not in the caller's folder, so it answers 404, as
  another user's session does.

Writes to one folder are queued on an ``asyncio.Lock`` of this process before they take
the store's file lock on a worker thread, so concurrent writers wait without holding threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request

from adk_rx.errors import AdkRxError
from adk_rx.evaluation import EvalSet
from adk_rx.evaluation.eval_store import EvalSetStore, check_eval_id

from ..edge.validation import check_id
from ..errors import RequestRejectedError
from ..shared import not_found, runner_for, server_of

__all__ = ["EvalScope", "checked", "eval_scope", "owner_folder"]

LOCAL_OWNER = "local"
_WRITERS: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


def owner_folder(user: str | None) -> str:
    """The folder (relative to ``<data_dir>/evals/<app>``) of a caller's sets."""
    if user is None:
        return LOCAL_OWNER
    return "users/" + (quote(user, safe="").replace(".", "%2E") or "%")


def checked(value: object, what: str) -> str:
    """An eval id from a path or a body (400 unless it is a safe file name)."""
    try:
        return check_eval_id(value, what)
    except AdkRxError as exc:
        raise RequestRejectedError(str(exc)) from exc


@dataclass(frozen=True)
class EvalScope:
    """The eval sets one request reaches: the caller's own and the app's shipped ones."""

    app: str
    own: EvalSetStore
    shipped: EvalSetStore

    def ids(self) -> list[str]:
        """Every set id the caller sees (blocking)."""
        return sorted({*self.own.ids(), *self.shipped.ids()})

    async def find(self, eval_set_id: str) -> EvalSet:
        """The caller's set, else the shipped one; 404 when neither has it."""
        eval_set_id = checked(eval_set_id, "eval_set_id")
        for store in (self.own, self.shipped):
            found = await asyncio.to_thread(_load, store, eval_set_id)
            if found is not None:
                return found
        raise not_found(f"eval set {eval_set_id!r}")

    async def writable(self, eval_set_id: str) -> str:
        """``eval_set_id`` when it is the caller's own set; 403 shipped, 404 otherwise."""
        eval_set_id = checked(eval_set_id, "eval_set_id")
        if await asyncio.to_thread(self.own.path(eval_set_id).is_file):
            return eval_set_id
        await self.refuse_shipped(eval_set_id)
        raise not_found(f"eval set {eval_set_id!r}")

    async def refuse_shipped(self, eval_set_id: str) -> None:
        """403 when the app's folder ships a set with this id."""
        if await asyncio.to_thread(self.shipped.path(eval_set_id).is_file):
            raise HTTPException(
                403,
                f"eval set {eval_set_id!r} ships with the app {self.app!r} and is read-only; "
                "create a set of your own to add cases to",
            )

    @contextlib.asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """Queues this request's write behind the others of the caller's folder."""
        key = str(self.own.folder)
        lock = _WRITERS.get(key)
        if lock is None:
            lock = _WRITERS[key] = asyncio.Lock()
        async with lock:
            yield


def _load(store: EvalSetStore, eval_set_id: str) -> EvalSet | None:
    try:
        return store.load(eval_set_id)
    except AdkRxError as exc:  # a broken file on the server's side
        raise HTTPException(500, str(exc)) from exc


async def eval_scope(request: Request) -> EvalScope:
    """The scope of a ``/dev/apps/{app}/...`` eval request (404 for an unknown app)."""
    app = check_id(request.path_params["app"], "the app name")
    await runner_for(request, app)
    server = server_of(request)
    caller = request.scope.get("state", {}).get("user")
    own = server.data_dir / "evals" / app / owner_folder(caller)
    shipped = server.runners.agents_dir / app
    return EvalScope(app, EvalSetStore(own, app), EvalSetStore(shipped, app))
