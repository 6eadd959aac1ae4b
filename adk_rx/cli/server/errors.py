"""The errors a server request can end in, each with the HTTP status it answers.

They sit in adk_rx's one tree, under :class:`~adk_rx.errors.ConfigurationError` (the caller
sent something the server will not take)::

    ConfigurationError
    └── RequestRejectedError        a request the server refuses (400)
        ├── ForbiddenStateError     a client wrote state it may not write (403)
        ├── BodyTimeoutError        the body did not arrive in time (408)
        └── BodyTooLargeError       the body is larger than the server takes (413)
"""

from __future__ import annotations

from adk_rx.errors import ConfigurationError

__all__ = ["BodyTimeoutError", "BodyTooLargeError", "ForbiddenStateError", "RequestRejectedError"]


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
