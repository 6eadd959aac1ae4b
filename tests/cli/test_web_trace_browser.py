"""The dev page's trace view in headless Chromium: a span waterfall beside the inspector,
or, when the server keeps no spans, the invocation's events with their times."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from adk_rx.telemetry.span_store import SpanStore
from tests.cli.server_support import live_server, unique_app, write_agents
from tests.cli.test_web_browser import WAIT_MS, browser, shots, sync_api  # noqa: F401
from tests.telemetry.support import Traces


def _serve(tmp_path: Path, *, spans: bool) -> Iterator[tuple[str, str]]:
    app = unique_app("trace")
    options: dict[str, Any] = {}
    if spans:
        traces = Traces()
        store = SpanStore()
        traces.provider.add_span_processor(store)
        options = {"tracer_provider": traces.provider, "span_store": store}
    server = create_app(
        write_agents(tmp_path / "agents", app),
        web=True,
        session_service=InMemorySessionService(),
        **options,
    )
    with live_server(server) as live:
        yield live.url, app


@pytest.fixture
def with_spans(tmp_path: Path) -> Iterator[tuple[str, str]]:
    yield from _serve(tmp_path, spans=True)


@pytest.fixture
def without_spans(tmp_path: Path) -> Iterator[tuple[str, str]]:
    yield from _serve(tmp_path, spans=False)


def _tool_turn_then_trace(page: Any, url: str, app: str) -> Any:
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    page.goto(url)
    expect(page.locator("#app option")).to_have_text([app])
    page.fill("#message", "weather Paris")
    page.click("#send")
    expect(page.locator("#chat .msg.model").last).to_contain_text("It is sunny in Paris.")
    expect(page.locator("#send")).to_be_enabled()
    page.locator("#events tr.ev").last.click()
    page.click("#tab-trace")
    return page.locator("#tracepane")


def test_the_trace_tab_draws_the_invocations_spans_as_a_waterfall(
    browser: Any,  # noqa: F811
    with_spans: tuple[str, str],
    shots: Path,  # noqa: F811
) -> None:
    url, app = with_spans
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    expect = sync_api.expect
    try:
        pane = _tool_turn_then_trace(page, url, app)

        expect(pane.locator("#trace-title")).to_have_attribute("data-source", "spans")
        lanes = pane.locator(".lane.trace")
        expect(lanes.first).to_have_attribute("data-name", "invocation")
        expect(
            pane.locator('.lane.trace[data-name="execute_tool get_weather"] .bar.tool')
        ).to_have_count(1)
        expect(pane.locator('.lane.trace[data-name="call_llm"] .bar.model')).to_have_count(2)
        expect(pane.locator('.lane.trace[data-name^="invoke_agent"]')).to_have_count(1)
        # The tool's row is indented under its agent's row.
        tool_label = pane.locator('.lane.trace[data-name="execute_tool get_weather"] .label')
        assert tool_label.inner_text().startswith("    execute_tool get_weather ")
        page.screenshot(path=str(shots / "web_trace_spans.png"))
        # The inspector is one click away, on the same event.
        page.click("#tab-inspector")
        expect(page.locator("#inspector")).to_contain_text("invocation")
    finally:
        page.close()


def test_without_spans_the_trace_tab_shows_the_events_with_their_times(
    browser: Any,  # noqa: F811
    without_spans: tuple[str, str],
    shots: Path,  # noqa: F811
) -> None:
    url, app = without_spans
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    expect = sync_api.expect
    try:
        pane = _tool_turn_then_trace(page, url, app)

        expect(pane.locator("#trace-title")).to_have_attribute("data-source", "events")
        expect(pane.locator(".lane.trace").first).to_contain_text("user:")
        expect(pane.locator(".lane.trace .bar.tool")).to_have_count(1)
        expect(pane).to_contain_text("call get_weather")
        page.screenshot(path=str(shots / "web_trace_events.png"))
    finally:
        page.close()
