"""``POST .../sessions/{sid}/rewind``: Runner.rewind over HTTP, and what it refuses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import unique_app, write_agents
from tests.cli.test_server import BASE, invocations, new_session, run_body

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    app = unique_app("rewind")
    return write_agents(tmp_path_factory.mktemp("agents"), app), app


@pytest_asyncio.fixture
async def client(agents: tuple[Path, str]) -> AsyncIterator[httpx.AsyncClient]:
    server = create_app(agents[0], session_service=InMemorySessionService())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url=BASE) as c:
        yield c


def rewind_path(app: str, user: str = "u1", sid: str = "s1") -> str:
    return f"/apps/{app}/users/{user}/sessions/{sid}/rewind"


async def two_notes(client: httpx.AsyncClient, app: str) -> str:
    """Two turns that each save a note; the second turn's invocation id."""
    await new_session(client, app)
    for text in ("note first", "note second"):
        assert (await client.post("/run", json=run_body(app, text))).status_code == 200
    session = (await client.get(f"/apps/{app}/users/u1/sessions/s1")).json()
    [second] = [
        e["invocationId"]
        for e in session["events"]
        if e["author"] == "user"
        and e.get("content", {}).get("parts", [{}])[0].get("text") == "note second"
    ]
    return second


async def test_rewind_undoes_the_state_and_the_artifact_of_later_turns(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    second = await two_notes(client, app)

    rewound = await client.post(rewind_path(app), json={"invocation_id": second})

    assert rewound.status_code == 200, rewound.text
    assert rewound.json()["state"]["last_note"] == "first"
    note = await client.get(f"/apps/{app}/users/u1/sessions/s1/artifacts/note.txt")
    assert note.json()["text"] == "first"
    last = rewound.json()["events"][-1]
    assert last["author"] == "user"
    assert last["actions"]["rewindBeforeInvocationId"] == second


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"invocation_id": "e-unknown"}, 404),
        ({}, 400),
        ({"invocation_id": 5}, 400),
        ({"invocation_id": "bad\u0000id"}, 400),
        ({"invocation_id": "x" * 10_000}, 400),
        ([1, 2], 400),
    ],
)
async def test_a_bad_rewind_is_refused_and_stores_nothing(
    client: httpx.AsyncClient, agents: tuple[Path, str], body: object, status: int
):
    app = agents[1]
    await two_notes(client, app)
    before = (await client.get(f"/apps/{app}/users/u1/sessions/s1")).json()

    answered = await client.post(rewind_path(app), json=body)

    assert answered.status_code == status, answered.text
    after = (await client.get(f"/apps/{app}/users/u1/sessions/s1")).json()
    assert after["events"] == before["events"]


async def test_another_users_session_is_not_found(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    second = await two_notes(client, app)

    answered = await client.post(rewind_path(app, user="bob"), json={"invocation_id": second})

    assert answered.status_code == 404
    state = (await client.get(f"/apps/{app}/users/u1/sessions/s1")).json()["state"]
    assert state["last_note"] == "second"


async def test_a_session_with_a_run_in_progress_answers_409(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    app = agents[1]
    second = await two_notes(client, app)
    started = await client.post(
        invocations(app), json={"new_message": run_body(app, "slow 500 0.01")["new_message"]}
    )
    assert started.status_code == 202, started.text

    answered = await client.post(rewind_path(app), json={"invocation_id": second})

    assert answered.status_code == 409
    cancel = f"{invocations(app)}/{started.json()['invocation_id']}:cancel"
    assert (await client.post(cancel)).status_code in (200, 202, 204)
