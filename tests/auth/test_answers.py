"""The client's side of a credential request (``adk-rx run``): the link shown, the answer."""

from __future__ import annotations

from adk_rx.auth.answers import credential_answer, sign_in_uri

OAUTH_ARGS = {
    "functionCallId": "c1",
    "authConfig": {
        "authScheme": {"type": "oauth2", "flows": {}},
        "exchangedAuthCredential": {
            "authType": "oauth2",
            "oauth2": {"clientId": "app", "authUri": "https://idp/authorize?state=s"},
        },
    },
}


def test_an_oauth_answer_is_the_request_with_the_redirect_url() -> None:
    answer = credential_answer(OAUTH_ARGS, "  http://127.0.0.1/cb?code=x&state=s \n")

    assert answer is not None
    oauth2 = answer["exchangedAuthCredential"]["oauth2"]
    assert oauth2["authResponseUri"] == "http://127.0.0.1/cb?code=x&state=s"
    assert oauth2["clientId"] == "app"
    assert credential_answer(OAUTH_ARGS, "   ") is None  # empty: the request stays open


def test_api_key_and_http_answers() -> None:
    key = {"authConfig": {"authScheme": {"type": "apiKey", "in": "header", "name": "K"}}}
    bearer = {"authConfig": {"authScheme": {"type": "http", "scheme": "bearer"}}}
    basic = {"authConfig": {"authScheme": {"type": "http", "scheme": "Basic"}}}

    assert credential_answer(key, "k-1") == {"authType": "apiKey", "apiKey": "k-1"}
    assert credential_answer(bearer, "t")["http"]["credentials"] == {"token": "t"}  # type: ignore[index]
    assert credential_answer(basic, "ada:pw:x")["http"]["credentials"] == {  # type: ignore[index]
        "username": "ada",
        "password": "pw:x",
    }


def test_only_http_links_are_shown_and_malformed_requests_answer_nothing() -> None:
    assert sign_in_uri(OAUTH_ARGS) == "https://idp/authorize?state=s"
    hostile = {
        "authConfig": {"exchangedAuthCredential": {"oauth2": {"authUri": "javascript:alert(1)"}}}
    }
    assert sign_in_uri(hostile) is None
    assert sign_in_uri({"authConfig": "nope"}) is None
    assert credential_answer({"authConfig": ["x"]}, "y") is None
    assert credential_answer({"authConfig": {"authScheme": {"type": "mutualTLS"}}}, "y") is None


def test_take_answers_keeps_credentials_in_memory_and_leaves_other_parts() -> None:
    from google.genai import types

    from adk_rx.auth.answers import MAX_ANSWER_CHARS, RECEIVED, take_answers
    from adk_rx.invocation_shared import InvocationShared

    def response(call_id: str, name: str, body: dict) -> types.Part:
        return types.Part(
            function_response=types.FunctionResponse(id=call_id, name=name, response=body)
        )

    shared = InvocationShared(0)
    content = types.Content(
        role="user",
        parts=[
            types.Part(text="here"),
            response("r1", "adk_request_credential", {"apiKey": "k-secret", "authType": "apiKey"}),
            response("r2", "adk_request_credential", {"pad": "x" * MAX_ANSWER_CHARS}),
            response("c1", "lookup", {"ok": 1}),
        ],
    )

    kept = take_answers(shared, content)

    assert "k-secret" not in kept.model_dump_json()
    assert [p.function_response.response for p in kept.parts[1:3]] == [RECEIVED, RECEIVED]  # type: ignore[index,union-attr]
    assert kept.parts[0].text == "here" and kept.parts[3] == content.parts[3]  # type: ignore[index]
    assert shared.credential_answers == {"r1": {"apiKey": "k-secret", "authType": "apiKey"}}
    plain = types.Content(role="user", parts=[types.Part(text="hi")])
    assert take_answers(shared, plain) is plain
