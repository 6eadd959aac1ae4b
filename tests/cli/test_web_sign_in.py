"""The web page answers a credential request: it links the sign-in page, takes the URL the
browser lands on, and the call goes through; no secret is shown or stored. Headless Chromium,
as in test_web_browser.py (skipped without it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from adk_rx.sessions.codec import encode_event
from adk_rx.testing.oauth_server import LocalOAuthServer, serve
from tests.cli.server_support import live_server, unique_app
from tests.cli.test_web_browser import _open, _say, browser, shots, stored_events, sync_api

__all__ = ["browser", "shots"]  # fixtures used below

AGENT = """
from google.genai import types
from adk_rx import FunctionTool, LlmAgent
from adk_rx.models import LlmResponse
from adk_rx.models.llm_response import model_content
from adk_rx.testing import ScriptedLlm
from tests.auth.support import whoami_tool
from adk_rx.testing.oauth_server import LocalOAuthServer

server = LocalOAuthServer(url={url!r}, client_secret={secret!r})
whoami = types.FunctionCall(name="whoami", args={{}})
call = LlmResponse(content=model_content(types.Part(function_call=whoami)))
root_agent = LlmAgent(
    name="desk",
    model=ScriptedLlm([call, "You are signed in."]),
    tools=[whoami_tool(server)],
)
"""


@pytest.fixture
def signed(tmp_path: Path) -> Iterator[tuple[str, str, InMemorySessionService, LocalOAuthServer]]:
    with serve() as oauth:
        app = unique_app("signin")
        folder = tmp_path / "agents" / app
        folder.mkdir(parents=True)
        (folder / "agent.py").write_text(AGENT.format(url=oauth.url, secret=oauth.client_secret))
        service = InMemorySessionService()
        server = create_app(folder.parent, web=True, session_service=service)
        with live_server(server) as live:
            yield live.url, app, service, oauth


def test_a_sign_in_is_answered_in_the_page(
    browser: Any, signed: tuple[str, str, InMemorySessionService, LocalOAuthServer], shots: Path
) -> None:
    url, app, service, oauth = signed
    expect = sync_api.expect
    page = _open(browser, url, app)
    try:
        _say(page, "who am I?")
        card = page.locator("#chat .card.credential")
        expect(card).to_contain_text("asks you to sign in")
        link = card.locator("a.sign-in")
        href = link.get_attribute("href")
        assert href is not None and href.startswith(oauth.url + "/authorize?")
        assert link.get_attribute("rel") == "noopener noreferrer"
        landed = httpx.get(href, timeout=5).headers["location"]
        card.locator("input.credential-input").fill(landed)
        page.screenshot(path=str(shots / "web_sign_in.png"))
        # The answer's events are held back, so the page shows the message it sent (not yet
        # the stored one) while the test looks: it shows the answer received, not the code.
        held: list[Any] = []
        page.route("**/events?*", lambda route: held.append(route))
        card.locator("button.send-credential").click()
        sent = page.locator("#chat .chip.resp").filter(has_text="credential received")
        expect(sent).to_have_count(1)
        code = parse_qs(urlsplit(landed).query)["code"][0]
        assert code not in page.content()
        for route in held:
            route.continue_()
        page.unroute("**/events?*")
        expect(page.locator("#chat .msg.model").last).to_contain_text("You are signed in.")
        expect(page.locator("#chat .card.credential")).to_contain_text("credential sent")
        assert oauth.exchanges == 1
        stored = "".join(encode_event(e) for e in stored_events(service, app, "user"))
        assert '"user":"ada"' in stored.replace(" ", "")
        for secret in oauth.secrets_issued():
            assert secret not in stored
            assert secret not in page.content()
    finally:
        page.close()
