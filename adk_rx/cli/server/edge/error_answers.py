"""What a request that ends in an error answers: JSON ``{"detail": ...}`` with its status.

:data:`EXCEPTION_HANDLERS` is the app's table: starlette's HTTP errors (a 405 names every
method the path takes), a store with no connection to spare (503, try again), a request the
edge refused (4xx; a body cut off mid-way also closes the connection) and an app that
failed to load (500, with its traceback on the dev server).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route

from adk_rx.errors import StoreError

from ..errors import AppLoadFailedError, BodyTimeoutError, RequestRejectedError
from ..shared import json_response

__all__ = ["EXCEPTION_HANDLERS"]


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers) if exc.headers else None
    if exc.status_code == 405:
        headers = {**(headers or {}), "Allow": _allowed_methods(request)}
    return json_response({"detail": exc.detail}, exc.status_code, headers=headers)


async def _app_load_failed(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AppLoadFailedError)
    body = {"detail": str(exc)}
    if exc.traceback is not None:
        body["traceback"] = exc.traceback
    return json_response(body, exc.status)


def _allowed_methods(request: Request) -> str:
    """Every method of the path: starlette's 405 names only those of the first route whose
    path matched, and one path may be served by several routes (``GET`` and ``POST``
    ``.../sessions`` live in different modules)."""
    methods: set[str] = set()
    for route in request.app.routes:
        if isinstance(route, Route) and route.matches(request.scope)[0] != Match.NONE:
            methods |= route.methods or set()
    return ", ".join(sorted(methods))


async def _store_failed(request: Request, exc: Exception) -> Response:
    # The store had no connection to spare or lost it: nothing was written (a failed write
    # is rolled back), and a retry may succeed.
    return json_response({"detail": str(exc)}, 503, headers={"Retry-After": "1"})


async def _rejected(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestRejectedError)
    # A body cut off mid-way leaves the connection unusable: say so, and uvicorn closes it.
    headers = {"Connection": "close"} if isinstance(exc, BodyTimeoutError) else None
    return json_response({"detail": str(exc)}, exc.status, headers=headers)


EXCEPTION_HANDLERS: dict[type[Exception], Callable[[Request, Exception], Awaitable[Response]]] = {
    HTTPException: _http_error,
    StoreError: _store_failed,
    RequestRejectedError: _rejected,
    AppLoadFailedError: _app_load_failed,
}
"""Exception type -> the handler that answers it (the app's ``exception_handlers``)."""
