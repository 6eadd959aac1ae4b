"""What the server takes from a client: checked at the edge, before anything is stored.

The library trusts its caller; the server does not trust its clients. Every request body
goes through :func:`~adk_rx.cli.server.edge.body_reader.read_json` and every id through
:func:`check_id`, so what reaches the Runner and the stores is bounded and encodable:

* the body is at most ``Limits.max_body_bytes`` (413 past it, read no further), arrives
  within ``Limits.body_timeout`` (408) and holds at most ``Limits.max_json_items`` items
  (413, counted before it is parsed);
* it is standard JSON: no ``NaN`` / ``Infinity`` (nor a number too large for a float), which
  ``JSON.parse`` in every other client of the app would choke on once stored;
* nested at most ``Limits.max_json_depth`` deep (a 100k-deep body is a 400, not a
  RecursionError);
* no lone surrogate in any string (it cannot be encoded as UTF-8 for a store or a reply);
* ids carry no control characters (PostgreSQL refuses NUL), a new session or user is never
  named ``.`` or ``..``, and artifact names are plain file names (no ``..``, no ``/``).

State a client sends (a new session's ``state``, a run's ``state_delta``) is bounded by
``Limits.max_state_bytes`` and may not hold ``app:`` keys: those are shared by every user of
the app, so only the app's own code writes them. ``user:`` keys are allowed: they go to the
state of the path's user, the only user whose paths the client reaches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

import pydantic
from google.genai import types

from adk_rx.artifacts.in_memory import check_artifact_filename
from adk_rx.errors import ConfigurationError
from adk_rx.state import State

from ..errors import ForbiddenStateError, RequestRejectedError
from ..limits import Limits

__all__ = [
    "ARTIFACT_NAME_SCHEMA",
    "ID_SCHEMA",
    "MAX_CURSOR",
    "check_artifact_name",
    "check_client_state",
    "check_id",
    "check_message",
    "check_new_id",
    "check_part_count",
    "parse_cursor",
    "parse_model",
]

MAX_CURSOR = 2**63 - 1
_MAX_ID_LENGTH = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


ID_SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": _MAX_ID_LENGTH,
    "pattern": r"^[^\x00-\x1f\x7f]+$",
}
"""What :func:`check_id` takes, as a JSON schema for ``/openapi.json`` (JSON text holds no
lone surrogate, so the pattern need not say it)."""
ARTIFACT_NAME_SCHEMA: dict[str, Any] = {
    **ID_SCHEMA,
    # No "..": each dot is followed by another character (or ends the name), and one
    # character at least is not a dot. ``user:`` names a file of the user's own.
    "pattern": r"^(\.?[^./\\\x00-\x1f\x7f])+\.?$",
}
"""What :func:`check_artifact_name` takes, as a JSON schema."""


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


def check_new_id(value: str, what: str) -> str:
    """The id of a session (or user) a client creates: :func:`check_id`, and not ``.`` or
    ``..``, which name a directory itself in URLs and in the file artifact store.

    Raises:
        RequestRejectedError: what :func:`check_id` refuses, ``.`` and ``..``.
    """
    check_id(value, what)
    if value in (".", ".."):
        raise RequestRejectedError(f"{what} may not be {value!r} (it names a directory)")
    return value


def check_artifact_name(name: str) -> str:
    """An artifact file name: one plain path component (``user:`` prefix allowed), as every
    artifact service takes it (see :func:`~adk_rx.artifacts.in_memory.check_artifact_filename`).

    Raises:
        RequestRejectedError: empty, ``.``, holding ``..``, a slash, a backslash or a control
            character, or too long.
    """
    check_id(name, "the artifact name")
    try:
        return check_artifact_filename(name)
    except ConfigurationError as exc:
        raise RequestRejectedError(str(exc)) from exc


M = TypeVar("M", bound=pydantic.BaseModel)


def parse_model(model: type[M], data: Any, what: str) -> M:
    """``data`` (a client's JSON) as ``model``: google-genai's ``Content`` or ``Part``.

    Raises:
        RequestRejectedError: it does not fit; the message names ``what`` and says why.
    """
    try:
        return model.model_validate(data)
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        raise RequestRejectedError(f"{what} is not a valid {model.__name__}: {exc}") from exc
    except AttributeError as exc:
        # google-genai's enum fields raise this for a value that is not a string (their
        # _missing_ calls .upper()), past pydantic, which would have named the field.
        raise RequestRejectedError(
            f"{what} is not a valid {model.__name__}: a field that takes one of a set of "
            f"names holds something else ({exc})"
        ) from exc


def check_client_state(state: Mapping[str, Any], what: str, limits: Limits) -> None:
    """State a client writes: bounded, and no ``app:`` keys.

    Raises:
        ForbiddenStateError: an ``app:`` key.
        RequestRejectedError: larger than ``limits.max_state_bytes`` as JSON, or a key with a
            NUL character (a ``user:`` key is a column value in a SQL store, and PostgreSQL
            refuses NUL in text).
    """
    if any("\x00" in key for key in state):
        raise RequestRejectedError(f"{what} has a key with a NUL character")
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
    check_part_count(len(parts), limits)
    if any(part.function_call is not None for part in parts):
        raise RequestRejectedError(
            "new_message may not carry function_call parts (calls come from the model); "
            "answer a call with a function_response part"
        )


def check_part_count(count: int, limits: Limits) -> None:
    """At most ``limits.max_parts`` parts in one message.

    Raises:
        RequestRejectedError: more.
    """
    if count > limits.max_parts:
        raise RequestRejectedError(
            f"new_message has {count} parts, more than the server's limit ({limits.max_parts})"
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
