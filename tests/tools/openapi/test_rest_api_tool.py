"""RestApiTool against local servers: arguments in their places, auth, HTTP errors for the
model, bounds, timeouts and cancellation; hostile arguments and documents."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from adk_rx import LlmAgent
from adk_rx.auth import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    InMemoryCredentialService,
    OAuth2Auth,
)
from adk_rx.errors import ConfigurationError
from adk_rx.testing import ScriptedLlm
from adk_rx.testing.oauth_server import LocalOAuthServer, serve
from adk_rx.tools.openapi import OpenAPIToolset
from adk_rx.tools.openapi.spec import MAX_SPEC_CHARS, load_spec, operations
from tests.auth.support import REDIRECT, answer, credential_request, sign_in
from tests.tool_harness import Harness, call, calls
from tests.tools.openapi.support import EchoApi, echo_spec, serving_echo

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def api() -> Iterator[EchoApi]:
    with serving_echo() as running:
        yield running


def _run(toolset: OpenAPIToolset, name: str, args: dict[str, Any], **runner: Any) -> Any:
    """One model call of ``name`` with ``args``; returns the response the model got."""
    llm = ScriptedLlm([calls(call(name, args, "c1")), "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[toolset]), **runner)
    events = harness.turn("go")
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert len(responses) == 1, responses
    return responses[0]


def test_arguments_go_to_path_query_header_and_body(api: EchoApi) -> None:
    toolset = OpenAPIToolset(spec_dict=echo_spec(api.url))

    got = _run(toolset, "get_item_by_id", {"item_id": "a b", "verbose": True, "x_trace": "t-1"})
    assert got["path"] == "/echo/items/a b" and got["raw_path"] == "/echo/items/a%20b"
    assert got["query"] == {"verbose": "true", "limit": "10"}  # the default filled in
    assert got["headers"]["x-trace"] == "t-1"

    put = _run(toolset, "put_item", {"item_id": "7", "item_name": "pen", "tags": [{"label": "x"}]})
    assert put["method"] == "PUT"
    assert json.loads(put["body"]) == {"itemName": "pen", "tags": [{"label": "x"}]}

    batch = _run(toolset, "post_batch", {"array": ["a", "b"]})
    assert json.loads(batch["body"]) == ["a", "b"]


def test_a_path_argument_cannot_leave_its_segment(api: EchoApi) -> None:
    toolset = OpenAPIToolset(spec_dict=echo_spec(api.url))

    got = _run(toolset, "get_item_by_id", {"item_id": "../../status/500?x=1#y"})

    assert got["raw_path"] == "/echo/items/..%2F..%2Fstatus%2F500%3Fx%3D1%23y"
    assert got["query"] == {"limit": "10"}


def test_http_errors_and_bad_arguments_become_errors_for_the_model(api: EchoApi) -> None:
    toolset = OpenAPIToolset(spec_dict=echo_spec(api.url))

    not_found = _run(toolset, "status", {"code": 404})
    assert "Status Code: 404" in not_found["error"] and "status 404 as asked" in not_found["error"]
    assert "Status Code: 503" in _run(toolset, "status", {"code": 503})["error"]
    missing = _run(toolset, "get_item_by_id", {})
    assert "item_id" in missing["error"]
    header = _run(toolset, "get_item_by_id", {"item_id": "1", "x_trace": "a\r\nX-Evil: 1"})
    assert "error" in header and not any("x-evil" in s["headers"] for s in api.seen)
    assert _run(toolset, "text", {}) == {"text": "plain words"}


def test_a_response_over_the_bound_is_an_error_not_a_memory_spike(api: EchoApi) -> None:
    toolset = OpenAPIToolset(spec_dict=echo_spec(api.url), max_response_bytes=100_000)

    got = _run(toolset, "huge", {})

    assert "over 100000 bytes" in got["error"]


def test_a_request_past_its_timeout_is_an_error_and_the_connection_is_closed(
    api: EchoApi,
) -> None:
    toolset = OpenAPIToolset(spec_dict=echo_spec(api.url), timeout=0.3)

    got = _run(toolset, "hang", {})

    assert "timed out" in got["error"]
    assert api.gone.wait(5)


def test_disposing_the_run_cancels_the_request(api: EchoApi) -> None:
    toolset = OpenAPIToolset(spec_dict=echo_spec(api.url))
    llm = ScriptedLlm([calls(call("hang", {}, "c1")), "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[toolset]))
    finished = threading.Event()

    subscription = harness.runner.run_async(
        user_id="u1", session_id="s1", new_message="go"
    ).subscribe(on_completed=finished.set, on_error=lambda _: finished.set())
    assert api.hanging.wait(5)
    subscription.dispose()

    assert api.gone.wait(5)  # the server saw the client go away
    session = harness.session()
    assert session.events[-2].get_function_responses()[0].response == {"error": "cancelled"}


def test_an_api_key_and_a_bearer_token_go_where_the_scheme_says(api: EchoApi) -> None:
    query_key = {"type": "apiKey", "in": "query", "name": "key"}
    toolset = OpenAPIToolset(
        spec_dict=echo_spec(api.url, query_key),
        auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="k-1"),
    )
    got = _run(toolset, "get_item_by_id", {"item_id": "1"})
    assert got["query"]["key"] == "k-1"

    bearer = OpenAPIToolset(
        spec_dict=echo_spec(api.url, {"type": "http", "scheme": "bearer"}),
        auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(scheme="bearer", credentials=HttpCredentials(token="tok-1")),
        ),
    )
    got = _run(bearer, "get_item_by_id", {"item_id": "1"})
    assert got["headers"]["authorization"] == "Bearer tok-1"


def test_client_credentials_are_fetched_once_and_reused(api: EchoApi) -> None:
    scheme = {
        "type": "oauth2",
        "flows": {"clientCredentials": {"tokenUrl": api.url + "/token", "scopes": {}}},
    }
    toolset = OpenAPIToolset(
        spec_dict=echo_spec(api.url, scheme),
        auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(client_id=api.client_id, client_secret=api.client_secret),
        ),
    )
    credentials = InMemoryCredentialService()

    first = _run(toolset, "get_item_by_id", {"item_id": "1"}, credential_service=credentials)
    second = _run(toolset, "get_item_by_id", {"item_id": "2"}, credential_service=credentials)

    assert first["headers"]["authorization"].startswith("Bearer at-")
    assert second["headers"]["authorization"] == first["headers"]["authorization"]
    assert api.client_grants == 1


def test_a_users_sign_in_pauses_the_turn_then_the_call_goes_through() -> None:
    with serve(LocalOAuthServer()) as server:
        toolset = OpenAPIToolset(
            spec_dict=server.openapi_spec(),
            auth_credential=AuthCredential(
                auth_type=AuthCredentialTypes.OAUTH2,
                oauth2=OAuth2Auth(
                    client_id=server.client_id,
                    client_secret=server.client_secret,
                    redirect_uri=REDIRECT,
                ),
            ),
        )
        llm = ScriptedLlm(
            [calls(call("add_note", {"title": "milk"}, "c1")), "added", calls(call("get_me")), "ok"]
        )
        harness = Harness(
            LlmAgent(name="root", model=llm, tools=[toolset]),
            credential_service=InMemoryCredentialService(),
        )

        first = harness.turn("note milk")
        request_id, args = credential_request(first)
        assert first[2].get_function_responses()[0].response == {
            "pending": True,
            "message": "Needs your authorization to access your data.",
        }
        second = harness.turn(answer(request_id, args, sign_in(args)))
        assert second[0].get_function_responses()[0].response == {
            "id": "1",
            "title": "milk",
            "body": None,
        }
        third = harness.turn("who?")
        assert third[1].get_function_responses()[0].response == {"user": "ada"}
        assert server.exchanges == 1


@pytest.mark.parametrize("refresh_works", [True, False])
def test_a_rejected_token_is_refreshed_once_else_the_user_is_asked_again(
    refresh_works: bool,
) -> None:
    with serve(LocalOAuthServer()) as server:
        toolset = OpenAPIToolset(
            spec_dict=server.openapi_spec(),
            auth_credential=AuthCredential(
                auth_type=AuthCredentialTypes.OAUTH2,
                oauth2=OAuth2Auth(
                    client_id=server.client_id,
                    client_secret=server.client_secret,
                    redirect_uri=REDIRECT,
                ),
            ),
        )
        llm = ScriptedLlm(
            [calls(call("get_me", {}, "c1")), "ok", calls(call("get_me", {}, "c2")), "again"]
        )
        harness = Harness(
            LlmAgent(name="root", model=llm, tools=[toolset]),
            credential_service=InMemoryCredentialService(),
        )
        request_id, args = credential_request(harness.turn("who?"))
        harness.turn(answer(request_id, args, sign_in(args)))
        server.expire_tokens()  # revoked at the server; the stored expiry says nothing
        if not refresh_works:
            server.revoke_refresh_tokens()

        again = harness.turn("who now?")

        assert server.refreshes == 1
        if refresh_works:
            assert again[1].get_function_responses()[0].response == {"user": "ada"}
        else:
            credential_request(again)


def test_hostile_documents_are_refused_or_contained() -> None:
    with pytest.raises(ConfigurationError, match="characters"):
        load_spec(" " * (MAX_SPEC_CHARS + 1))
    with pytest.raises(ConfigurationError, match="not JSON"):
        load_spec("{nope")
    with pytest.raises(ConfigurationError, match="not YAML"):
        load_spec("a: [", "yaml")
    with pytest.raises(ConfigurationError, match="not an object"):
        load_spec("[1, 2]")
    with pytest.raises(ConfigurationError):
        load_spec("[" * 100_000 + "]" * 100_000)
    yaml_bomb = "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\n"
    assert load_spec(yaml_bomb, "yaml")["c"]  # aliases share objects; safe_load builds no code
    with pytest.raises(ConfigurationError, match="yaml"):
        load_spec("!!python/object/apply:os.system ['true']", "yaml")

    cyclic = {
        "paths": {
            "/a": {
                "post": {
                    "operationId": "a",
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": "#/d/Node"}}}
                    },
                }
            }
        },
        "d": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/d/Node"}}}},
        "servers": [{"url": "http://x"}],
    }
    (only,) = operations(cyclic)
    assert only.params[0].py_name == "next"
    external = {"paths": {"/b": {"get": {"parameters": [{"$ref": "http://evil/p.json"}]}}}}
    (op,) = operations(external)
    assert op.params == [] and op.name == "b_get"
