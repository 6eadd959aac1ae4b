"""A local OAuth2 server with a protected API, for tests and offline examples.

``LocalOAuthServer`` is one Starlette app that plays both parts:

* ``GET /authorize``: the sign-in page. It consents at once and redirects to the client's
  ``redirect_uri`` with a one-time ``code`` and the ``state`` it was given (a test reads the
  redirect's ``Location``: the URL a browser would land on).
* ``POST /token``: the ``authorization_code``, ``refresh_token`` and ``client_credentials``
  grants, with the client authenticated by HTTP basic or in the form; a public client (its
  id, no secret) may exchange a code whose sign-in carried a PKCE S256 challenge, with the
  matching verifier. Codes are single use.
* ``GET /api/me``, ``GET /api/notes/{note_id}``, ``POST /api/notes``: the protected API; a
  missing, unknown or expired bearer token answers 401.

Counters (``exchanges``, ``refreshes``, ``client_grants``, ``api_calls``),
:meth:`LocalOAuthServer.expire_tokens` and :meth:`LocalOAuthServer.revoke_refresh_tokens` let a
test see and provoke each step. :func:`serve` runs it on
127.0.0.1 under uvicorn in a thread; :meth:`LocalOAuthServer.openapi_spec` describes the API.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

__all__ = ["LocalOAuthServer", "serve"]

_MAX_BODY = 16 * 1024


@dataclass
class _Token:
    user: str
    expires_at: float
    scope: str


@dataclass
class LocalOAuthServer:
    """The OAuth2 server and its API (see the module docstring).

    Attributes:
        client_id / client_secret: the one registered client.
        user: the user who "signs in" at ``/authorize``.
        expires_in: lifetime of an access token, seconds.
        url: set by :func:`serve` (``http://127.0.0.1:<port>``).
    """

    client_id: str = "test-client"
    client_secret: str = field(default_factory=lambda: "cs-" + secrets.token_hex(8))
    user: str = "ada"
    expires_in: int = 3600
    url: str = ""
    exchanges: int = 0
    refreshes: int = 0
    client_grants: int = 0
    api_calls: int = 0
    issued: list[str] = field(default_factory=list)
    _codes: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    _tokens: dict[str, _Token] = field(default_factory=dict)
    _refresh: dict[str, str] = field(default_factory=dict)
    _notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.app = Starlette(
            routes=[
                Route("/authorize", self._authorize),
                Route("/token", self._token, methods=["POST"]),
                Route("/api/me", self._me),
                Route("/api/notes", self._add_note, methods=["POST"]),
                Route("/api/notes/{note_id}", self._note),
            ]
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)

    # -- what tests use ----------------------------------------------------------------------
    def expire_tokens(self) -> None:
        """Makes every access token issued so far expired (refresh tokens stay good)."""
        with self._lock:
            for token in self._tokens.values():
                token.expires_at = 0

    def revoke_refresh_tokens(self) -> None:
        """Makes every refresh token issued so far unknown (a refresh answers invalid_grant)."""
        with self._lock:
            self._refresh.clear()

    def secrets_issued(self) -> list[str]:
        """Every secret this server handed out or holds: client secret, codes, tokens."""
        with self._lock:
            return [self.client_secret, *self.issued]

    def openapi_spec(self) -> dict[str, Any]:
        """An OpenAPI 3 document of the API, with the OAuth2 authorization-code scheme."""
        return {
            "openapi": "3.0.3",
            "info": {"title": "Notes", "version": "1"},
            "servers": [{"url": self.url + "/api"}],
            "components": {
                "securitySchemes": {
                    "oauth": {
                        "type": "oauth2",
                        "flows": {
                            "authorizationCode": {
                                "authorizationUrl": self.url + "/authorize",
                                "tokenUrl": self.url + "/token",
                                "scopes": {"notes": "read and write notes"},
                            }
                        },
                    }
                },
                "schemas": {
                    "Note": {
                        "type": "object",
                        "properties": {
                            "title": {"type": "string", "description": "the title"},
                            "body": {"type": "string"},
                        },
                        "required": ["title"],
                    }
                },
            },
            "security": [{"oauth": ["notes"]}],
            "paths": {
                "/me": {
                    "get": {
                        "operationId": "get_me",
                        "summary": "Who is signed in.",
                        "responses": {"200": {"description": "the user"}},
                    }
                },
                "/notes": {
                    "post": {
                        "operationId": "add_note",
                        "summary": "Adds a note.",
                        "requestBody": {
                            "required": True,
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Note"}
                                }
                            },
                        },
                        "responses": {"200": {"description": "the note"}},
                    }
                },
                "/notes/{note_id}": {
                    "get": {
                        "operationId": "get_note",
                        "summary": "Reads a note.",
                        "parameters": [
                            {
                                "name": "note_id",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string"},
                            }
                        ],
                        "responses": {"200": {"description": "the note"}},
                    }
                },
            },
        }

    # -- the OAuth2 server -------------------------------------------------------------------
    async def _authorize(self, request: Request) -> Response:
        query = request.query_params
        if query.get("client_id") != self.client_id or not query.get("redirect_uri"):
            return JSONResponse({"error": "invalid_client"}, status_code=400)
        code = "code-" + secrets.token_hex(8)
        challenge = ""
        if query.get("code_challenge"):
            if query.get("code_challenge_method") != "S256":
                return JSONResponse({"error": "invalid_request"}, status_code=400)
            challenge = query["code_challenge"]
        with self._lock:
            self._codes[code] = (query["redirect_uri"], query.get("scope", ""), challenge)
            self.issued.append(code)
        params = {"code": code}
        if "state" in query:
            params["state"] = query["state"]
        return RedirectResponse(f"{query['redirect_uri']}?{urlencode(params)}", status_code=302)

    def _client(self, request: Request, form: dict[str, str]) -> bool:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            try:
                raw = base64.b64decode(header[6:]).decode()
            except ValueError:
                return False
            client_id, _, secret = raw.partition(":")
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        return client_id == self.client_id and secrets.compare_digest(secret, self.client_secret)

    def _issue(self, user: str, scope: str) -> dict[str, Any]:
        access, refresh = "at-" + secrets.token_hex(12), "rt-" + secrets.token_hex(12)
        with self._lock:
            self._tokens[access] = _Token(user, time.time() + self.expires_in, scope)
            self._refresh[refresh] = user
            self.issued += [access, refresh]
        return {
            "access_token": access,
            "refresh_token": refresh,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "scope": scope,
        }

    async def _token(self, request: Request) -> Response:
        body = await request.body()
        if len(body) > _MAX_BODY:
            return JSONResponse({"error": "invalid_request"}, status_code=413)
        form = {k: str(v) for k, v in (await request.form()).items()}
        authenticated = self._client(request, form)
        public = form.get("client_id") == self.client_id and "client_secret" not in form
        grant = form.get("grant_type")
        if grant == "authorization_code":
            with self._lock:
                self.exchanges += 1
                found = self._codes.pop(form.get("code", ""), None)
            if found is None or found[0] != form.get("redirect_uri", found[0]):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            challenge = found[2]
            if challenge and _s256(form.get("code_verifier", "")) != challenge:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            if not authenticated and not (challenge and public):  # a public client needs PKCE
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            return JSONResponse(self._issue(self.user, found[1]))
        if not authenticated and not (grant == "refresh_token" and public):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if grant == "refresh_token":
            with self._lock:
                self.refreshes += 1
                user = self._refresh.get(form.get("refresh_token", ""))
            if user is None:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse(self._issue(user, ""))
        if grant == "client_credentials":
            with self._lock:
                self.client_grants += 1
            issued = self._issue("service:" + self.client_id, form.get("scope", ""))
            issued.pop("refresh_token")
            return JSONResponse(issued)
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    # -- the protected API -------------------------------------------------------------------
    def _caller(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        if not header.lower().startswith("bearer "):
            return None
        with self._lock:
            self.api_calls += 1
            token = self._tokens.get(header[7:].strip())
        if token is None or token.expires_at <= time.time():
            return None
        return token.user

    @staticmethod
    def _unauthorized() -> Response:
        return JSONResponse(
            {"error": "unauthorized"},
            status_code=401,
            headers={"www-authenticate": 'Bearer error="invalid_token"'},
        )

    async def _me(self, request: Request) -> Response:
        user = self._caller(request)
        return self._unauthorized() if user is None else JSONResponse({"user": user})

    async def _note(self, request: Request) -> Response:
        user = self._caller(request)
        if user is None:
            return self._unauthorized()
        note = self._notes.get(f"{user}/{request.path_params['note_id']}")
        if note is None:
            return JSONResponse({"error": "no such note"}, status_code=404)
        return JSONResponse(note)

    async def _add_note(self, request: Request) -> Response:
        user = self._caller(request)
        if user is None:
            return self._unauthorized()
        body = await request.body()
        if len(body) > _MAX_BODY:
            return JSONResponse({"error": "too large"}, status_code=413)
        try:
            note = await request.json()
            title = str(note["title"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "a note needs a title"}, status_code=422)
        note_id = str(len(self._notes) + 1)
        self._notes[f"{user}/{note_id}"] = {"id": note_id, "title": title, "body": note.get("body")}
        return JSONResponse(self._notes[f"{user}/{note_id}"])


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@contextlib.contextmanager
def serve(server: LocalOAuthServer | None = None, *, port: int = 0) -> Iterator[LocalOAuthServer]:
    """Runs ``server`` (a new one by default) on 127.0.0.1:``port`` (0: a free one) until the
    block ends.

    The socket is bound before the thread starts, so the server takes requests at once.
    """
    server = server or LocalOAuthServer()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    server.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(server, log_level="critical", lifespan="off")
    uv = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: asyncio.run(uv.serve(sockets=[sock])), name="local-oauth", daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()
