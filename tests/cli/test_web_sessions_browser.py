"""The dev page keeps sessions apart: a session shows only its own runs, and an answer to a
request goes to the session that asked, end to end in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adk_rx import InMemorySessionService
from tests.cli.test_web_browser import (
    _open,
    _say,
    browser,
    dev_loop,
    served,
    shots,
    sync_api,
)

__all__ = ["browser", "dev_loop", "served", "shots"]


def _events(service: InMemorySessionService, app: str, sid: str) -> list[Any]:
    session = service.get_session(app_name=app, user_id="user", session_id=sid).run()
    assert session is not None
    return session.events


def _selected_session(page: Any) -> str:
    sid = page.locator("#sessions li.selected").get_attribute("data-sid")
    assert sid
    return sid


def test_a_new_session_shows_nothing_of_another_and_an_approval_goes_to_the_asking_one(
    browser: Any, dev_loop: tuple[str, str, InMemorySessionService], shots: Path
) -> None:
    url, app, service = dev_loop
    expect = sync_api.expect
    page = _open(browser, url, app)
    try:
        _say(page, "refund 5")
        asking = page.locator("#chat .card.confirm")
        expect(asking.locator("button.approve")).to_be_enabled()
        first = _selected_session(page)

        page.click("#new-session")
        expect(page.locator("#sessions li")).to_have_count(2)
        expect(page.locator("#sessions li.selected")).not_to_have_attribute("data-sid", first)
        second = _selected_session(page)
        expect(page.locator("#chat .empty-state")).to_be_visible()
        expect(page.locator("#chat .card")).to_have_count(0)
        expect(page.locator("#events tr.ev")).to_have_count(0)
        expect(page.locator("#timeline")).to_contain_text("No invocation yet.")
        page.screenshot(path=str(shots / "web_other_session.png"))

        page.locator(f'#sessions li[data-sid="{first}"]').click()
        expect(asking).to_have_attribute("data-session", first)
        asking.locator("button.approve").click()
        expect(page.locator("#chat .msg.model").last).to_contain_text("Refunded 5.0.")
        answers = [
            r.response
            for e in _events(service, app, first)
            for r in e.get_function_responses()
            if r.name == "adk_request_confirmation"
        ]
        assert answers == [{"confirmed": True}]
        assert _events(service, app, second) == []
    finally:
        page.close()


def test_a_run_streaming_in_one_session_stays_out_of_another(
    browser: Any, served: tuple[str, str, InMemorySessionService]
) -> None:
    url, app, _ = served
    expect = sync_api.expect
    page = _open(browser, url, app)
    try:
        _say(page, "slow 400 0.02")
        expect(page.locator("#chat .msg.streaming")).to_contain_text("tok3 ")
        first = _selected_session(page)

        page.click("#new-session")
        expect(page.locator("#sessions li.selected")).not_to_have_attribute("data-sid", first)
        expect(page.locator("#chat .empty-state")).to_be_visible()
        expect(page.locator("#chat .msg")).to_have_count(0)
        expect(page.locator("#events tr.ev")).to_have_count(0)

        # Back in the first session, its run goes on streaming where it is.
        page.locator(f'#sessions li[data-sid="{first}"]').click()
        expect(page.locator("#chat .msg.user")).to_contain_text("slow 400 0.02")
        expect(page.locator("#chat .msg.streaming")).to_contain_text("tok60 ")
        page.click("#stop")
        expect(page.locator("#chat .chip.error")).to_contain_text("CANCELLED")
    finally:
        page.close()
