"""``adk-rx run``: chat with an agent in the terminal, or run one turn with ``-m``.

Sessions live in ``.adk_rx/sessions.db`` under the working folder (artifacts in
``.adk_rx/artifacts``) unless ``--in-memory``. Each turn streams (``StreamingMode.SSE``).
This module sets the run up (flags, stores, the Runner); the turns are the
:class:`~adk_rx.cli.chat.Chat`'s.

Ctrl-C during a turn disposes the run's subscription: the Runner cancels the invocation and
stores the records that keep the session valid (a response ``{"error": "cancelled"}`` for
each open tool call, then an event with ``error_code="CANCELLED"``); the command waits for
those to be stored and shows them. Interactive chat then returns to the prompt (EOF at the
prompt exits with 0, Ctrl-C at the prompt with 130); a one-shot ``-m`` run exits with 130.

``--state JSON`` is a new session's initial state, ``--timeout S`` a deadline per turn
(``RunConfig.timeout``), ``--save-session FILE`` writes the session on exit and ``--resume
FILE`` starts from such a file (see :mod:`adk_rx.cli.session_file`). The default user id is
``user``, the web page's, so a session made in one shows in the other.

``--session-id S`` resumes a stored session (see :mod:`adk_rx.cli.resume`): the chat shows
its event count and last turns, then asks for what it waits for (a confirmation, a
long-running tool's result) before the prompt. An unknown id is an error unless ``--create``.

Exit status: 0 on success, 1 when the turn fails (the run errors or its last event carries
an error code), 2 for a bad command line or an agent that cannot be loaded, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from google.genai import types

from adk_rx.apps import App
from adk_rx.artifacts.base import BaseArtifactService
from adk_rx.artifacts.file import FileArtifactService
from adk_rx.artifacts.in_memory import InMemoryArtifactService
from adk_rx.auth import BaseCredentialService, InMemoryCredentialService, SqlCredentialService
from adk_rx.auth.sql_credential_service import KEY_ENV
from adk_rx.cli.chat import EXIT_USAGE, Chat, Outcome
from adk_rx.cli.models import check_override, override_model
from adk_rx.cli.render import ConsoleRenderer, JsonlRenderer, Renderer
from adk_rx.cli.resume import history_lines, open_session
from adk_rx.cli.run_options import DEFAULT_USER_ID, log_level, parse_state, parse_timeout
from adk_rx.cli.session_file import restore_session, save_session_file
from adk_rx.cli.stats import TurnStats
from adk_rx.errors import AdkRxError, ConfigurationError
from adk_rx.events import CREDENTIAL_FUNCTION
from adk_rx.flows.contents import CONFIRMATION_FUNCTION
from adk_rx.loading.loader import AgentLoadError, import_traceback, load_target_app
from adk_rx.memory.in_memory import InMemoryMemoryService
from adk_rx.runner import Runner
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.telemetry.setup import SdkSetup, setup_sdk

__all__ = ["Chat", "Outcome", "run_command"]

STATE_DIR = ".adk_rx"


def run_command(args: argparse.Namespace) -> int:
    """Runs ``adk-rx run`` with parsed arguments; returns the exit status."""
    logging.basicConfig(
        level=log_level(args.log_level), stream=sys.stderr, format="%(name)s: %(message)s"
    )
    renderer: Renderer = JsonlRenderer() if args.jsonl else ConsoleRenderer()
    try:
        state = parse_state(args.state)
        timeout = parse_timeout(args.timeout)
        _check_session_flags(args, state)
        override = override_model(args.model, args.replay)
        app = load_target_app(args.agent)
        if override is not None:
            check_override(app.root_agent, override)
        sdk = setup_sdk(otlp_endpoint=args.otlp_endpoint, keep_spans=args.trace)
        if args.trace and sdk is None:
            raise ConfigurationError(
                "--trace needs the OpenTelemetry SDK: pip install 'adk_rx[otel]'"
            )
        runner = _runner(app, in_memory=args.in_memory, sdk=sdk)
        if sdk is not None:
            sdk.install_globally()  # a tool's own spans go to the same place
        user_id = args.user_id or DEFAULT_USER_ID
        if args.resume:
            resumed = restore_session(
                runner.session_service, app_name=runner.app_name, user_id=user_id, path=args.resume
            )
            session_id = resumed.id
        else:
            session_id, resumed = open_session(
                runner, user_id, args.session_id, create=args.create, state=state
            )
    except AdkRxError as exc:
        if isinstance(exc, AgentLoadError) and exc.__cause__ is not None:
            print(import_traceback(exc.__cause__), file=sys.stderr, end="")
        renderer.failure(str(exc))
        return EXIT_USAGE
    renderer.note(
        f"{runner.app_name}: session {session_id} of user {user_id}"
        + ("" if args.in_memory else f" in {Path(STATE_DIR) / 'sessions.db'}")
    )
    chat = Chat(runner, user_id, session_id, renderer, timeout=timeout)
    if resumed is not None:
        for line in history_lines(resumed):
            renderer.note(line)
        chat.note_pending(resumed.events)
    chat.spans = sdk.span_store if sdk is not None else None
    try:
        if args.message is not None:
            outcome = chat.turn(args.message)
            if chat.pending:
                how = _how(args, session_id)
                renderer.note(f"the agent waits for {_waits_for(chat.pending)}: {how}")
            return outcome.value
        return chat.interactive(ask=not args.jsonl)
    finally:
        if args.save_session:
            _save(runner, user_id, session_id, args.save_session, renderer)
        if sdk is not None:
            sdk.shutdown()  # exports what is still buffered


def _check_session_flags(args: argparse.Namespace, state: dict[str, Any] | None) -> None:
    if args.resume and (args.session_id or state is not None):
        raise ConfigurationError("--resume starts a new session: give no --session-id or --state")
    if state is not None and args.session_id and not args.create:
        raise ConfigurationError("--state is the state of a new session: add --create")


def _how(args: argparse.Namespace, session_id: str) -> str:
    """How to answer a pending call later: the stored session, or the saved file."""
    if args.save_session:
        return f"answer it with adk-rx run {args.agent} --resume {args.save_session}"
    if args.in_memory:
        return (
            "the session was in memory and is gone; run without --in-memory, or with "
            "--save-session FILE and then --resume FILE, to answer it later"
        )
    return f"answer it with adk-rx run {args.agent} --session-id {session_id}"


def _save(runner: Runner, user_id: str, session_id: str, path: str, renderer: Renderer) -> None:
    session = runner.session_service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    ).run()
    if session is None:
        renderer.failure(f"session {session_id} is gone; nothing saved")
        return
    try:
        renderer.note(f"session saved to {save_session_file(session, path)}")
    except AdkRxError as exc:
        renderer.failure(str(exc))


def _runner(app: App, *, in_memory: bool, sdk: SdkSetup | None) -> Runner:
    sessions: BaseSessionService
    artifacts: BaseArtifactService
    if in_memory:
        sessions, artifacts = InMemorySessionService(), InMemoryArtifactService()
    else:
        state = Path.cwd() / STATE_DIR
        state.mkdir(exist_ok=True)
        sessions = SqlSessionService(f"sqlite:///{state / 'sessions.db'}")
        artifacts = FileArtifactService(state / "artifacts")
    credentials: BaseCredentialService = InMemoryCredentialService()
    if not in_memory and os.environ.get(KEY_ENV):  # kept between runs, encrypted at rest
        credentials = SqlCredentialService(f"sqlite:///{Path.cwd() / STATE_DIR / 'sessions.db'}")
    return Runner(
        app=app.replace(plugins=(*app.plugins, TurnStats(app.pricing))),
        session_service=sessions,
        artifact_service=artifacts,
        memory_service=InMemoryMemoryService(),
        credential_service=credentials,
        tracer_provider=sdk.tracer_provider if sdk is not None else None,
        meter_provider=sdk.meter_provider if sdk is not None else None,
    )


def _waits_for(pending: list[types.FunctionCall]) -> str:
    names = {call.name for call in pending}
    wanted = [
        what
        for what, present in (
            ("a confirmation", CONFIRMATION_FUNCTION in names),
            ("a sign-in", CREDENTIAL_FUNCTION in names),
            ("a tool result", bool(names - {CONFIRMATION_FUNCTION, CREDENTIAL_FUNCTION})),
        )
        if present
    ]
    return " or ".join(wanted) or "a tool result"
