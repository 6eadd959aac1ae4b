"""What the server takes from a client: checked at the edge, before anything is stored.

The library trusts its caller; the server does not trust its clients. Every request body
goes through :func:`read_json` and every id through :func:`check_id`, so what reaches the
Runner and the stores is bounded and encodable:

* the body is at most ``Limits.max_body_bytes`` (413 past it, read no further);
* it is standard JSON: no ``NaN`` / ``Infinity`` (nor a number too large for a float), which
  ``JSON.parse`` in every other client of the app would choke on once stored;
* nested at most ``Limits.max_json_depth`` deep (a 100k-deep body is a 400, not a
  RecursionError);
* no lone surrogate in any string (it cannot be encoded as UTF-8 for a store or a reply);
* ids carry no control characters (PostgreSQL refuses NUL) and artifact names are plain
  file names (no ``..``, no ``/``).

State a client sends (a new session's ``state``, a run's ``state_delta``) is bounded by
``Limits.max_state_bytes`` and may not hold ``app:`` keys: those are shared by every user of
the app, so only the app's own code writes them. ``user:`` keys are allowed: they go to the
state of the path's user, the only user whose paths the client reaches.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from google.genai import types
from starlette.requests import Request

from adk_rx.state import State

from .errors import BodyTooLargeError, ForbiddenStateError, RequestRejectedError
from .limits import Limits

__all__ = [
    "MAX_CURSOR",
    "check_artifact_name",
    "check_client_state",
    "check_id",
    "check_message",
    "decode_json",
    "parse_cursor",
    "read_json",
]

MAX_CURSOR = 2**63 - 1
_MAX_ID_LENGTH = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


async def read_json(request: Request, limits: Limits) -> Any:
    """The request's JSON body, checked (an empty body reads as None).

    Raises:
        BodyTooLargeError: the body is larger than ``limits.max_body_bytes``.
        RequestRejectedError: it is not standard JSON, is nested too deep, or holds a
            string that is not valid Unicode.
    """
    return decode_json(await _read_body(request, limits.max_body_bytes), limits)


def decode_json(raw: str | bytes, limits: Limits) -> Any:
    """A body (or WebSocket frame) already read and bounded in size, parsed and checked like
    :func:`read_json`'s (an empty one reads as None).

    Raises:
        RequestRejectedError: not standard JSON, nested too deep, or a string that is not
            valid Unicode.
    """
    if not raw.strip():
        return None
    try:
        data = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError as exc:
        raise _too_deep(limits) from exc
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, the non-finite numbers above
        raise RequestRejectedError(f"the body is not JSON: {exc}") from exc
    _check_tree(data, limits)
    return data


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> BodyTooLargeError:
    return BodyTooLargeError(f"the body is larger than {limit} bytes (the server's limit)")


def _too_deep(limits: Limits) -> RequestRejectedError:
    return RequestRejectedError(
        f"the body's JSON is nested deeper than {limits.max_json_depth} levels"
    )


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not standard JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _check_tree(data: Any, limits: Limits) -> None:
    """Depth and string checks over the parsed body, iteratively (no recursion)."""
    pending: list[tuple[Any, int]] = [(data, 0)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            _check_text(value)
        elif isinstance(value, dict | list):
            if depth >= limits.max_json_depth:
                raise _too_deep(limits)
            if isinstance(value, dict):
                for key, item in value.items():
                    _check_text(key)
                    pending.append((item, depth + 1))
            else:
                pending.extend((item, depth + 1) for item in value)


def _check_text(text: str) -> None:
    if not text.isascii() and _SURROGATE.search(text):
        raise RequestRejectedError(
            "the body holds a string with a lone surrogate (\\ud800-\\udfff escape that is "
            "not part of a pair); it is not valid Unicode"
        )


def check_id(value: str, what: str) -> str:
    """An app, user, session or invocation id from a path or a body.

    Raises:
        RequestRejectedError: empty, too long, or with a control character or surrogate.
    """
    if not value:
        raise RequestRejectedError(f"{what} must not be empty")
    if len(value) > _MAX_ID_LENGTH:
        raise RequestRejectedError(f"{what} is longer than {_MAX_ID_LENGTH} characters")
    if _CONTROL.search(value) or _SURROGATE.search(value):
        raise RequestRejectedError(f"{what} {value!r} holds a control character")
    return value


def check_artifact_name(name: str) -> str:
    """An artifact file name: one plain path component.

    Raises:
        RequestRejectedError: ``.``, ``..``, a slash or backslash, or a control character.
    """
    check_id(name, "the artifact name")
    if name in (".", "..") or "/" in name or "\\" in name:
        raise RequestRejectedError(f"the artifact name {name!r} is not a plain file name")
    return name


def check_client_state(state: Mapping[str, Any], what: str, limits: Limits) -> None:
    """State a client writes: bounded, and no ``app:`` keys.

    Raises:
        ForbiddenStateError: an ``app:`` key.
        RequestRejectedError: larger than ``limits.max_state_bytes`` as JSON.
    """
    shared = sorted(key for key in state if key.startswith(State.APP_PREFIX))
    if shared:
        raise ForbiddenStateError(
            f"{what} may not write app: keys ({', '.join(shared[:5])}): app state is shared "
            "by every user of the app and only the app's own code writes it"
        )
    size = len(json.dumps(state, separators=(",", ":"), default=str))
    if size > limits.max_state_bytes:
        raise RequestRejectedError(
            f"{what} is {size} bytes of JSON, more than the server's limit "
            f"({limits.max_state_bytes})"
        )


def check_message(message: types.Content, limits: Limits) -> None:
    """A client's ``new_message``: bounded, and no function calls.

    A function call comes from a model, never from a client (a client answers one with a
    ``function_response`` part); a call in the user's message would be left without a
    response.

    Raises:
        RequestRejectedError: too many parts, or a ``function_call`` part.
    """
    parts = message.parts or []
    if len(parts) > limits.max_parts:
        raise RequestRejectedError(
            f"new_message has {len(parts)} parts, more than the server's limit ({limits.max_parts})"
        )
    if any(part.function_call is not None for part in parts):
        raise RequestRejectedError(
            "new_message may not carry function_call parts (calls come from the model); "
            "answer a call with a function_response part"
        )


def parse_cursor(raw: str) -> int:
    """An SSE cursor (``after=`` / ``Last-Event-ID``): an integer in 0 .. 2**63 - 1.

    Raises:
        RequestRejectedError: anything else.
    """
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or int(text) > MAX_CURSOR:
        raise RequestRejectedError(
            f"after must be an event cursor (an integer from 0 to {MAX_CURSOR}), got {raw!r}"
        )
    return int(text)
