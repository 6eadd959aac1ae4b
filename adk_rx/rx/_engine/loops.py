"""Whether the calling thread runs an asyncio event loop (where nothing may block)."""

from __future__ import annotations

import asyncio

__all__ = ["on_event_loop"]


def on_event_loop() -> bool:
    """True when called on a thread that is running an asyncio event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
