"""``adk-rx run``: chat with an agent in the terminal, or run one turn with ``-m``.

Sessions live in ``.adk_rx/sessions.db`` under the working folder (artifacts in
``.adk_rx/artifacts``) unless ``--in-memory``. Each turn streams (``StreamingMode.SSE``).

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
import enum
import logging
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from reactivex import operators as ops

from adk_rx.apps import App
from adk_rx.artifacts.base import BaseArtifactService
from adk_rx.artifacts.file import FileArtifactService
from adk_rx.artifacts.in_memory import InMemoryArtifactService
from adk_rx.auth import BaseCredentialService, InMemoryCredentialService, SqlCredentialService
from adk_rx.auth.sql_credential_service import KEY_ENV
from adk_rx.cli.models import check_override, override_model
from adk_rx.cli.render import ConsoleRenderer, JsonlRenderer, Renderer
from adk_rx.cli.resume import (
    answer_part,
    describe_pending,
    history_lines,
    open_session,
    pending_calls,
)
from adk_rx.cli.run_options import DEFAULT_USER_ID, log_level, parse_state, parse_timeout
from adk_rx.cli.session_file import restore_session, save_session_file
from adk_rx.cli.stats import TurnStats
from adk_rx.errors import AdkRxError, ConfigurationError
from adk_rx.events import CREDENTIAL_FUNCTION, Event
from adk_rx.flows.contents import CONFIRMATION_FUNCTION
from adk_rx.loading.loader import AgentLoadError, import_traceback, load_target_app
from adk_rx.memory.in_memory import InMemoryMemoryService
from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.runner import Runner
from adk_rx.rx.iterators import to_iterable
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.sessions.session import GetSessionConfig
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.telemetry.setup import SdkSetup, setup_sdk
from adk_rx.telemetry.tree_text import span_tree_lines

if TYPE_CHECKING:
    from adk_rx.telemetry.span_store import SpanStore

__all__ = ["Chat", "Outcome", "run_command"]

STATE_DIR = ".adk_rx"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_REPAIR_WAIT = 10.0  # seconds to wait for the cancellation records to be stored

log = logging.getLogger("adk_rx.cli")


class Outcome(enum.Enum):
    """How a turn ended."""

    OK = EXIT_OK
    FAILED = EXIT_FAILED
    CANCELLED = EXIT_INTERRUPTED


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


class Chat:
    """Turns on one session, shown through a renderer."""

    def __init__(
        self,
        runner: Runner,
        user_id: str,
        session_id: str,
        renderer: Renderer,
        *,
        timeout: float | None = None,
    ):
        self.runner = runner
        self.timeout = timeout
        self.user_id = user_id
        self.session_id = session_id
        self.renderer = renderer
        self.stats = next(p for p in runner.plugin_manager.plugins if isinstance(p, TurnStats))
        # What the session waits for: confirmations and long-running calls without a response.
        self.pending: list[types.FunctionCall] = []
        self._asked_in: dict[str, str] = {}  # pending call id -> the invocation that made it
        self.spans: SpanStore | None = None  # --trace: each turn's span tree is printed

    def interactive(self, *, ask: bool) -> int:
        """Reads messages until EOF or Ctrl-C at the prompt; returns the exit status.

        Args:
            ask: prompt for messages and confirmations (the console). Without it (``--jsonl``)
                nothing but events is written to stdout, and a line holding a JSON object is
                sent as a ``types.Content`` (e.g. a FunctionResponse answering a confirmation).
        """
        prompt = "you> " if ask and sys.stdin.isatty() else ""
        if prompt:
            self.renderer.note("Ctrl-C cancels a turn; Ctrl-D or Ctrl-C at the prompt exits.")
        while True:
            try:
                message: types.Content | str = self._answers() if ask and self.pending else ""
                if not message:
                    message = input(prompt).strip()
            except EOFError:
                if prompt:
                    print()
                return EXIT_OK
            except KeyboardInterrupt:
                if prompt:
                    print()
                return EXIT_INTERRUPTED
            if isinstance(message, str) and not ask and message.startswith("{"):
                try:
                    message = types.Content.model_validate_json(message)
                except ValueError as exc:
                    self.renderer.failure(f"not a Content JSON object: {exc}")
                    continue
            if message:
                self.turn(message, invocation_id=self._paused_invocation(message))

    def note_pending(self, events: list[Event]) -> None:
        """Adds the calls of ``events`` that wait for the user, and where each was made."""
        for call in pending_calls(events):
            self.pending.append(call)
        for event in events:
            for call in event.get_function_calls():
                if call.id:
                    self._asked_in[call.id] = event.invocation_id

    def _paused_invocation(self, message: types.Content | str) -> str | None:
        """The invocation a resumable app continues: the one whose call ``message`` answers.

        (google-adk's Runner infers it from the function response; the chat passes it.)
        """
        if isinstance(message, str) or not self.runner.services.is_resumable:
            return None
        ids = {
            self._asked_in.get(p.function_response.id or "")
            for p in message.parts or []
            if p.function_response
        }
        ids.discard(None)
        return ids.pop() if len(ids) == 1 else None

    def _answers(self) -> types.Content | str:
        """Asks for each pending call; the answers as one message ("" when all were skipped)."""
        parts: list[types.Part] = []
        pending, self.pending = self.pending, []
        for call in pending:
            question = describe_pending(call)
            if call.name == CONFIRMATION_FUNCTION:
                reply = input(f"{question} [y/N] ")
            elif call.name == CREDENTIAL_FUNCTION:
                reply = input(f"{question}: ")
            else:
                reply = input(f"{question}; its result (JSON or text, empty to leave it): ")
            part = answer_part(call, reply)
            if part is not None:
                parts.append(part)
        return types.Content(role="user", parts=parts) if parts else ""

    def turn(self, message: types.Content | str, invocation_id: str | None = None) -> Outcome:
        """Runs one invocation to its end (or continues ``invocation_id``), or until Ctrl-C
        cancels it."""
        self.stats.start()
        self.pending = []
        seen: set[str] = set()
        last: Event | None = None
        events = to_iterable(
            self.runner.run_async(
                user_id=self.user_id,
                session_id=self.session_id,
                new_message=message,
                run_config=RunConfig(streaming_mode=StreamingMode.SSE, timeout=self.timeout),
                invocation_id=invocation_id,
            ),
            max_buffer=256,
        )
        invocation_id = invocation_id or ""
        try:
            for event in events:
                invocation_id = event.invocation_id
                self.renderer.event(event)
                if not event.partial:
                    seen.add(event.id)
                    last = event
                    self.note_pending([event])
        except KeyboardInterrupt:
            _close(events)  # disposing the subscription cancels the invocation
            self._show_cancellation(seen)
            self._show_trace(invocation_id)
            return Outcome.CANCELLED
        except Exception as exc:
            self.renderer.failure(_describe(exc))
            self._show_trace(invocation_id)
            return Outcome.FAILED
        finally:
            _close(events)
        self.renderer.turn_end(self.stats.summary())
        self._show_trace(invocation_id)
        if last is not None and last.error_code:
            return Outcome.FAILED
        return Outcome.OK

    def _show_trace(self, invocation_id: str) -> None:
        if self.spans is not None and invocation_id:
            for line in span_tree_lines(self.spans.spans_of_invocation(invocation_id)):
                self.renderer.note(line)

    def _show_cancellation(self, seen: set[str]) -> None:
        """Waits until the Runner stored the cancellation records, then shows them."""
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the records are short
        try:
            self._wait_idle()
            session = (
                self.runner.session_service.get_session(
                    app_name=self.runner.app_name,
                    user_id=self.user_id,
                    session_id=self.session_id,
                    config=GetSessionConfig(num_recent_events=20),
                )
                .pipe(ops.first_or_default(None))
                .run()
            )
        finally:
            signal.signal(signal.SIGINT, previous)
        events = list(session.events) if session is not None else []
        tail = events[_after_last_user(events) :]
        for event in tail:
            if event.id not in seen:
                self.renderer.event(event)
        self.renderer.turn_end(self.stats.summary())

    def _wait_idle(self) -> None:
        # The Runner stores the cancellation records after disposal, on its own threads.
        self.runner.when_idle(user_id=self.user_id, session_id=self.session_id).pipe(
            ops.timeout(_REPAIR_WAIT, rx.empty()), ops.to_list()
        ).run()


def _close(events: Iterator[Event]) -> None:
    close = getattr(events, "close", None)  # to_iterable's iterator disposes on close()
    if callable(close):
        close()


def _after_last_user(events: list[Event]) -> int:
    for index in range(len(events) - 1, -1, -1):
        if events[index].author == "user":
            return index + 1
    return 0


def _describe(exc: BaseException) -> str:
    name = type(exc).__name__
    return f"{name}: {exc}" if str(exc) else name
