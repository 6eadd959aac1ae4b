"""The errors a server request can end in, each with the HTTP status it answers.

They sit in adk_rx's one tree, under :class:`~adk_rx.errors.ConfigurationError` (the caller
sent something the server will not take)::

    ConfigurationError
    └── RequestRejectedError        a request the server refuses (400)
        ├── ForbiddenStateError     a client wrote state it may not write (403)
        ├── BodyTimeoutError        the body did not arrive in time (408)
        └── BodyTooLargeError       the body is larger than the server takes (413)
    AgentLoadError
    └── AppLoadFailedError          the app a request names failed to load (500)

A run that fails answers the status :func:`failure_status` gives its error.
"""

from __future__ import annotations

from adk_rx.errors import (
    AgentLoadError,
    CircuitOpenError,
    ConfigurationError,
    InvocationNotFoundError,
    ModelError,
    SessionNotFoundError,
    StoreError,
)

__all__ = [
    "AppLoadFailedError",
    "BodyTimeoutError",
    "BodyTooLargeError",
    "ForbiddenStateError",
    "RequestRejectedError",
    "failure_status",
]


class RequestRejectedError(ConfigurationError):
    """A request the server refuses; ``status`` is its HTTP answer."""

    status: int = 400


class ForbiddenStateError(RequestRejectedError):
    """A client wrote ``app:`` state, which only the app's own code may write."""

    status = 403


class BodyTimeoutError(RequestRejectedError):
    """The request body did not arrive within ``Limits.body_timeout``."""

    status = 408


class BodyTooLargeError(RequestRejectedError):
    """The request body is over ``Limits.max_body_bytes`` or ``Limits.max_json_items``."""

    status = 413


class AppLoadFailedError(AgentLoadError):
    """500: the app a request names failed to load.

    ``traceback`` (the user's own frames; empty when no code of theirs raised) is answered
    beside the detail by ``adk-rx web`` only, for its page: an api-server keeps its files to
    itself (None).
    """

    status = 500

    def __init__(self, detail: str, traceback: str | None) -> None:
        super().__init__(detail)
        self.traceback = traceback


def failure_status(error: BaseException) -> int:
    """The HTTP status of a request whose run failed with ``error``.

    * 400 for a ConfigurationError: the run refused what the request asked (a function
      response that answers no open call, an invocation that cannot be resumed); a
      RequestRejectedError answers its own status;
    * 404 when the session or the invocation to resume is not there;
    * 502 when the model's provider answered the call with an error or could not be
      reached (a ModelError with a ``status``; the provider's message is in the error): the
      server stands between the client and the provider, which is who failed;
    * 503 when the store failed (its connection was killed, it had none to spare) or a
      circuit breaker refused the model call for now: the same request may succeed later;
    * 500 for anything else.
    """
    if isinstance(error, RequestRejectedError):
        return error.status
    if isinstance(error, ConfigurationError):
        return 400
    if isinstance(error, SessionNotFoundError | InvocationNotFoundError):
        return 404
    if isinstance(error, StoreError | CircuitOpenError):
        return 503
    if isinstance(error, ModelError) and error.status is not None:
        return 502
    return 500
