"""The console renderer of ``adk-rx run``."""

from __future__ import annotations

import io

from rich.console import Console

from adk_rx.cli.render import ConsoleRenderer
from adk_rx.events import Event


def test_a_tool_progress_event_is_shown_as_a_dim_line() -> None:
    out = io.StringIO()
    renderer = ConsoleRenderer(console=Console(file=out, width=100, color_system=None))
    renderer.event(
        Event(
            author="fetcher",
            partial=True,
            custom_metadata={
                "tool_progress": {"id": "c1", "name": "download", "progress": {"percent": 60}}
            },
        )
    )
    assert out.getvalue().strip() == '… download: {"percent": 60}'
