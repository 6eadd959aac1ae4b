"""The chat of ``adk-rx run``: turns on one session, shown through a renderer.

A turn streams the invocation's events to the renderer and notes the calls the session then
waits for (a confirmation, a sign-in, a long-running tool's result); the interactive loop
asks for those before the next prompt. Ctrl-C during a turn disposes the run's subscription
and shows the records the Runner stores for the cancellation; how a turn ended is an
:class:`Outcome`, whose value is the command's exit status.
"""

from __future__ import annotations

import enum
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import reactivex as rx
from google.genai import types
from reactivex import operators as ops

from adk_rx.cli.render import Renderer
from adk_rx.cli.resume import answer_part, describe_pending, pending_calls
from adk_rx.cli.stats import TurnStats
from adk_rx.events import CREDENTIAL_FUNCTION, Event
from adk_rx.flows.contents import CONFIRMATION_FUNCTION
from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.runner import Runner
from adk_rx.rx.iterators import to_iterable
from adk_rx.sessions.session import GetSessionConfig
from adk_rx.telemetry.tree_text import span_tree_lines

if TYPE_CHECKING:
    from adk_rx.telemetry.span_store import SpanStore

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "Chat", "Outcome"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_REPAIR_WAIT = 10.0  # seconds to wait for the cancellation records to be stored


class Outcome(enum.Enum):
    """How a turn ended."""

    OK = EXIT_OK
    FAILED = EXIT_FAILED
    CANCELLED = EXIT_INTERRUPTED


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
