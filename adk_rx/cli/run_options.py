"""The session and turn flags of ``adk-rx run``: ``--state``, ``--timeout``, ``--log-level``,
``--save-session`` and ``--resume`` (google-adk's ``adk run`` flags of the same meaning)."""

from __future__ import annotations

import argparse
import json
import logging
import re
from typing import Any

from adk_rx.errors import ConfigurationError

__all__ = ["DEFAULT_USER_ID", "LOG_LEVELS", "add_run_flags", "parse_state", "parse_timeout"]

DEFAULT_USER_ID = "user"  # the web page's default too, so their sessions are the same user's
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_TIMEOUT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([sm]?)\s*$")


def add_run_flags(run: argparse.ArgumentParser) -> None:
    """Adds the session and turn flags to the ``run`` subcommand's parser."""
    run.add_argument(
        "--state",
        metavar="JSON",
        help='the initial state of a new session, a JSON object (e.g. \'{"user:name": "Ada"}\')',
    )
    run.add_argument(
        "--timeout",
        metavar="S",
        help="cancel a turn that runs longer than S seconds (30, 2.5, 30s or 5m); the session "
        "records TIMEOUT and the chat goes on (a -m run exits 1)",
    )
    run.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        default="WARNING",
        help="what is logged to stderr (default WARNING)",
    )
    run.add_argument(
        "--save-session",
        metavar="FILE",
        help="on exit, write the session to FILE as JSON (google-adk's --save_session format)",
    )
    run.add_argument(
        "--resume",
        metavar="FILE",
        help="start from a session saved with --save-session (by adk-rx or google-adk): a new "
        "session with its state and events, then the chat goes on",
    )


def parse_state(text: str | None) -> dict[str, Any] | None:
    """The ``--state`` JSON object, or None when not given.

    Raises:
        ConfigurationError: the text is not JSON or not an object.
    """
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"--state is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigurationError("--state must be a JSON object, e.g. '{\"key\": 1}'")
    return value


def parse_timeout(text: str | None) -> float | None:
    """The ``--timeout`` in seconds: ``30``, ``2.5``, ``30s`` or ``5m``; None when not given.

    Raises:
        ConfigurationError: the text is not a positive duration.
    """
    if text is None:
        return None
    found = _TIMEOUT.match(text)
    if found is None or float(found[1]) <= 0:
        raise ConfigurationError(
            f"--timeout {text!r}: give a positive number of seconds (30, 2.5, 30s or 5m)"
        )
    return float(found[1]) * (60 if found[2] == "m" else 1)


def log_level(name: str) -> int:
    """The ``logging`` level of a ``--log-level`` name."""
    return logging.getLevelNamesMapping()[name]
