"""An echo API on 127.0.0.1 for the RestApiTool tests: it answers what it received, a chosen
status, a body bigger than any bound, or nothing until the client goes away."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from adk_rx.testing.oauth_server import LocalOAuthServer, serve


class EchoApi(LocalOAuthServer):
    """The local OAuth2 server's app plus echo routes (served by the same ``serve``)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.seen: list[dict[str, Any]] = []
        self.gone = threading.Event()  # a hanging request's client went away
        self.hanging = threading.Event()  # a hanging request has arrived
        self.app.router.routes.extend(
            [
                Route("/echo/{rest:path}", self._echo, methods=["GET", "POST", "PUT", "DELETE"]),
                Route("/status/{code:int}", self._status),
                Route("/huge", self._huge),
                Route("/hang", self._hang),
                Route("/text", lambda _: Response("plain words", media_type="text/plain")),
            ]
        )

    async def _echo(self, request: Request) -> Response:
        body = await request.body()
        seen = {
            "method": request.method,
            "path": request.url.path,
            "raw_path": request.scope.get("raw_path", b"").decode(),
            "query": dict(request.query_params),
            "headers": dict(request.headers),
            "body": body.decode() or None,
        }
        self.seen.append(seen)
        return JSONResponse(seen)

    async def _status(self, request: Request) -> Response:
        code = request.path_params["code"]
        return JSONResponse({"detail": f"status {code} as asked"}, status_code=code)

    async def _huge(self, _: Request) -> Response:
        async def chunks() -> Any:
            for _ in range(64):
                yield b"x" * 65536

        return StreamingResponse(chunks(), media_type="application/json")

    async def _hang(self, request: Request) -> Response:
        self.hanging.set()
        try:
            while not await request.is_disconnected():
                await asyncio.sleep(0.01)
        finally:
            self.gone.set()
        return Response(status_code=204)


@contextmanager
def serving_echo() -> Iterator[EchoApi]:
    with serve(EchoApi()) as running:
        yield running  # type: ignore[misc]


def echo_spec(url: str, security: dict[str, Any] | None = None) -> dict[str, Any]:
    """A document over the echo routes: path, query, header and body parameters, $refs."""
    spec: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "Echo", "version": "1"},
        "servers": [{"url": url}],
        "components": {
            "parameters": {
                "Verbose": {
                    "name": "verbose",
                    "in": "query",
                    "schema": {"type": "boolean"},
                    "description": "say more",
                }
            },
            "schemas": {
                "Item": {
                    "type": "object",
                    "properties": {
                        "itemName": {"type": "string", "description": "the name"},
                        "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
                        "class": {"type": "string"},
                    },
                    "required": ["itemName"],
                },
                "Tag": {"type": "object", "properties": {"label": {"type": "string"}}},
                "Node": {
                    "type": "object",
                    "properties": {"child": {"$ref": "#/components/schemas/Node"}},
                },
            },
        },
        "paths": {
            "/echo/items/{itemId}": {
                "parameters": [
                    {"name": "itemId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "get": {
                    "operationId": "getItemByID",
                    "summary": "Reads an item.",
                    "parameters": [
                        {"$ref": "#/components/parameters/Verbose"},
                        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                        {
                            "name": "limit",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "integer", "default": 10},
                        },
                    ],
                    "responses": {"200": {"description": "ok"}},
                },
                "put": {
                    "operationId": "putItem",
                    "description": "Replaces an item.",
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Item"}}
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                },
            },
            "/echo/tree": {
                "post": {
                    "summary": "Stores a tree.",
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Node"}}
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/echo/batch": {
                "post": {
                    "operationId": "postBatch",
                    "requestBody": {
                        "description": "the items",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"type": "string"}}
                            }
                        },
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/status/{code}": {
                "get": {
                    "operationId": "status",
                    "parameters": [{"name": "code", "in": "path", "schema": {"type": "integer"}}],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/huge": {"get": {"operationId": "huge", "responses": {"200": {"description": "x"}}}},
            "/hang": {"get": {"operationId": "hang", "responses": {"200": {"description": "x"}}}},
            "/text": {"get": {"operationId": "text", "responses": {"200": {"description": "x"}}}},
        },
    }
    if security is not None:
        spec["components"]["securitySchemes"] = {"auth": security}
        spec["security"] = [{"auth": []}]
    return spec
