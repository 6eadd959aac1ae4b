"""An asyncio service that embeds the Runner: concurrent requests, one session each.

``Service.handle(user, text)`` is what a web handler would call: it creates (or reuses) the
user's session in a SQLite store and streams the turn with ``runner.run_events`` (an async
iterator with a bounded buffer). A sync tool runs on adk_rx's I/O pool, so the event loop
stays free; the requests of three users run concurrently, and an ``asyncio.timeout`` around
one request cancels that run only (its session records CANCELLED). Offline: a ScriptedLlm.

Run: ``python examples/asyncio_service.py``.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
from pathlib import Path

from google.genai import types

from adk_rx import LlmAgent, LlmResponse, Runner, SqlSessionService
from adk_rx.testing import ScriptedLlm

_running = [0, 0]  # lookups running now, most at once
_lock = threading.Lock()


def slow_lookup(city: str) -> dict[str, str]:
    """Looks a city's weather up (a blocking call of 0.2 s)."""
    with _lock:
        _running[0] += 1
        _running[1] = max(_running)
    try:
        time.sleep(0.2)
    finally:
        with _lock:
            _running[0] -= 1
    return {"city": city, "sky": "sunny"}


def _reply(request):
    part = request.contents[-1].parts[-1]
    if part.function_response is not None:
        return f"It is {part.function_response.response['sky']}."
    text = part.text or ""
    if text.startswith("weather "):
        call = types.FunctionCall(name="slow_lookup", args={"city": text.split(" ", 1)[1]})
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(function_call=call)])
        )
    return f"echo: {text}"


class Service:
    """One Runner shared by every request."""

    def __init__(self, db: Path) -> None:
        agent = LlmAgent(name="weather", model=ScriptedLlm([_reply] * 1000), tools=[slow_lookup])
        self.sessions = SqlSessionService(f"sqlite:///{db}")
        self.runner = Runner(app_name="weather", agent=agent, session_service=self.sessions)

    async def session_of(self, user: str) -> str:
        found = await self.sessions.get_session(app_name="weather", user_id=user, session_id=user)
        if found is None:
            await self.sessions.create_session(app_name="weather", user_id=user, session_id=user)
        return user

    async def handle(self, user: str, text: str) -> str:
        session_id = await self.session_of(user)
        answer = ""
        async for event in self.runner.run_events(
            user_id=user, session_id=session_id, new_message=text
        ):
            if event.is_final_response():
                answer = event.text()
        return answer


async def main() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        service = Service(Path(folder) / "sessions.db")
        started = time.perf_counter()
        answers = await asyncio.gather(
            service.handle("ada", "weather Paris"),
            service.handle("bob", "weather Oslo"),
            service.handle("cy", "weather Rome"),
        )
        elapsed = time.perf_counter() - started
        try:
            async with asyncio.timeout(0.05):  # shorter than the tool: this run is cancelled
                await service.handle("dee", "weather Lima")
            cancelled = False
        except TimeoutError:
            cancelled = True
        await service.runner.when_idle(user_id="dee", session_id="dee")
        dee = await service.sessions.get_session(
            app_name="weather", user_id="dee", session_id="dee"
        )
        service.sessions.close()
    return {
        "answers": answers,
        "three tool calls of 0.2 s took": f"{elapsed:.2f} s",
        "most lookups running at once": _running[1],
        "dee's request timed out": cancelled,
        "dee's session ends with": dee.events[-1].error_code if dee else None,
    }


if __name__ == "__main__":
    for key, value in asyncio.run(main()).items():
        print(f"{key}: {value}")
