"""Host, Origin and bearer-token checks, as one ASGI middleware in front of every route.

* **Host**: a request whose ``Host`` is not one of the server's own names answers 403, so a
  web page on another name that resolves to this machine (DNS rebinding) reaches nothing.
* **Origin**: a browser request from another origin (``Origin`` not equal to the request's
  own host, ``Origin: null``, or ``Sec-Fetch-Site: cross-site``) answers 403, unless the
  origin is one of ``allowed_origins`` (off by default; see :mod:`.cors`): only those get
  CORS headers, so only the server's own page and those origins can read its answers. The
  Host check applies to them all the same.
* **Tokens** (optional): ``Authorization: Bearer <token>`` maps to a user id. A missing or
  unknown token answers 401; the user is put in ``scope["state"]["user"]`` and routes only
  let that user reach its own ``users/{user}`` paths (others answer 404). The page at ``/``
  holds no data and is served without a token.
* ``GET /health`` answers every caller, without a token and whatever its Host: a load
  balancer probes it by the machine's address and holds no token. It says only
  ``{"status": "ok"}``.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from .cors import AllowedOrigins

__all__ = ["DEFAULT_HOSTS", "SecurityMiddleware", "host_allowed"]

DEFAULT_HOSTS = ("127.0.0.1", "localhost", "[::1]")
PUBLIC_PATHS = frozenset({"/", "/favicon.ico", "/dev-ui", "/openapi.json", "/docs"})
PUBLIC_PREFIX = "/dev-ui/"  # google-adk's UI bundle (``--ui google-adk``): files, no data
PROBE_PATH = "/health"  # no checks at all: it answers {"status": "ok"} and nothing else


def _split(host: str) -> tuple[str, str | None]:
    """``"name:port"`` -> (name, port); IPv6 literals keep their brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        port = rest[1:] if rest.startswith(":") else None
        return name + "]", port or None
    name, sep, port = host.rpartition(":")
    if sep and port.isdigit():
        return name, port
    return host, None


def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    """True when ``host`` (a Host header) matches an allowed name (``"*"`` allows any).

    An allowed entry without a port matches that name on any port.
    """
    if not host:
        return False
    name, port = _split(host)
    for entry in allowed:
        if entry == "*":
            return True
        allowed_name, allowed_port = _split(entry)
        if name == allowed_name and (allowed_port is None or allowed_port == port):
            return True
    return False


def _same_origin(origin: str, host: str) -> bool:
    if origin == "null":
        return False
    parts = urlsplit(origin)
    if not parts.netloc:
        return False
    default = {"http": "80", "https": "443"}.get(parts.scheme)
    origin_name, origin_port = _split(parts.netloc)
    host_name, host_port = _split(host)
    return origin_name == host_name and (origin_port or default) == (host_port or default)


class SecurityMiddleware:
    """Checks Host, Origin and (when configured) bearer tokens before any route runs."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str],
        tokens: Mapping[str, str] | None,
        allowed_origins: AllowedOrigins | None = None,
    ) -> None:
        self.app = app
        self.allowed_hosts = tuple(allowed_hosts)
        self.tokens = dict(tokens) if tokens else None
        self.allowed_origins = allowed_origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] == PROBE_PATH:
            await self.app(scope, receive, send)
            return
        deny = _deny if scope["type"] == "http" else _deny_websocket
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not host_allowed(host, self.allowed_hosts):
            await deny(send, 403, f"host {host!r} is not this server's; see allowed_hosts")
            return
        origin = headers.get("origin")
        allowed = (
            origin is not None
            and self.allowed_origins is not None
            and (self.allowed_origins.allows(origin))
        )
        if origin is not None and not allowed and not _same_origin(origin, host):
            await deny(send, 403, "cross-origin requests are not allowed")
            return
        if headers.get("sec-fetch-site") == "cross-site" and not allowed:
            await deny(send, 403, "cross-site requests are not allowed")
            return
        preflight = allowed and scope["type"] == "http" and scope["method"] == "OPTIONS"
        if self.tokens is not None and not preflight and not _is_public(scope["path"]):
            authorization = headers.get("authorization", "")
            if not authorization and scope["type"] == "websocket":
                # Browsers cannot put headers on a WebSocket; they may pass the token here.
                token = parse_qs(scope.get("query_string", b"").decode()).get("access_token")
                authorization = f"Bearer {token[0]}" if token else ""
            user = self._user(authorization)
            if user is None:
                await deny(send, 401, "a valid bearer token is required", bearer=True)
                return
            scope.setdefault("state", {})["user"] = user
        await self.app(scope, receive, send)

    def _user(self, authorization: str) -> str | None:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        assert self.tokens is not None
        found: str | None = None
        given = token.strip().encode()
        for known, user in self.tokens.items():
            # Compare every token in constant time, so timing tells nothing about them.
            if hmac.compare_digest(given, known.encode()):
                found = user
        return found


def _is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIX)


async def _deny_websocket(send: Send, status: int, detail: str, *, bearer: bool = False) -> None:
    # Closing before the handshake is accepted makes the server answer 403.
    await send({"type": "websocket.close", "code": 1008, "reason": f"{status}: {detail}"[:120]})


async def _deny(send: Send, status: int, detail: str, *, bearer: bool = False) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if bearer:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
