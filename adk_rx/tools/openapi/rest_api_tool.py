"""RestApiTool: one operation of an OpenAPI document, called over httpx.

    run_async(args) --(credential?)--(build the request)--(send, read <= max_response_bytes)--r|

The model's arguments go to the path (percent-encoded, so ``../`` stays inside its segment),
the query, headers, cookies and the JSON body. With an auth scheme the tool gets a credential
first (:func:`adk_rx.auth.tool_auth.resolve_credential`): an API key or bearer token
configured on the toolset, OAuth2 client credentials, or the user's sign-in, which pauses the
turn. What goes wrong becomes ``{"error": ...}`` for the model: an HTTP error status (with the
start of the body), a timeout, a connection failure, a response over the size bound. Disposing
the run cancels the request (the call is a task on the runtime loop).
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
from reactivex import Observable

from adk_rx.auth.config import AuthConfig
from adk_rx.auth.credential import AuthCredential
from adk_rx.auth.schemes import APIKey, HTTPBase, OAuth2, OpenIdConnect
from adk_rx.auth.tool_auth import refreshed_credential, request_credential, resolve_credential
from adk_rx.rx import from_async
from adk_rx.tools.base import BaseTool
from adk_rx.tools.openapi.spec import Operation

if TYPE_CHECKING:
    from adk_rx.context import ReadonlyContext, ToolContext

__all__ = ["PENDING_AUTH", "RestApiTool"]

PENDING_AUTH = {"pending": True, "message": "Needs your authorization to access your data."}
"""What the model sees while the user signs in (google-adk's words)."""

_ERROR_TEXT_CHARS = 2000  # the start of an error body that goes to the model


class RestApiTool(BaseTool):
    """One REST operation as a tool (made by :class:`OpenAPIToolset`, or by hand).

    Args:
        operation: the parsed operation.
        auth_config: the scheme and configured credential (None: no auth).
        timeout: seconds for the whole request (connect, send, read).
        max_response_bytes: a longer response body is an error.
        header_provider: extra headers per call, from the call's context.
        transport: an httpx transport (tests use ``httpx.MockTransport``-free local servers,
            but a proxy or mTLS transport goes here).
    """

    def __init__(
        self,
        operation: Operation,
        *,
        auth_config: AuthConfig | None = None,
        timeout: float = 30.0,
        max_response_bytes: int = 4 * 1024 * 1024,
        header_provider: Callable[[ReadonlyContext], Mapping[str, str]] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(
            name=operation.name,
            description=operation.description,
            parameters=operation.json_schema(),
        )
        self.operation = operation
        self.auth_config = auth_config
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.header_provider = header_provider
        self.transport = transport

    @property
    def endpoint(self) -> str:
        """``METHOD base_url/path``."""
        return f"{self.operation.method.upper()} {self.operation.base_url}{self.operation.path}"

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Calls the API; emits the JSON answer (or ``{"text": ...}``, or ``{"error": ...}``)."""
        return from_async(lambda: self._call(dict(args), tool_context))

    async def _call(self, args: dict[str, Any], tool_context: ToolContext) -> Any:
        credential: AuthCredential | None = None
        config = self.auth_config
        if config is not None:
            # Token requests block: off the loop (the context goes along).
            credential = await asyncio.to_thread(resolve_credential, tool_context, config)
            if credential is None:
                return dict(PENDING_AUTH)
        sent = await self._send(args, credential, tool_context)
        if isinstance(sent, dict):
            return sent
        status, body = sent
        if status == 401 and config is not None and credential is not None and self._asks_user():
            # The API rejected the token (revoked, or expired early): refresh it once, else
            # ask the user to sign in again.
            refreshed = await asyncio.to_thread(refreshed_credential, tool_context, config)
            if refreshed is not None:
                sent = await self._send(args, refreshed, tool_context)
                if isinstance(sent, dict):
                    return sent
                status, body = sent
            if status == 401:
                request_credential(tool_context, config)
                return dict(PENDING_AUTH)
        text = body.decode("utf-8", errors="replace")
        if status >= 400:
            return self._error(f"Status Code: {status}, {text[:_ERROR_TEXT_CHARS]}")
        try:
            return json.loads(body) if body else {}
        except ValueError:
            return {"text": text}

    async def _send(
        self, args: dict[str, Any], credential: AuthCredential | None, tool_context: ToolContext
    ) -> tuple[int, bytes] | dict[str, str]:
        """The status and body of the request, or the error for the model."""
        try:
            request = self._request(dict(args), credential, tool_context)
        except ValueError as exc:
            return self._error(str(exc))
        try:
            async with (
                httpx.AsyncClient(
                    timeout=self.timeout, transport=self.transport, verify=_tls()
                ) as client,
                client.stream(**request) as response,
            ):
                return response.status_code, await self._read(response)
        except httpx.TimeoutException as exc:
            return self._error(f"Request timed out ({type(exc).__name__}).")
        except httpx.HTTPError as exc:
            return self._error(f"Request failed ({type(exc).__name__}).")
        except _TooLarge:
            return self._error(f"The response is over {self.max_response_bytes} bytes.")

    def _asks_user(self) -> bool:
        scheme = self.auth_config.auth_scheme if self.auth_config else None
        if isinstance(scheme, OpenIdConnect):
            return True
        return isinstance(scheme, OAuth2) and scheme.flows.authorization_code is not None

    async def _read(self, response: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_response_bytes:
                raise _TooLarge
            chunks.append(chunk)
        return b"".join(chunks)

    def _error(self, message: str) -> dict[str, str]:
        return {
            "error": (
                f"Tool {self.name} execution failed. Analyze this execution error and your "
                "inputs. Retry with adjustments if applicable. But make sure don't retry more "
                f"than 3 times. Execution Error: {message}"
            )
        }

    def _request(
        self, args: dict[str, Any], credential: AuthCredential | None, tool_context: ToolContext
    ) -> dict[str, Any]:
        op = self.operation
        path = op.path
        query: dict[str, Any] = {}
        headers: dict[str, str] = {}
        cookies: dict[str, str] = {}
        body: dict[str, Any] = {}
        body_value: Any = None
        for param in op.params:
            if param.py_name not in args:
                if param.required and "default" in param.schema:
                    args[param.py_name] = param.schema["default"]
                elif param.required:
                    raise ValueError(f"Missing required argument {param.py_name!r}.")
                else:
                    continue
            value = args[param.py_name]
            if param.location == "path":
                path = path.replace("{" + param.name + "}", quote(_text(value), safe=""))
            elif param.location == "query":
                query[param.name] = value
            elif param.location == "header":
                headers[param.name] = _text(value)
            elif param.location == "cookie":
                cookies[param.name] = _text(value)
            elif param.location == "body":
                if op.body_kind == "object":
                    body[param.name] = value
                else:
                    body_value = value
        if credential is not None and self.auth_config is not None:
            _authenticate(self.auth_config, credential, headers, query, cookies)
        if self.header_provider is not None:
            headers.update(self.header_provider(tool_context))
        request: dict[str, Any] = {
            "method": op.method.upper(),
            "url": op.base_url + path,
            "params": query,
            "headers": headers,
        }
        if cookies:
            request["headers"]["cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        if op.body_kind == "object" and body:
            request["json"] = body
        elif op.body_kind in ("array", "value") and body_value is not None:
            request["json"] = body_value
        return request


_TLS: list[ssl.SSLContext] = []


def _tls() -> ssl.SSLContext:
    """One TLS context for every call: building one (loading the CA bundle) costs ~20 ms, so
    a client per call would pay it each time (benchmarks/rest_api_turn.py)."""
    if not _TLS:
        _TLS.append(ssl.create_default_context())
    return _TLS[0]


class _TooLarge(Exception):
    """The response body passed max_response_bytes."""


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _authenticate(
    config: AuthConfig,
    credential: AuthCredential,
    headers: dict[str, str],
    query: dict[str, Any],
    cookies: dict[str, str],
) -> None:
    """Puts the credential where the scheme says (header, query, cookie, Authorization)."""
    scheme = config.auth_scheme
    if isinstance(scheme, APIKey) and credential.api_key:
        place = {"header": headers, "query": query, "cookie": cookies}[scheme.in_.value]
        place[scheme.name] = credential.api_key
    elif credential.http is not None:
        creds = credential.http.credentials
        if credential.http.scheme.lower() == "basic" and creds.username is not None:
            pair = f"{creds.username}:{creds.password or ''}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif creds.token:
            headers["Authorization"] = f"{credential.http.scheme.capitalize()} {creds.token}"
        headers.update(credential.http.additional_headers or {})
    elif credential.oauth2 is not None and credential.oauth2.access_token:
        headers["Authorization"] = f"Bearer {credential.oauth2.access_token}"
    elif isinstance(scheme, HTTPBase) and credential.api_key:
        headers["Authorization"] = f"{scheme.scheme.capitalize()} {credential.api_key}"
