"""Awaiting adk_rx Observables from asyncio, whatever thread completes them."""

from __future__ import annotations

import asyncio
import threading

import pytest
from google.genai import types
from reactivex.disposable import Disposable

from adk_rx import InMemoryRunner, LlmAgent, LlmResponse, SqlSessionService
from adk_rx.rx import from_blocking, maybe
from adk_rx.rx._engine.awaitable import AwaitableObservable
from adk_rx.rx._engine.sync import completable, empty
from adk_rx.testing import ScriptedLlm


def test_a_result_produced_on_a_worker_thread_resumes_the_awaiting_loop() -> None:
    async def main() -> tuple[int, str, str]:
        worker: list[str] = []

        def blocking() -> int:
            worker.append(threading.current_thread().name)
            return 42

        value = await asyncio.wait_for(from_blocking(blocking), timeout=5)
        return value, worker[0], threading.current_thread().name

    value, worker, awaiting = asyncio.run(main())
    assert value == 42
    assert worker != awaiting


def test_an_empty_maybe_and_a_completable_await_to_none() -> None:
    async def main() -> list[object]:
        return [await maybe(lambda: None), await completable(lambda: None), await empty()]

    assert asyncio.run(main()) == [None, None, None]


def test_an_error_raised_on_a_worker_thread_is_raised_by_the_await() -> None:
    def fail() -> int:
        raise ValueError("boom")

    async def main() -> None:
        await asyncio.wait_for(from_blocking(fail), timeout=5)

    with pytest.raises(ValueError, match="boom"):
        asyncio.run(main())


def test_cancelling_the_awaiting_task_disposes_the_subscription() -> None:
    disposed = threading.Event()

    def never(observer: object, scheduler: object = None) -> Disposable:
        return Disposable(disposed.set)  # emits nothing until disposed

    async def main() -> None:
        task = asyncio.ensure_future(AwaitableObservable(never))
        await asyncio.sleep(0)  # let the task subscribe
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert disposed.is_set()


def test_awaiting_a_sql_store_and_a_run_with_a_sync_tool_inside_asyncio(tmp_path) -> None:
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    call = types.Part(function_call=types.FunctionCall(name="add", args={"a": 1, "b": 2}))
    llm = ScriptedLlm([LlmResponse(content=types.Content(role="model", parts=[call])), "3"])
    agent = LlmAgent(name="calc", model=llm, tools=[add])

    async def main() -> tuple[str, int, object]:
        store = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
        runner = InMemoryRunner(agent=agent, app_name="calc")
        session = await store.create_session(app_name="calc", user_id="u")
        missing = await store.get_session(app_name="calc", user_id="u", session_id="nope")
        await runner.session_service.create_session(app_name="calc", user_id="u", session_id="s")
        last = await asyncio.wait_for(
            runner.run_async(user_id="u", session_id="s", new_message="1+2?"), timeout=10
        )
        stored = await store.get_session(app_name="calc", user_id="u", session_id=session.id)
        store.close()
        return last.text(), len(stored.events), missing

    text, stored_events, missing = asyncio.run(main())
    assert text == "3"
    assert stored_events == 0
    assert missing is None


def test_every_store_implementation_returns_awaitable_results(tmp_path) -> None:
    """A service written by a user gets the same await, through the seam's base class."""
    from reactivex import operators as ops

    from adk_rx import FileArtifactService
    from adk_rx.memory.base import BaseMemoryService, SearchMemoryResponse

    class Memory(BaseMemoryService):
        def add_session_to_memory(self, session):  # type: ignore[no-untyped-def]
            return from_blocking(lambda: None).pipe(ops.ignore_elements())

        def search_memory(self, *, app_name, user_id, query):  # type: ignore[no-untyped-def]
            return from_blocking(SearchMemoryResponse).pipe(ops.map(lambda r: r))

    files = FileArtifactService(tmp_path)

    async def main() -> list[object]:
        memory = Memory()
        return [
            await asyncio.wait_for(memory.add_session_to_memory(None), 5),
            await asyncio.wait_for(memory.search_memory(app_name="a", user_id="u", query="q"), 5),
            await asyncio.wait_for(
                files.load_artifact(app_name="a", user_id="u", session_id="s", filename="x"), 5
            ),
        ]

    added, found, missing = asyncio.run(main())
    assert added is None
    assert found == SearchMemoryResponse()
    assert missing is None
