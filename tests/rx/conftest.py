from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from reactivex.scheduler import EventLoopScheduler


@pytest.fixture
def consumer_scheduler() -> Iterator[EventLoopScheduler]:
    """A consumer lane on a thread of its own, stopped after the test."""
    scheduler = EventLoopScheduler(
        thread_factory=lambda target: threading.Thread(target=target, daemon=True)
    )
    yield scheduler
    scheduler.dispose()
