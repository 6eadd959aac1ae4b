"""How ``adk-rx run`` shows events: readable lines with rich, or one JSON per line.

The console renderer gives each kind of event its own line, so a turn reads top to bottom:
streamed text as it arrives (the final event's text is not printed twice), tool calls
(``→``), tool results (``←``), workflow node outputs (``◆``) and routes, state changes,
transfers, artifacts, confirmation requests, errors, the sources of a grounded answer
(``[1] title <uri>``), and a dim summary line per turn (model calls, tool calls, token usage,
time). The events of an agent run as a tool with
``stream_events`` (``custom_metadata["agent_tool"]``) are shown the same way, indented under
the caller's tool line (``│``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, Protocol, TextIO

from google.genai import types
from rich.console import Console
from rich.text import Text

from adk_rx.auth.answers import sign_in_uri
from adk_rx.cli.stats import TurnSummary
from adk_rx.events import CREDENTIAL_FUNCTION, PAUSE_FUNCTIONS, Event
from adk_rx.flows.contents import CONFIRMATION_FUNCTION
from adk_rx.models.response_metadata import grounding_sources

__all__ = ["ConsoleRenderer", "JsonlRenderer", "Renderer"]

_MAX_VALUE = 200


class Renderer(Protocol):
    """What ``adk-rx run`` calls while a turn runs."""

    def event(self, event: Event) -> None: ...
    def turn_end(self, summary: TurnSummary) -> None: ...
    def note(self, text: str) -> None: ...
    def failure(self, text: str) -> None: ...


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def _args(args: Mapping[str, Any] | None) -> str:
    return ", ".join(
        f"{k}={_short(json.dumps(v, ensure_ascii=False, default=str))}"
        for k, v in (args or {}).items()
    )


def _node(event: Event) -> str:
    """The node an event comes from (the last segment of its path, without the run)."""
    path = event.node_info.path if event.node_info is not None else None
    return path.rsplit("/", 1)[-1].split("@", 1)[0] if path else event.author


class JsonlRenderer:
    """One Event JSON per line on stdout; everything else on stderr."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self._out = out or sys.stdout
        self._err = err or sys.stderr

    def event(self, event: Event) -> None:
        self._out.write(event.to_json() + "\n")
        self._out.flush()

    def turn_end(self, summary: TurnSummary) -> None:
        self.note(f"turn: {summary}")

    def note(self, text: str) -> None:
        print(text, file=self._err, flush=True)

    def failure(self, text: str) -> None:
        print(f"error: {text}", file=self._err, flush=True)


class ConsoleRenderer:
    """Readable, colored lines (plain text when stdout is not a terminal)."""

    def __init__(self, console: Console | None = None, err: Console | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.err = err or Console(stderr=True, highlight=False, soft_wrap=True)
        self._streaming: str | None = None  # the author whose text is being streamed
        self._streamed = ""
        self._indent = ""  # "    │ " while a child run's event (AgentTool) is shown

    def _print(self, text: Text, end: str = "\n") -> None:
        self.console.print(Text(self._indent, style="dim") + text, end=end)

    # -- text -------------------------------------------------------------------------------
    def _label(self, author: str) -> Text:
        return Text(f"{author}: ", style="bold blue")

    def _end_stream(self) -> None:
        if self._streaming is not None:
            self.console.print()
            self._streaming = None
            self._streamed = ""

    def _partial(self, event: Event) -> None:
        progress = (event.custom_metadata or {}).get("tool_progress")
        if isinstance(progress, Mapping):
            self._end_stream()
            line = f"  … {progress.get('name')}: {_short(progress.get('progress'))}"
            self._print(Text(line, style="dim"))
            return
        text = event.text()
        if not text:
            return
        if self._streaming != event.author:
            self._end_stream()
            self._print(self._label(event.author), end="")
            self._streaming = event.author
        self.console.print(Text(text), end="")
        self._streamed += text

    def _text(self, event: Event) -> None:
        text = event.text()
        if self._streaming == event.author and text and text.startswith(self._streamed):
            rest = text[len(self._streamed) :]  # normally empty: the aggregate repeats it
            if rest:
                self.console.print(Text(rest), end="")
            self._end_stream()
            return
        self._end_stream()
        if text:
            self._print(self._label(event.author) + Text(text))

    # -- one event --------------------------------------------------------------------------
    def event(self, event: Event) -> None:
        tag = (event.custom_metadata or {}).get("agent_tool")
        if isinstance(tag, Mapping) and not self._indent:
            self._indent = "    │ "
            try:
                self.event(event.replace(partial=bool(tag.get("partial"))))
            finally:
                self._indent = ""
            return
        if event.partial:
            self._partial(event)
            return
        self._text(event)
        if event.output is not None:
            self._print(Text(f"◆ {_node(event)}: {_short(event.output)}", style="green"))
        for number, (title, uri) in enumerate(grounding_sources(event.grounding_metadata), 1):
            self._print(Text(f"  [{number}] {title} <{uri}>", style="dim cyan"))
        for part in (event.content.parts or []) if event.content else []:
            self._part(event, part)
        self._actions(event)
        if event.error_code:
            self._print(
                Text(
                    f"✗ {event.author}: {event.error_code} {event.error_message or ''}",
                    style="bold red",
                )
            )

    def _part(self, event: Event, part: types.Part) -> None:
        call, response = part.function_call, part.function_response
        if call is not None and call.name == CONFIRMATION_FUNCTION:
            original = (call.args or {}).get("originalFunctionCall") or {}
            hint = ((call.args or {}).get("toolConfirmation") or {}).get("hint", "")
            self._print(
                Text(
                    f"? {event.author} asks to confirm {original.get('name', '?')}"
                    f"({_args(original.get('args'))}): {hint}",
                    style="bold yellow",
                )
            )
        elif call is not None and call.name == CREDENTIAL_FUNCTION:
            uri = sign_in_uri(call.args or {})
            self._print(
                Text(
                    f"? {event.author} asks you to sign in"
                    + (f": {uri}" if uri else " (a key or token)"),
                    style="bold yellow",
                )
            )
        elif call is not None:
            self._print(
                Text(f"→ {event.author} calls {call.name}({_args(call.args)})", style="cyan")
            )
        elif response is not None and response.name not in PAUSE_FUNCTIONS:
            body = response.response or {}
            failed = isinstance(body, Mapping) and "error" in body
            self._print(
                Text(f"← {response.name}: {_short(body)}", style="red" if failed else "green")
            )
        elif part.executable_code is not None:
            self._print(Text(f"⌘ {event.author} runs code:", style="cyan"))
            self._block(part.executable_code.code or "", "cyan")
        elif part.code_execution_result is not None:
            result = part.code_execution_result
            failed = result.outcome != types.Outcome.OUTCOME_OK
            style = "red" if failed else "green"
            self._print(Text("← code failed:" if failed else "← code output:", style=style))
            self._block(result.output or "", style)

    def _block(self, text: str, style: str) -> None:
        for line in text.rstrip("\n").split("\n"):
            self._print(Text(f"  │ {line}", style=style))

    def _actions(self, event: Event) -> None:
        actions = event.actions
        for key, value in actions.state_delta.items():
            self._print(Text(f"  state {key} = {_short(value)}", style="yellow"))
        for name, version in actions.artifact_delta.items():
            self._print(Text(f"  artifact {name} (version {version})", style="magenta"))
        if actions.transfer_to_agent:
            self._print(Text(f"⇢ transfer to {actions.transfer_to_agent}", style="bold magenta"))
        if actions.route is not None:
            self._print(Text(f"  route {_short(actions.route)}", style="magenta"))
        if actions.escalate:
            self._print(Text(f"⇡ {event.author} escalates", style="magenta"))

    # -- turn -------------------------------------------------------------------------------
    def turn_end(self, summary: TurnSummary) -> None:
        self._end_stream()
        self.console.print(Text(f"  {summary}", style="dim"))

    def note(self, text: str) -> None:
        self._end_stream()
        self.err.print(Text(text, style="dim"))

    def failure(self, text: str) -> None:
        self._end_stream()
        self.err.print(Text(f"error: {text}", style="bold red"))
