"""The auth pause and resume against a local OAuth2 server: sign-in request, code exchange,
stored credential, refresh, and the errors a model sees."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from adk_rx import LlmAgent
from adk_rx.auth import InMemoryCredentialService
from adk_rx.testing import ScriptedLlm, simplify_events
from adk_rx.testing.oauth_server import LocalOAuthServer, serve
from tests.auth.support import (
    REDIRECT,
    answer,
    credential_request,
    oauth_config,
    sign_in,
    whoami_tool,
)
from tests.tool_harness import Harness, call, calls, responses_in


@pytest.fixture
def server() -> Iterator[LocalOAuthServer]:
    with serve() as running:
        yield running


def _harness(server: LocalOAuthServer, llm: ScriptedLlm, **runner: object) -> Harness:
    agent = LlmAgent(name="root", model=llm, tools=[whoami_tool(server)])
    return Harness(agent, **runner)


def test_a_tool_asks_for_sign_in_and_the_turn_ends(server: LocalOAuthServer) -> None:
    llm = ScriptedLlm([calls(call("whoami", {}, "c1"))])
    harness = _harness(server, llm)

    first = harness.turn("who am I?")

    request_id, args = credential_request(first)
    assert args["functionCallId"] == "c1"
    oauth2 = args["authConfig"]["exchangedAuthCredential"]["oauth2"]
    assert oauth2["authUri"].startswith(server.url + "/authorize?")
    assert "state=" in oauth2["authUri"] and oauth2["state"]
    assert "clientSecret" not in oauth2
    assert "clientSecret" not in args["authConfig"]["rawAuthCredential"]["oauth2"]
    assert first[1].long_running_tool_ids == {request_id}
    assert simplify_events(first) == [
        "root: FunctionCall(whoami, {})",
        simplify_events([first[1]])[0],
        'root: FunctionResponse(whoami, {"status": "waiting for the user to sign in"})',
    ]
    assert len(llm.requests) == 1  # the model is not called again while the user signs in


def test_the_answer_is_exchanged_once_and_the_tool_runs_again(server: LocalOAuthServer) -> None:
    llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "You are ada."])
    harness = _harness(server, llm)
    request_id, args = credential_request(harness.turn("who am I?"))

    second = harness.turn(answer(request_id, args, sign_in(args)))

    assert simplify_events(second) == [
        'root: FunctionResponse(whoami, {"user": "ada"})',
        "root: You are ada.",
    ]
    assert second[0].get_function_responses()[0].id == "c1"
    assert server.exchanges == 1
    # The model sees the call answered once, by the signed-in result; no credential traffic.
    assert responses_in(llm.requests[-1]) == [{"user": "ada"}]


def test_a_stored_credential_serves_later_sessions_and_is_refreshed_when_expired(
    server: LocalOAuthServer,
) -> None:
    llm = ScriptedLlm(
        [
            calls(call("whoami", {}, "c1")),
            "signed in",
            calls(call("whoami", {}, "c2")),
            "still ada",
            calls(call("whoami", {}, "c3")),
            "ada after refresh",
        ]
    )
    credentials = InMemoryCredentialService()
    harness = _harness(server, llm, credential_service=credentials)
    request_id, args = credential_request(harness.turn())
    harness.turn(answer(request_id, args, sign_in(args)))

    harness.new_session("s2")
    later = harness.turn("again", session_id="s2")
    assert simplify_events(later)[1] == 'root: FunctionResponse(whoami, {"user": "ada"})'
    assert server.exchanges == 1 and server.refreshes == 0

    # An hour passes: the server no longer takes the token, and the stored one says so too.
    server.expire_tokens()
    key = {
        "app_name": "app",
        "user_id": "u1",
        "credential_key": oauth_config(server).credential_key,
    }
    stored = credentials.load_credential(**key)
    assert stored is not None and stored.oauth2 is not None
    stored.oauth2.expires_at = int(time.time()) - 1
    credentials.save_credential(**key, credential=stored)
    refreshed = harness.turn("and now?", session_id="s2")
    assert simplify_events(refreshed)[1] == 'root: FunctionResponse(whoami, {"user": "ada"})'
    assert server.exchanges == 1 and server.refreshes == 1


def test_without_a_credential_service_a_credential_lasts_one_invocation(
    server: LocalOAuthServer,
) -> None:
    llm = ScriptedLlm(
        [calls(call("whoami", {}, "c1")), "signed in", calls(call("whoami", {}, "c2"))]
    )
    harness = _harness(server, llm)
    request_id, args = credential_request(harness.turn())
    harness.turn(answer(request_id, args, sign_in(args)))

    again = harness.turn("again")

    credential_request(again)  # asked once more


def test_a_wrong_code_gives_the_model_an_error_without_the_code(server: LocalOAuthServer) -> None:
    llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "could not sign in"])
    harness = _harness(server, llm)
    request_id, args = credential_request(harness.turn())

    second = harness.turn(answer(request_id, args, sign_in(args, code="code-forged")))

    error = second[0].get_function_responses()[0].response
    assert error is not None and "invalid_grant" in error["error"]
    assert "code-forged" not in str(error)
    assert server.exchanges == 1
    assert simplify_events(second)[-1] == "root: could not sign in"


def test_a_forged_state_is_refused_before_any_exchange(server: LocalOAuthServer) -> None:
    llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "refused"])
    harness = _harness(server, llm)
    request_id, args = credential_request(harness.turn())

    second = harness.turn(answer(request_id, args, sign_in(args, state="attacker")))

    error = second[0].get_function_responses()[0].response
    assert error is not None and "state" in error["error"].lower()
    assert server.exchanges == 0


def test_the_answer_cannot_swap_the_client_or_the_redirect(server: LocalOAuthServer) -> None:
    llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "done"])
    harness = _harness(server, llm)
    request_id, args = credential_request(harness.turn())
    redirect = sign_in(args)
    forged = answer(request_id, args, redirect)
    response = forged.parts[0].function_response
    oauth2 = response.response["exchangedAuthCredential"]["oauth2"]
    oauth2.update(
        clientId="other-client", redirectUri="http://evil.example/cb", accessToken="at-forged"
    )

    second = harness.turn(forged)

    assert second[0].get_function_responses()[0].response == {"user": "ada"}
    assert server.exchanges == 1
    assert REDIRECT  # the pinned redirect URI is the tool's own


def test_an_answer_to_a_request_never_made_is_refused(server: LocalOAuthServer) -> None:
    from adk_rx.errors import ConfigurationError

    llm = ScriptedLlm([calls(call("whoami", {}, "c1"))])
    harness = _harness(server, llm)
    request_id, args = credential_request(harness.turn())

    with pytest.raises(ConfigurationError):
        harness.turn(answer("not-" + request_id, args, sign_in(args)))
    assert server.exchanges == 0


@pytest.mark.parametrize("continue_invocation", [True, False])
def test_a_resumable_app_resumes_the_sign_in_in_the_paused_or_a_new_invocation(
    server: LocalOAuthServer, continue_invocation: bool
) -> None:
    from reactivex import operators as ops

    from adk_rx import App, InMemorySessionService, Runner
    from adk_rx.apps import ResumabilityConfig

    llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "You are ada."])
    app = App(
        name="app",
        root_agent=LlmAgent(name="root", model=llm, tools=[whoami_tool(server)]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    runner = Runner(app=app, session_service=InMemorySessionService())
    runner.session_service.create_session(app_name="app", user_id="u", session_id="s").run()
    first = (
        runner.run_async(user_id="u", session_id="s", new_message="who?").pipe(ops.to_list()).run()
    )
    request_id, args = credential_request(first)

    second = (
        runner.run_async(
            user_id="u",
            session_id="s",
            new_message=answer(request_id, args, sign_in(args)),
            invocation_id=first[0].invocation_id if continue_invocation else None,
        )
        .pipe(ops.to_list())
        .run()
    )

    assert simplify_events(second)[:2] == [
        'root: FunctionResponse(whoami, {"user": "ada"})',
        "root: You are ada.",
    ]
    assert server.exchanges == 1


def test_a_public_client_signs_in_with_pkce_and_the_verifier_is_never_stored(
    server: LocalOAuthServer,
) -> None:
    from urllib.parse import parse_qs, urlsplit

    from adk_rx import FunctionTool, ToolContext
    from adk_rx.auth.oauth2 import pkce_verifier
    from adk_rx.sessions.codec import encode_event

    public = oauth_config(server)
    assert public.raw_auth_credential is not None and public.raw_auth_credential.oauth2
    public.raw_auth_credential.oauth2.client_secret = None

    def whoami(tool_context: ToolContext) -> dict[str, str]:
        """Tells who is signed in."""
        credential = tool_context.get_auth_response(public)
        if credential is None:
            tool_context.request_credential(public)
            return {"status": "waiting"}
        return {"token": "yes" if credential.oauth2 and credential.oauth2.access_token else "no"}

    llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[FunctionTool(whoami)]))
    request_id, args = credential_request(harness.turn())
    oauth2 = args["authConfig"]["exchangedAuthCredential"]["oauth2"]
    query = parse_qs(urlsplit(oauth2["authUri"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"]
    assert oauth2["codeChallengeMethod"] == "S256" and "codeVerifier" not in oauth2

    second = harness.turn(answer(request_id, args, sign_in(args)))

    assert second[0].get_function_responses()[0].response == {"token": "yes"}
    assert server.exchanges == 1
    stored = "".join(encode_event(e) for e in harness.session().events)
    assert pkce_verifier(oauth2["state"]) not in stored


def test_two_calls_needing_one_credential_share_one_request_and_both_run_again(
    server: LocalOAuthServer,
) -> None:
    llm = ScriptedLlm([calls(call("whoami", {}, "c1"), call("whoami", {}, "c2")), "both ada"])
    harness = _harness(server, llm)

    first = harness.turn("who, twice?")
    request_id, args = credential_request(first)  # one request for the two calls
    second = harness.turn(answer(request_id, args, sign_in(args)))

    responses = {r.id: r.response for r in second[0].get_function_responses()}
    assert responses == {"c1": {"user": "ada"}, "c2": {"user": "ada"}}
    assert server.exchanges == 1
