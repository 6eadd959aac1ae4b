"""Notes behind OAuth2: an agent whose tools come from an OpenAPI spec (``notes.yaml``).

    python examples/oauth_notes/server.py &          # the API and its OAuth2 server
    adk-rx run examples/oauth_notes

Ask "who am I?" or "note buy milk". The first call needs the user's sign-in: ``adk-rx run``
prints the sign-in link and asks for the URL the browser lands on (the example server's
sign-in page consents at once and redirects to ``http://127.0.0.1:8931/callback?code=...``;
paste that URL, an error page in the browser is expected). adk_rx exchanges the code for
tokens and runs the call again.

The model: ``ADK_RX_MODEL`` when set, else Gemini when ``GOOGLE_API_KEY`` /
``GEMINI_API_KEY`` is, else :class:`OfflineNotesLlm`, which maps "note ..." to ``add_note``
and anything else to ``get_me``. ``NOTES_API_URL`` moves the server (default
``http://127.0.0.1:8931``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from google.genai import types
from reactivex import Observable

from adk_rx import BaseLlm, LlmAgent, LlmRequest, LlmResponse
from adk_rx.auth import AuthCredential, AuthCredentialTypes, OAuth2Auth
from adk_rx.rx import single
from adk_rx.tools.openapi import OpenAPIToolset

DEFAULT_URL = "http://127.0.0.1:8931"
API_URL = os.environ.get("NOTES_API_URL", DEFAULT_URL).rstrip("/")


class OfflineNotesLlm(BaseLlm):
    """Calls ``add_note`` for "note ...", ``get_me`` otherwise; then says what came back."""

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        last = llm_request.contents[-1]
        answered = [p.function_response for p in last.parts or [] if p.function_response]
        if answered:
            reply = LlmResponse.text(f"{answered[0].name}: {json.dumps(answered[0].response)}")
            return single(lambda: reply)
        words = "".join(p.text or "" for p in last.parts or []).strip()
        if words.lower().startswith("note "):
            call = types.FunctionCall(name="add_note", args={"title": words[5:].strip()})
        else:
            call = types.FunctionCall(name="get_me", args={})
        response = LlmResponse(
            content=types.Content(role="model", parts=[types.Part(function_call=call)])
        )
        return single(lambda: response)


def pick_model() -> str | BaseLlm:
    if name := os.environ.get("ADK_RX_MODEL"):
        return name
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return "gemini-2.5-flash"
    return OfflineNotesLlm(model="offline-notes")


spec = Path(__file__).with_name("notes.yaml").read_text().replace(DEFAULT_URL, API_URL)
notes = OpenAPIToolset(
    spec_str=spec,
    spec_str_type="yaml",
    auth_credential=AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2,
        oauth2=OAuth2Auth(
            client_id="notes-example",
            client_secret="notes-example-secret",
            redirect_uri=f"{API_URL}/callback",
        ),
    ),
)

root_agent = LlmAgent(
    name="notes",
    model=pick_model(),
    instruction="You keep the signed-in user's notes with your tools. Answer in one sentence.",
    tools=[notes],
)
