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
