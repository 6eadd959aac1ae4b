"""The server's bounds: request sizes, run deadlines, invocation logs and their retention.

:class:`Limits` holds them all; ``adk-rx api-server`` / ``web`` take each as a command-line
option, whose default comes from an environment variable when it is set (``--help`` lists
both), so a deployment can set them either way.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Limits", "add_limit_options", "limits_from_args"]

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds of the server: requests, runs, invocation logs and their readers.

    Attributes:
        max_body_bytes: largest request body; a larger one answers 413.
        max_parts: most parts in one ``new_message``.
        max_state_bytes: largest ``state`` (new session) or ``state_delta`` (run) a client
            sends, counted as JSON bytes.
        max_json_depth: deepest nesting of objects and arrays in a request body.
        max_json_items: most array elements and object members in a request body, counted
            before it is parsed (a larger one answers 413; see
            :mod:`adk_rx.cli.server.edge.body_reader`).
        body_timeout: seconds a client may take to send a request body; a slower one
            answers 408 before anything is started; None for no deadline.
        run_timeout: seconds a run the server starts may take before it is cancelled and
            recorded as ``TIMEOUT`` (a hung model frees its session); None for no deadline.
        log_capacity: events kept per invocation for readers and reattaching clients.
        finished_ttl: seconds a finished invocation's log stays readable.
        kept_per_user: finished invocation logs kept per user; older ones are read back
            from the stored events of their session.
        kept_bytes: memory for finished invocation logs of all users together; past it, the
            user holding the most loses its oldest first.
        max_finished: finished invocation logs kept in all (a count bound besides the
            memory bound; a kept log costs a few KB beyond its JSON, so this bound is what
            holds a busy server's memory flat: older logs leave tombstones and are read
            back from the store).
        max_running: runs at once; more answer 503.
        heartbeat: seconds of silence after which an SSE stream sends a comment frame.
        batch_events: most events written to one client in one send.
        start_timeout: seconds a request waits for a run to store its user message.
    """

    max_body_bytes: int = 8 * MiB
    max_parts: int = 64
    max_state_bytes: int = 1 * MiB
    max_json_depth: int = 64
    max_json_items: int = 100_000
    body_timeout: float | None = 30.0
    run_timeout: float | None = 300.0
    log_capacity: int = 4096
    finished_ttl: float = 600.0
    kept_per_user: int = 64
    kept_bytes: int = 256 * MiB
    max_finished: int = 1_000
    max_running: int = 256
    heartbeat: float = 15.0
    batch_events: int = 256
    start_timeout: float = 30.0


@dataclass(frozen=True, slots=True)
class _Option:
    flag: str
    field: str
    env: str
    type: Callable[[str], int | float]
    help: str


_OPTIONS = (
    _Option(
        "--max-body-bytes",
        "max_body_bytes",
        "ADK_RX_MAX_BODY_BYTES",
        int,
        "largest request body in bytes; larger ones answer 413",
    ),
    _Option("--max-parts", "max_parts", "ADK_RX_MAX_PARTS", int, "most parts in one message"),
    _Option(
        "--max-state-bytes",
        "max_state_bytes",
        "ADK_RX_MAX_STATE_BYTES",
        int,
        "largest state / state_delta a client sends, in bytes of JSON",
    ),
    _Option(
        "--max-json-depth",
        "max_json_depth",
        "ADK_RX_MAX_JSON_DEPTH",
        int,
        "deepest nesting of a request body's JSON",
    ),
    _Option(
        "--max-json-items",
        "max_json_items",
        "ADK_RX_MAX_JSON_ITEMS",
        int,
        "most array elements and object members in a request body's JSON",
    ),
    _Option(
        "--body-timeout",
        "body_timeout",
        "ADK_RX_BODY_TIMEOUT",
        float,
        "seconds a client may take to send a request body (408 past it); 0: no deadline",
    ),
    _Option(
        "--run-timeout",
        "run_timeout",
        "ADK_RX_RUN_TIMEOUT",
        float,
        "seconds a run may take before it is cancelled and recorded as TIMEOUT; 0: no deadline",
    ),
    _Option(
        "--invocation-retention",
        "finished_ttl",
        "ADK_RX_INVOCATION_RETENTION",
        float,
        "seconds a finished invocation's event log stays readable for reattaching",
    ),
    _Option(
        "--kept-per-user",
        "kept_per_user",
        "ADK_RX_KEPT_PER_USER",
        int,
        "finished invocation logs kept per user (older ones are read from the stored events)",
    ),
    _Option(
        "--kept-log-bytes",
        "kept_bytes",
        "ADK_RX_KEPT_LOG_BYTES",
        int,
        "memory for finished invocation logs, all users together",
    ),
)


def _positive(kind: Callable[[str], int | float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        value = kind(text)
        if value < 0:
            raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its error message
    return parse


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """Adds one option per configurable bound, defaulting to its environment variable."""
    group = parser.add_argument_group("limits")
    defaults = Limits()
    for option in _OPTIONS:
        builtin = getattr(defaults, option.field)
        group.add_argument(
            option.flag,
            dest=option.field,
            metavar="N",
            type=_positive(option.type),
            default=os.environ.get(option.env, str(0 if builtin is None else builtin)),
            help=f"{option.help} (default: %(default)s; env {option.env})",
        )


def limits_from_args(args: argparse.Namespace) -> Limits:
    """The :class:`Limits` of parsed options (a timeout of 0 means no deadline)."""
    values = {option.field: getattr(args, option.field) for option in _OPTIONS}
    for deadline in ("run_timeout", "body_timeout"):
        if not values[deadline]:
            values[deadline] = None
    return dataclasses.replace(Limits(), **values)
