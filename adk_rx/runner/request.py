"""TurnRequest: one turn asked of a Runner, its arguments checked and typed.

``run_async`` and ``run_live`` check what the caller passed (malformed arguments raise
ConfigurationError at call time, before anything is subscribed) and build one
:class:`TurnRequest`; every subscription of the returned Observable runs one turn of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from adk_rx.errors import ConfigurationError
from adk_rx.live.queue import LiveRequestQueue
from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.state import check_state_delta

__all__ = ["TurnRequest", "live_turn_request", "turn_request"]

_DEFAULT_CONFIG = RunConfig()  # immutable: one instance serves every run without its own


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """What one turn is asked to do.

    Attributes:
        user_id: the session's user.
        session_id: the session the turn runs on.
        message: the user's message (role ``user``); None when resuming without one, and in a
            live session (its turns come through ``live_queue``).
        run_config: how the turn runs (streaming, timeouts, limits).
        state_delta: state written with the user's message.
        resume_id: the earlier invocation this turn continues (a resumable app only).
        live_queue: the live session's requests (``run_live``).
    """

    user_id: str
    session_id: str
    message: types.Content | None
    run_config: RunConfig = _DEFAULT_CONFIG
    state_delta: Mapping[str, Any] = field(default_factory=dict)
    resume_id: str | None = None
    live_queue: LiveRequestQueue | None = None


def _user_message(new_message: Any) -> types.Content:
    if type(new_message) is types.Content and new_message.parts and new_message.role == "user":
        return new_message  # the common case, decided without a call
    if isinstance(new_message, str):
        return types.Content(role="user", parts=[types.Part(text=new_message)])
    if not isinstance(new_message, types.Content):
        raise ConfigurationError(
            f"new_message must be a types.Content (or a str), got {type(new_message).__name__}"
        )
    if not new_message.parts:
        raise ConfigurationError("new_message has no parts; send at least one Part")
    if new_message.role != "user":
        new_message = new_message.model_copy(update={"role": "user"})
    return new_message


def _check_ids(user_id: Any, session_id: Any) -> None:
    if type(user_id) is str and user_id and type(session_id) is str and session_id:
        return  # the common case, decided without a call
    if not isinstance(user_id, str) or not user_id:
        raise ConfigurationError(f"user_id must be a non-empty string, got {user_id!r}")
    if not isinstance(session_id, str) or not session_id:
        raise ConfigurationError(f"session_id must be a non-empty string, got {session_id!r}")


def turn_request(
    *,
    user_id: str,
    session_id: str,
    new_message: types.Content | str | None,
    run_config: RunConfig | None,
    state_delta: Mapping[str, Any] | None,
    invocation_id: str | None,
    resumable: bool,
) -> TurnRequest:
    """The request of ``run_async``'s arguments (``resumable``: the app can resume).

    Raises:
        ConfigurationError: a malformed argument.
    """
    _check_ids(user_id, session_id)
    if invocation_id is not None:
        if not isinstance(invocation_id, str) or not invocation_id:
            raise ConfigurationError(
                f"invocation_id must be a non-empty string, got {invocation_id!r}"
            )
        if not resumable:
            raise ConfigurationError(
                "resuming an invocation needs a resumable app: "
                "App(..., resumability_config=ResumabilityConfig(is_resumable=True))"
            )
    elif new_message is None:
        raise ConfigurationError("new_message is required unless invocation_id is given")
    message = None if new_message is None else _user_message(new_message)
    config = _DEFAULT_CONFIG if run_config is None else run_config
    if config is not _DEFAULT_CONFIG and not isinstance(config, RunConfig):
        raise ConfigurationError("run_config must be a RunConfig")
    delta: Mapping[str, Any] = {}
    if state_delta is not None:
        if not isinstance(state_delta, Mapping):
            raise ConfigurationError(
                f"state_delta must be a mapping of state keys to values, got "
                f"{type(state_delta).__name__}"
            )
        if state_delta:
            delta = dict(state_delta)
            check_state_delta(delta, "the state_delta of run_async")
    return TurnRequest(user_id, session_id, message, config, delta, invocation_id)


def live_turn_request(
    *,
    user_id: str,
    session_id: str,
    live_request_queue: LiveRequestQueue,
    run_config: RunConfig | None,
) -> TurnRequest:
    """The request of ``run_live``'s arguments.

    Raises:
        ConfigurationError: a malformed argument.
    """
    _check_ids(user_id, session_id)
    if not isinstance(live_request_queue, LiveRequestQueue):
        raise ConfigurationError("live_request_queue must be a LiveRequestQueue")
    config = RunConfig(streaming_mode=StreamingMode.BIDI) if run_config is None else run_config
    if not isinstance(config, RunConfig):
        raise ConfigurationError("run_config must be a RunConfig")
    return TurnRequest(user_id, session_id, None, config, live_queue=live_request_queue)
