"""Provider failures as :class:`~adk_rx.errors.ModelError`: status, message, retryable.

Each adapter translates a vendor exception once, where it enters, with ``raise ... from exc``;
the retry layer then only looks at ``ModelError.retryable`` and :func:`retry_after`. The HTTP
response stays reachable through ``__cause__``, which is where ``Retry-After`` is read from.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from typing import Any

import httpx

from adk_rx.errors import ModelError

try:  # google-genai sends through httpx2 (a fork of httpx) when it is installed
    import httpx2  # pyright: ignore[reportMissingImports]

    _HTTPX2_TRANSPORT: tuple[type[Exception], ...] = (httpx2.TransportError,)
except ImportError:  # pragma: no cover - depends on the installed google-genai
    _HTTPX2_TRANSPORT = ()

try:  # and through aiohttp, for async calls, whenever aiohttp is installed
    import aiohttp

    _AIOHTTP_TRANSPORT: tuple[type[Exception], ...] = (aiohttp.ClientError,)
except ImportError:  # pragma: no cover - depends on what else is installed
    _AIOHTTP_TRANSPORT = ()

TRANSPORT_ERRORS: tuple[type[Exception], ...] = (
    httpx.TransportError,
    *_HTTPX2_TRANSPORT,
    *_AIOHTTP_TRANSPORT,
)
"""Connection failures, timeouts and cut responses, from any of the HTTP clients."""

__all__ = [
    "RETRYABLE_STATUSES",
    "TRANSPORT_ERRORS",
    "error_message_from_body",
    "http_status_error",
    "is_retryable_status",
    "parse_retry_after",
    "retry_after",
    "transport_error",
]

# 408 request timeout, 409 aborted (Google), 425 too early, 429 rate limited, and server errors
# other than "not implemented" (retrying a 501 never helps).
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth another attempt."""
    return status in RETRYABLE_STATUSES or (status >= 500 and status != 501)


def http_status_error(provider: str, status: int, message: str) -> ModelError:
    """A ModelError for an HTTP error answer; the caller raises it ``from`` the vendor error."""
    return ModelError(
        f"{provider} answered HTTP {status}: {message}",
        status=status,
        retryable=is_retryable_status(status),
    )


def transport_error(provider: str, exc: Exception) -> ModelError:
    """A ModelError for a failed connection, a timeout, or a response cut short.

    All of them are retryable: nothing useful arrived. (The retry layer still refuses to retry
    a stream that already emitted a partial.)
    """
    detail = str(exc) or type(exc).__name__
    return ModelError(
        f"{provider}: connection failed ({type(exc).__name__}: {detail})",
        status=type(exc).__name__,
        retryable=True,
    )


def error_message_from_body(body: str) -> str:
    """The human message in a JSON error body (OpenAI and Google shapes), else the raw body."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return body.strip()[:500] or "(empty body)"
    if isinstance(data, list) and data:
        data = data[0]
    if isinstance(data, Mapping):
        error: Any = data.get("error", data)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return body.strip()[:500]


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


_GOOGLE_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")


def _google_retry_delay(details: Any) -> float | None:
    """``RetryInfo.retryDelay`` ("30s") from a Google error body's ``details`` list."""
    error = details.get("error", details) if isinstance(details, Mapping) else None
    items = error.get("details") if isinstance(error, Mapping) else None
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get("retryDelay"), str):
            match = _GOOGLE_DELAY.match(item["retryDelay"])
            if match:
                return float(match.group(1))
    return None


def retry_after(exc: BaseException) -> float | None:
    """How long the provider asked us to wait before retrying ``exc``, if it said.

    Looks at an explicit ``retry_after`` attribute, then along the ``__cause__`` chain for an
    HTTP response with a ``Retry-After`` header or a Google ``RetryInfo`` detail.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        explicit = getattr(current, "retry_after", None)
        if isinstance(explicit, int | float):
            return float(explicit)
        response = getattr(current, "response", None)
        headers = getattr(response, "headers", None)
        if headers is not None and hasattr(headers, "get"):
            parsed = parse_retry_after(headers.get("retry-after"))
            if parsed is not None:
                return parsed
        google_delay = _google_retry_delay(getattr(current, "details", None))
        if google_delay is not None:
            return google_delay
        current = current.__cause__
    return None
