"""Fakes and probes for the cancellation, deadline, streaming and thread tests of the Runner.

Streaming models report on themselves (chunks produced, when their ``finally`` ran, on
which thread), and the probes check what cancellation must leave behind: no extra
thread, no pending asyncio task, a session whose next model request has no unanswered
function call.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from google.genai import types
from reactivex import Observable
from reactivex.scheduler import ThreadPoolScheduler

from adk_rx import InMemoryRunner, LlmResponse, Runner
from adk_rx.events import Event
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import model_content
from adk_rx.rx import from_async, from_blocking_iterable, runtime_loop, subscribe_on_eager
from adk_rx.sessions import Session

WAIT = 5.0  # seconds; reached only when a test is about to fail
USER = "u1"

__all__ = [
    "USER",
    "WAIT",
    "ChunkStream",
    "ThreadCensus",
    "call_response",
    "drain_loop_tasks",
    "new_session",
    "stored",
    "unanswered_calls",
    "warm_pool",
]


def call_response(
    name: str, args: dict[str, Any] | None = None, call_id: str | None = None, **fields: Any
) -> LlmResponse:
    """A model response holding one function call."""
    call = types.FunctionCall(name=name, args=args or {}, id=call_id)
    return LlmResponse(content=model_content(types.Part(function_call=call)), **fields)


def new_session(runner: Runner, session_id: str = "s1") -> Session:
    return runner.session_service.create_session(
        app_name=runner.app_name, user_id=USER, session_id=session_id
    ).run()


def stored(runner: Runner, session_id: str = "s1") -> list[Event]:
    """The events the session service holds for the session."""
    session = runner.session_service.get_session(
        app_name=runner.app_name, user_id=USER, session_id=session_id
    ).run()
    return list(session.events)


def unanswered_calls(request: LlmRequest) -> set[str]:
    """Ids of function calls in the request's history that no function response answers."""
    calls: set[str] = set()
    answered: set[str] = set()
    for content in request.contents:
        for part in content.parts or ():
            if part.function_call is not None and part.function_call.id:
                calls.add(part.function_call.id)
            if part.function_response is not None and part.function_response.id:
                answered.add(part.function_response.id)
    return calls - answered


class ChunkStream:
    """A streamed model call of ``count`` one-character chunks and their aggregate.

    ``from_async`` drives an async generator; ``from_thread`` a blocking generator on a
    worker. Both count what they produce and time their ``finally``.

    With ``stall_after``, ``from_async`` stalls after that many chunks, as a network stream
    waiting on its socket does, until it is cancelled: then only a cancellation that reaches
    it ends it (and sets ``closed``).

    Attributes:
        produced: chunks handed out so far.
        closed: set when the generator's ``finally`` ran.
        closed_at: ``time.perf_counter()`` at that moment.
        threads: names of the threads the chunks were produced on.
    """

    def __init__(self, count: int, stall_after: int | None = None) -> None:
        self.count = count
        self.stall_after = stall_after
        self.produced = 0
        self.closed = threading.Event()
        self.closed_at = 0.0
        self.threads: set[str] = set()

    def _chunk(self) -> LlmResponse:
        self.produced += 1
        self.threads.add(threading.current_thread().name)
        return LlmResponse(content=model_content(types.Part(text="x")), partial=True)

    def _final(self) -> LlmResponse:
        return LlmResponse(
            content=model_content(types.Part(text="x" * self.count)), turn_complete=True
        )

    def _closed(self) -> None:
        self.closed_at = time.perf_counter()
        self.closed.set()

    def from_async(self, _: LlmRequest | None = None) -> Observable[LlmResponse]:
        async def chunks() -> AsyncIterator[LlmResponse]:
            try:
                for _ in range(self.count):
                    if self.produced == self.stall_after:
                        await asyncio.Event().wait()  # stalled: only a cancellation ends it
                    yield self._chunk()
                    await asyncio.sleep(0)  # a real stream awaits its socket between chunks
                yield self._final()
            finally:
                self._closed()

        return from_async(chunks)

    def from_thread(
        self, scheduler: ThreadPoolScheduler
    ) -> Any:  # (LlmRequest) -> Observable[LlmResponse]
        def play(_: LlmRequest) -> Observable[LlmResponse]:
            def chunks() -> Iterator[LlmResponse]:
                try:
                    for _ in range(self.count):
                        yield self._chunk()
                    yield self._final()
                finally:
                    self._closed()

            return from_blocking_iterable(chunks, scheduler)

        return play


def warm_pool(workers: int) -> ThreadPoolScheduler:
    """A thread pool whose every worker thread already runs (so thread counts stay put)."""
    pool = ThreadPoolScheduler(max_workers=workers)
    barrier = threading.Barrier(workers + 1)
    for _ in range(workers):
        pool.executor.submit(barrier.wait, WAIT)
    barrier.wait(WAIT)
    return pool


class ThreadCensus:
    """Threads alive at the start; :meth:`leftovers` joins newcomers and names the survivors."""

    def __init__(self) -> None:
        runtime_loop()  # adk_rx's background loop thread lives for the process; start it first
        self.before = set(threading.enumerate())
        self.count = threading.active_count()

    def leftovers(self) -> list[str]:
        for thread in threading.enumerate():
            if thread not in self.before and thread is not threading.current_thread():
                thread.join(WAIT)
        return [t.name for t in threading.enumerate() if t not in self.before]


def drain_loop_tasks(loop: asyncio.AbstractEventLoop | None = None) -> list[asyncio.Task[Any]]:
    """Waits (bounded) for the tasks on adk_rx's background loop; returns those still pending."""
    target = loop or runtime_loop()

    async def pending() -> list[asyncio.Task[Any]]:
        me = asyncio.current_task()
        others = [t for t in asyncio.all_tasks() if t is not me]
        if others:
            await asyncio.wait(others, timeout=WAIT)
        return [t for t in asyncio.all_tasks() if t is not me and not t.done()]

    return asyncio.run_coroutine_threadsafe(pending(), target).result(WAIT * 2)


def in_memory_runner(agent: Any, **kwargs: Any) -> InMemoryRunner:
    return InMemoryRunner(agent=agent, app_name="app", **kwargs)


_THREAD_POOL = ThreadPoolScheduler(2)


class ThreadedLlm(BaseLlm):
    """A model's script, answered on another thread (as a network client answers)."""

    def __init__(self, inner: BaseLlm) -> None:
        super().__init__(model=inner.model)
        self.inner = inner

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        return self.inner.generate_content(llm_request, stream).pipe(
            subscribe_on_eager(_THREAD_POOL)
        )
