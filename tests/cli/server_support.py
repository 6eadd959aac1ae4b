"""Support for the server tests: an agents folder, a real uvicorn server, an SSE parser.

The apps written by :func:`write_agents` run a ScriptedLlm that reads the request's last
message:

* ``weather CITY``: calls the ``get_weather`` tool, then streams a sentence about it;
* ``note TEXT``: calls ``save_note`` (an artifact and a state key), then says "saved";
* ``slow N [SECONDS]``: streams N chunks, one every SECONDS (default 0.01);
* ``fail``: the model call raises;
* anything else: ``echo: <text>`` streamed in two chunks.
"""

from __future__ import annotations

import contextlib
import socket
import textwrap
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

__all__ = [
    "AGENT_SOURCE",
    "Frame",
    "LiveServer",
    "live_server",
    "parse_frames",
    "unique_app",
    "user_text",
    "write_agents",
]

AGENT_SOURCE = textwrap.dedent('''
    import reactivex as rx
    from google.genai import types
    from reactivex import operators as ops

    from adk_rx import LlmAgent
    from adk_rx.models import LlmResponse
    from adk_rx.models.llm_response import model_content
    from adk_rx.rx import timer_scheduler
    from adk_rx.testing import ScriptedLlm


    def get_weather(city: str) -> dict:
        """Returns the forecast for a city."""
        return {"city": city, "forecast": "sunny"}


    def save_note(text: str, tool_context) -> dict:
        """Saves a note as an artifact."""
        part = types.Part(text=text)
        tool_context.save_artifact("note.txt", part).run()
        tool_context.state["last_note"] = text
        return {"saved": "note.txt"}


    def chunk(text):
        return LlmResponse(content=model_content(types.Part(text=text)), partial=True)


    def final(text):
        return LlmResponse(content=model_content(types.Part(text=text)), turn_complete=True)


    def streamed(pieces):
        return rx.from_iterable([chunk(p) for p in pieces] + [final("".join(pieces))])


    def call(name, **args):
        return LlmResponse(content=model_content(
            types.Part(function_call=types.FunctionCall(name=name, args=args))
        ))


    def slow(count, period):
        pieces = rx.interval(period, scheduler=timer_scheduler()).pipe(
            ops.take(count), ops.map(lambda i: chunk(f"tok{i} "))
        )
        text = "".join(f"tok{i} " for i in range(count))
        return rx.concat(pieces, rx.just(final(text)))


    def respond(request):
        part = request.contents[-1].parts[-1]
        if part.function_response is not None:
            response = part.function_response.response or {}
            if part.function_response.name == "save_note":
                return streamed(["saved"])
            return streamed(["It is ", response.get("forecast", "?"), " in ",
                             response.get("city", "?"), "."])
        text = part.text or ""
        command, _, rest = text.partition(" ")
        if command == "weather":
            return call("get_weather", city=rest or "Paris")
        if command == "note":
            return call("save_note", text=rest)
        if command == "slow":
            args = rest.split()
            count = int(args[0]) if args else 100
            period = float(args[1]) if len(args) > 1 else 0.01
            return slow(count, period)
        if command == "fail":
            return ValueError("the model failed on purpose")
        return streamed(["echo: ", text])


    root_agent = LlmAgent(
        name="assistant",
        model=ScriptedLlm([respond] * 100_000),
        instruction="You answer questions.",
        tools=[get_weather, save_note],
        output_key="last_reply",
    )
''')


def write_agents(root: Path, *app_names: str) -> Path:
    """Writes one app per name under ``root`` (app folder names must be unique per process:
    each is imported as a package of that name)."""
    root.mkdir(parents=True, exist_ok=True)
    for name in app_names:
        folder = root / name
        folder.mkdir()
        (folder / "agent.py").write_text(AGENT_SOURCE)
    return root


def unique_app(prefix: str = "app") -> str:
    """An app (and package) name no other test of this process uses."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def user_text(text: str) -> dict[str, Any]:
    """A ``new_message`` body value."""
    return {"role": "user", "parts": [{"text": text}]}


@dataclass
class Frame:
    """One SSE frame."""

    id: int | None = None
    event: str | None = None
    data: str | None = None
    comments: list[str] = field(default_factory=list)


def parse_frames(text: str) -> list[Frame]:
    """Splits an SSE body into frames (a trailing incomplete frame is dropped)."""
    frames: list[Frame] = []
    for block in text.split("\n\n")[:-1]:
        frame = Frame()
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "":
                frame.comments.append(value)
            elif name == "id":
                frame.id = int(value)
            elif name == "event":
                frame.event = value
            elif name == "data":
                frame.data = value if frame.data is None else frame.data + "\n" + value
        frames.append(frame)
    return frames


@dataclass
class LiveServer:
    """A uvicorn server on a loopback port, in a thread of its own."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread


@contextlib.contextmanager
def live_server(app: Any) -> Iterator[LiveServer]:
    """Serves ``app`` on 127.0.0.1 (a free port) until the block ends.

    The socket is bound and listening before the thread starts, so a client may connect at
    once (the connection waits in the backlog until uvicorn accepts it).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        backlog=512,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", server, thread)
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
