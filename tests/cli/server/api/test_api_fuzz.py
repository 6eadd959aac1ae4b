"""The API fuzzed from its own OpenAPI document, against a real ``adk-rx api-server`` on SQLite
and PostgreSQL with tokens for two users (see :mod:`tests.cli.hostile_support`).

schemathesis takes the server's document (built when the module is collected, so each
operation is a test of its own, and checked equal to what the server serves at
``/openapi.json``) and sends every operation a bounded, derandomized set of requests
(boundary cases, then random ones; valid and invalid), as alice. Each answer must be no
500, carry a status code and a body that the document declares, accept what the document
calls valid and refuse what it does not. So the document stays true to the routes and the
routes to it.

Random ids reach nothing, so most of the time a path parameter or a body id is swapped for one
of the objects seeded before the run: alice's session with a turn, an artifact, an
invocation, an eval set with a case and a result, and bob's counterparts, whose secret text
must never come back to alice. Deleting routes get objects of their own, so the rest stay
reachable. Inputs the fuzzer found that once broke the server are kept below as plain tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import strategies as st
from schemathesis import Case, CheckContext, Response
from schemathesis.core.parameters import ParameterLocation

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from adk_rx.cli.server.api.openapi import spec
from tests.cli.hostile_support import ALICE, BACKENDS, BOB, client, hostile_server, run_body
from tests.cli.server_process import ServerProcess
from tests.cli.server_support import AGENT_SOURCE, user_text

pytestmark = pytest.mark.timeout(300)

APP = "resumable_chat"  # hostile_support's scripted app, resumable: a run may name an invocation
RESUMABLE = AGENT_SOURCE + (
    "from adk_rx import App, ResumabilityConfig\n"
    "app = App(name='resumable_chat', root_agent=root_agent,"
    " resumability_config=ResumabilityConfig(is_resumable=True))\n"
)

# Random examples per operation and kind (valid, invalid), besides the boundary cases; and
# the seed. Fixed, so CI replays the same requests; a longer hunt sets them in the environment.
EXAMPLES = int(os.environ.get("ADK_RX_FUZZ_EXAMPLES", "16"))
SEED = int(os.environ.get("ADK_RX_FUZZ_SEED", "25"))
SECRET = "bob-secret-5e1f"
CONFIG = {
    "seed": SEED,
    "generation": {"max-examples": EXAMPLES, "deterministic": True, "database": "none"},
    # Sequences of calls along links are left to the seeded objects: the document has none.
    "phases": {"stateful": {"enabled": False}},
    "headers": ALICE,
    # Large google-genai schemas make slow, large examples; that is what is being tested.
    "suppress-health-check": ["too_slow", "filter_too_much", "data_too_large"],
}


def _run_body(user: str, sid: str, text: str = "hi", **extra: object) -> dict[str, object]:
    return {**run_body(user, sid, text, **extra), "app_name": APP}


@dataclass(frozen=True)
class Seeded:
    """The server and the ids of what was stored on it before fuzzing."""

    server: ServerProcess
    objects: Mapping[str, Mapping[str, tuple[str, ...]]]  # user -> parameter or body key -> ids
    doomed: Mapping[str, Mapping[str, tuple[str, ...]]]  # the same, for the deleting routes
    bobs: dict[str, Any]  # what bob reads of his own objects


def bobs_objects(server: ServerProcess) -> dict[str, Any]:
    with client(server, BOB) as bob:
        return {
            path: bob.get(path).json()
            for path in (
                f"/apps/{APP}/users/bob/sessions/bob-s",
                f"/apps/{APP}/users/bob/sessions/bob-s2",
                f"/apps/{APP}/users/bob/sessions/bob-s/artifacts",
                f"/dev/apps/{APP}/eval_sets/bob_set/evals",
                f"/dev/apps/{APP}/eval_results",
            )
        }


def _stored_turn(http: httpx.Client, user: str, sid: str, text: str) -> tuple[str, str]:
    """A session with one turn and one finished invocation: (invocation id, event id)."""
    sessions = f"/apps/{APP}/users/{user}/sessions"
    assert http.post(sessions, json={"session_id": sid}).status_code == 200
    assert http.post("/run", json=_run_body(user, sid, f"note {text}")).status_code == 200
    started = http.post(f"{sessions}/{sid}/invocations", json={"new_message": user_text(text)})
    assert started.status_code == 202, started.text
    invocation = started.json()["invocation_id"]
    assert "event: end" in http.get(f"{sessions}/{sid}/invocations/{invocation}/events").text
    return invocation, http.get(f"{sessions}/{sid}").json()["events"][-1]["id"]


def _eval_result(http: httpx.Client, user: str, sid: str, eval_set: str) -> str:
    """An eval set with case ``case1`` (and ``case2``) from the session, run once: its result id."""
    sets = f"/dev/apps/{APP}/eval_sets/{eval_set}"
    assert http.post(sets).status_code == 200
    for case in ("case1", "case2"):
        body = {"eval_id": case, "session_id": sid, "user_id": user}
        assert http.post(f"{sets}/add_session", json=body).status_code == 200
    assert http.post(f"{sets}/run_eval", json={"eval_ids": ["case1"]}).status_code == 200
    return http.get(f"/dev/apps/{APP}/eval_results").json()[0]


def seed(server: ServerProcess) -> Seeded:
    with client(server, ALICE) as alice, client(server, BOB) as bob:
        alice_turn = _stored_turn(alice, "alice", "s1", "alice's note")
        bob_turn = _stored_turn(bob, "bob", "bob-s", SECRET)
        for user, http, sid in (("alice", alice, "s2"), ("bob", bob, "bob-s2")):
            assert http.post(f"/apps/{APP}/users/{user}/sessions/{sid}").status_code == 200
        artifacts = f"/apps/{APP}/users/alice/sessions/s1/artifacts"
        doomed = {"filename": "doomed.txt", "artifact": {"text": "x"}}
        assert alice.post(artifacts, json=doomed).status_code == 200
        results = (
            _eval_result(alice, "alice", "s1", "set1"),
            _eval_result(bob, "bob", "bob-s", "bob_set"),
        )
    ids = {"alice": ("s1", *alice_turn, results[0]), "bob": ("bob-s", *bob_turn, results[1])}
    objects = {
        user: {
            **dict.fromkeys(("app", "app_name"), (APP,)),
            **dict.fromkeys(("user", "user_id"), (user,)),
            **dict.fromkeys(("sid", "session_id"), (sid,)),
            **dict.fromkeys(("iid", "invocation_id"), (invocation,)),
            **dict.fromkeys(("event_id", "function_call_event_id"), (event,)),
            "name": ("note.txt",),
            "version": ("0", "latest"),
            "eval_set_id": ("set1" if user == "alice" else "bob_set",),
            **dict.fromkeys(("case_id", "eval_id"), ("case1",)),
            "result_id": (result,),
        }
        for user, (sid, invocation, event, result) in ids.items()
    }
    doomed = {
        "alice": {"sid": ("s2",), "name": ("doomed.txt",), "case_id": ("case2",)},
        "bob": {"sid": ("bob-s2",), "case_id": ("case2",)},
    }
    return Seeded(server, objects, doomed, bobs_objects(server))


def _swapped(values: Mapping[str, Any], choices: Mapping[str, tuple[str, ...]]) -> Any:
    """A strategy of ``values`` with each id that has known ones mostly drawn from them."""
    return st.fixed_dictionaries(
        {
            key: st.sampled_from([*choices[key] * 9, value])
            if key in choices and isinstance(value, str)
            else st.just(value)
            for key, value in values.items()
        }
    )


def reach_stored_objects(case: Case, data: st.DataObject, seeded: Seeded) -> None:
    """Swaps the ids of the case's path and body for those of one user's stored objects
    (alice's, the caller's, or bob's), where the case holds valid ones: an invalid one
    stays, it is what the case tests."""
    owner = data.draw(st.sampled_from([None, "alice", "alice", "alice", "bob"]))
    if owner is None:
        return
    choices = {**seeded.objects[owner], **(seeded.doomed[owner] if case.method == "DELETE" else {})}
    meta = case.meta
    if case.path_parameters and not (meta and meta.is_negative_at(ParameterLocation.PATH)):
        path = data.draw(_swapped(case.path_parameters, choices))
        if path != case.path_parameters:
            case.path_parameters = path
    if isinstance(case.body, dict) and not (meta and meta.is_negative_at(ParameterLocation.BODY)):
        body = _without_answers(data.draw(_swapped(case.body, choices)))
        if body != case.body:
            case.body = body


def _without_answers(body: dict[str, Any]) -> dict[str, Any]:
    """A valid run body without function responses: one must answer an open call of the
    session, which random data cannot name (400; tests/runner/test_forged_answers.py)."""
    message = body.get("new_message")
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        return body
    parts = [p for p in message["parts"] if (p or {}).get("functionResponse") is None]
    return {**body, "new_message": {**message, "parts": parts or [{"text": "hi"}]}}


def stays_with_alice(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """Alice, the caller, never reaches another user's paths, and never reads bob's text."""
    named = (case.path_parameters or {}).get("user")
    if isinstance(case.body, dict) and isinstance(case.body.get("user_id"), str):
        named = named or case.body["user_id"]
    if named not in (None, "alice") and response.status_code < 300:
        raise AssertionError(f"alice reached user {named!r}'s path: {response.status_code}")
    if SECRET in response.text:
        raise AssertionError("bob's text came back to alice")
    return None


@pytest.fixture(scope="module", params=BACKENDS)
def seeded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Seeded]:
    root = tmp_path_factory.mktemp(f"fuzz_{request.param}")
    (root / "agents" / APP).mkdir(parents=True)
    (root / "agents" / APP / "agent.py").write_text(RESUMABLE)
    # A run the fuzzer starts must not outlive the module, whatever its message says.
    with hostile_server(request.param, root, "--run-timeout", "10") as server:
        yield seed(server)


def the_document() -> dict[str, Any]:
    """The document every api-server serves (its routes do not depend on its options)."""
    app = create_app(Path(), session_service=InMemorySessionService())
    return spec(list(app.routes))


# Built when the module is collected, so each operation is a test of its own (schemathesis's
# loader from a fixture, which could read the running server's, fails on pytest 9.2).
schema = schemathesis.openapi.from_dict(
    the_document(), config=schemathesis.Config.from_dict(CONFIG)
)


def test_the_server_serves_the_document_fuzzed(seeded: Seeded) -> None:
    served = httpx.get(f"{seeded.server.url}/openapi.json", headers=ALICE)
    assert served.json() == schema.raw_schema


@schema.parametrize()
@schema.given(data=st.data())
def test_every_operation_holds_to_the_document(
    case: Case, data: st.DataObject, seeded: Seeded
) -> None:
    reach_stored_objects(case, data, seeded)
    case.call_and_validate(
        base_url=seeded.server.url, timeout=30, additional_checks=[stays_with_alice]
    )


def test_the_fuzzing_left_bobs_objects_as_they_were(seeded: Seeded) -> None:
    """Alice's requests named bob's objects: they are all still there, unchanged."""
    assert bobs_objects(seeded.server) == seeded.bobs
    assert SECRET in str(seeded.bobs)


# -- what the fuzzer found --------------------------------------------------------------------
S1 = f"/apps/{APP}/users/alice/sessions/s1"
ENUM_HOLDING_AN_OBJECT = {"role": "user", "parts": [{"text": "hi", "media_processing": {}}]}


def test_a_part_whose_enum_field_holds_an_object_is_refused_on_every_route(seeded: Seeded):
    """google-genai's enums raised AttributeError, not a ValidationError, for an object: 500."""
    message = {"new_message": ENUM_HOLDING_AN_OBJECT}
    event = {"author": "user", "content": ENUM_HOLDING_AN_OBJECT}
    part = {"filename": "enum.txt", "artifact": ENUM_HOLDING_AN_OBJECT["parts"][0]}
    with client(seeded.server, ALICE) as http:
        answers = {
            "/run": http.post("/run", json=_run_body("alice", "s1", **message)),
            "/run_sse": http.post("/run_sse", json=_run_body("alice", "s1", **message)),
            "invocations": http.post(f"{S1}/invocations", json=message),
            "artifacts": http.post(f"{S1}/artifacts", json=part),
            "seed events": http.post(f"/apps/{APP}/users/alice/sessions", json={"events": [event]}),
        }
    assert {route: answer.status_code for route, answer in answers.items()} == dict.fromkeys(
        answers, 400
    )
    assert all("not a valid" in answer.json()["detail"] for answer in answers.values())


def test_a_405_names_every_method_of_its_path(seeded: Seeded):
    """Two routes serve one path: the 405 of the first one named only its own methods."""
    with client(seeded.server, ALICE) as http:
        session = http.request("OPTIONS", S1)
        telemetry = http.put("/config/telemetry")
    assert session.status_code == telemetry.status_code == 405
    assert session.headers["allow"] == "DELETE, GET, HEAD, PATCH, POST"
    assert telemetry.headers["allow"] == "GET, HEAD, POST"


def test_a_session_trace_checks_the_session_id_as_every_route_does(seeded: Seeded):
    with client(seeded.server, ALICE) as http:
        too_long = http.get(f"/dev/apps/{APP}/debug/trace/session/{'x' * 513}")
        control = http.get(f"/dev/apps/{APP}/debug/trace/%0A")
    assert too_long.status_code == control.status_code == 400


def test_running_cases_a_set_lacks_answers_404_as_reading_one_does(seeded: Seeded):
    with client(seeded.server, ALICE) as http:
        run = http.post(f"/dev/apps/{APP}/eval_sets/set1/run_eval", json={"eval_ids": ["nope"]})
        read = http.get(f"/dev/apps/{APP}/eval_sets/set1/evals/nope")
    assert run.status_code == read.status_code == 404


def test_a_run_naming_an_invocation_its_session_lacks_answers_404(seeded: Seeded):
    """The run failed to start with InvocationNotFoundError, which answered 500."""
    bobs = seeded.objects["bob"]["invocation_id"][0]
    with client(seeded.server, ALICE) as http:
        answers = [
            http.post("/run", json=_run_body("alice", "s1", invocation_id=bobs)),
            http.post("/run_sse", json=_run_body("alice", "s1", invocation_id=bobs)),
            http.post(
                f"{S1}/invocations", json={"new_message": user_text("hi"), "invocation_id": bobs}
            ),
        ]
    assert [answer.status_code for answer in answers] == [404] * 3
    assert all("holds no invocation" in answer.json()["detail"] for answer in answers)


def test_a_client_may_start_its_next_run_as_soon_as_one_answers(seeded: Seeded):
    """The log of a run ended when the Runner reported completion, a moment before it
    released the session: the client's next run answered 409 (seen while seeding)."""
    with client(seeded.server, ALICE) as http:
        assert http.post(f"/apps/{APP}/users/alice/sessions/back-to-back").status_code == 200
        answers = []
        for _ in range(10):
            ran = http.post("/run", json=_run_body("alice", "back-to-back"))
            started = http.post(
                f"/apps/{APP}/users/alice/sessions/back-to-back/invocations",
                json={"new_message": user_text("hi")},
            )
            events = f"{started.request.url.path}/{started.json().get('invocation_id')}/events"
            answers += [ran.status_code, started.status_code, http.get(events).status_code]
    assert answers == [200, 202, 200] * 10


def test_every_cursor_a_stream_request_carries_is_checked(seeded: Seeded):
    """A malformed Last-Event-ID beside ``after``, and an empty ``after``, were read as none."""
    invocation = seeded.objects["alice"]["iid"][0]
    url = f"{S1}/invocations/{invocation}/events"
    with client(seeded.server, ALICE) as http:
        both = http.get(url, params={"after": "1"}, headers={"Last-Event-ID": "="})
        empty = http.get(url, params={"after": ""})
        empty_header = http.get(url, params={"after": "1"}, headers={"Last-Event-ID": ""})
    assert both.status_code == empty.status_code == 400
    assert empty_header.status_code == 200 and "event: end" in empty_header.text
