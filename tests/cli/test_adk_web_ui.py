"""google-adk's own dev UI (``adk-rx web --ui google-adk``) against our server in headless
Chromium: a new session, a streamed reply, a confirmation, an artifact, a rename and the
trace pane, with no failing request to the server.

Skips when google-adk (the ``compat`` extra), playwright or Chromium is missing. The UI's web
fonts come from the internet and fail offline; only requests to the server are checked, and
``/dev-ui/prism-dark.css``, which google-adk's bundle links but does not ship, is left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from adk_rx.telemetry.span_store import SpanStore
from tests.cli.server_support import AGENT_SOURCE, live_server, unique_app
from tests.cli.test_web_browser import WAIT_MS, browser, shots

pytest.importorskip("google.adk", reason="google-adk is not installed (the compat extra)")

__all__ = ["browser", "shots"]  # fixtures shared with the page's own browser test

NOT_IN_BUNDLE = "/dev-ui/prism-dark.css"

CONFIRMING_TOOL = '''

def delete_file(path: str, tool_context) -> dict:
    """Deletes a file once the user confirms."""
    if tool_context.tool_confirmation is None:
        tool_context.request_confirmation(hint=f"Delete {path}?")
        return {"status": "waiting for confirmation"}
    return {"deleted": path}


_respond = respond


def respond_more(request):
    part = request.contents[-1].parts[-1]
    if part.function_response is not None and part.function_response.name == "delete_file":
        deleted = (part.function_response.response or {}).get("deleted")
        return streamed(["deleted ", deleted] if deleted else ["please confirm"])
    text = part.text or ""
    if text.startswith("delete "):
        return call("delete_file", path=text[len("delete "):])
    return _respond(request)


root_agent = LlmAgent(
    name="assistant",
    model=ScriptedLlm([respond_more] * 100_000),
    instruction="You answer questions.",
    tools=[get_weather, save_note, delete_file],
    output_key="last_reply",
)
'''


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, InMemorySessionService]]:
    app = unique_app("adkui")
    (tmp_path / app).mkdir()
    (tmp_path / app / "agent.py").write_text(AGENT_SOURCE + CONFIRMING_TOOL)
    service = InMemorySessionService()
    store = SpanStore()  # as `adk-rx web` keeps one: the trace pane shows real spans
    provider = TracerProvider()
    provider.add_span_processor(store)
    server = create_app(
        tmp_path,
        web=True,
        ui="google-adk",
        session_service=service,
        tracer_provider=provider,
        span_store=store,
    )
    with live_server(server) as live:
        yield live.url, app, service


def session_of(service: InMemorySessionService, app: str) -> Any:
    (listed,) = service.list_sessions(app_name=app, user_id="user").run().sessions
    return service.get_session(app_name=app, user_id="user", session_id=listed.id).run()


def test_google_adks_ui_walks_a_session_against_our_server(
    browser: Any, served: tuple[str, str, InMemorySessionService], shots: Path
):
    url, app, service = served
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(WAIT_MS)
    page.add_init_script("localStorage.setItem('adk-use-sse', 'true')")  # token streaming
    failures: list[str] = []
    calls: list[tuple[str, str]] = []

    def on_response(response: Any) -> None:
        path = response.url[len(url) :]
        if not response.url.startswith(url) or path == NOT_IN_BUNDLE:
            return
        calls.append((response.request.method, path.split("?")[0]))
        if response.status >= 400:
            failures.append(f"{response.status} {response.request.method} {path}")

    page.on("response", on_response)
    page.on(
        "requestfailed",
        lambda r: (
            failures.append(f"failed {r.method} {r.url}")
            if r.url.startswith(url) and not r.url.endswith(NOT_IN_BUNDLE)
            else None
        ),
    )
    page.goto(url + "/")
    page.wait_for_url("**/dev-ui/?app=*")
    message = page.get_by_placeholder("Type a message...")

    # A new session and a streamed reply: the chunks of one response make one bubble.
    message.fill("slow 5 0.02")
    message.press("Enter")
    page.get_by_text("tok0 tok1 tok2 tok3 tok4").wait_for()
    assert ("POST", f"/apps/{app}/users/user/sessions") in calls
    assert page.get_by_text("tok0", exact=False).count() == 1

    # A confirmation: the form answers adk_request_confirmation and the tool runs.
    message.fill("delete a.txt")
    message.press("Enter")
    page.get_by_text("Delete a.txt?").wait_for()
    page.get_by_text("Confirmed").click()
    page.get_by_text("Submit").click()
    page.get_by_text("deleted a.txt").wait_for()

    # An artifact: the UI loads the version named in the event's artifactDelta.
    message.fill("note buy milk")
    message.press("Enter")
    page.get_by_text("Artifact: note.txt").wait_for()
    page.wait_for_function("() => document.body.innerText.includes('buy milk')")
    artifact = f"/apps/{app}/users/user/sessions/{session_of(service, app).id}/artifacts"
    page.wait_for_function(
        "() => performance.getEntriesByType('resource').some("
        "e => e.name.includes('/artifacts/note.txt/versions/0'))"
    )
    assert ("GET", f"{artifact}/note.txt/versions/0") in calls

    # A rename: the inline edit of the current session PATCHes its display name.
    page.get_by_text("slow 5 0.02").first.click()
    page.locator("app-inline-edit button[aria-label='Edit']").first.click()
    name = page.locator("app-inline-edit input").first
    name.fill("Groceries")
    with page.expect_response(lambda r: r.request.method == "PATCH") as patched:
        name.press("Enter")
    assert patched.value.status == 200
    page.locator(".mat-drawer-backdrop").click()

    # The trace pane: spans of each invocation, from our server's trace route.
    page.get_by_text("Traces", exact=True).click()
    page.get_by_text("Total latency", exact=False).first.wait_for()
    page.screenshot(path=str(shots / "google_adk_ui.png"))
    assert page.get_by_text("INVOCATION ID", exact=False).count() == 4  # one per run
    assert page.get_by_text("call_llm", exact=True).count() >= 3
    spans = page.request.get(
        f"{url}/dev/apps/{app}/debug/trace/session/{session_of(service, app).id}"
    ).json()
    from_store = [s for s in spans if "adk_rx.invocation_id" in s["attributes"]]
    assert len(from_store) == len(spans)  # every run of this server has its real spans
    assert "execute_tool save_note" in [s["name"] for s in spans]

    session = session_of(service, app)
    texts = [e.text() for e in session.events if e.content is not None and not e.partial]
    assert "deleted a.txt" in texts and "buy milk" in " ".join(texts)
    assert session.state["__session_metadata__"]["displayName"] == "Groceries"
    assert ("PATCH", f"/apps/{app}/users/user/sessions/{session.id}") in calls
    assert any(path.startswith(f"/dev/apps/{app}/debug/trace/session/") for _, path in calls)
    assert failures == []
