"""google-adk's eval routes: a session becomes a case of an eval set, the set runs, its
results are stored and read back; a user's sets live under the server's data directory in
google-adk's layout, so ``adk-rx eval`` runs them. (Hostile clients:
``test_eval_routes_hostile.py``.)"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from adk_rx.cli.main import main
from tests.cli.adk_client import agents_folder, client_for, run_body

pytestmark = pytest.mark.asyncio


@pytest.fixture
def agents() -> tuple[Path, str]:
    return agents_folder("evals")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest_asyncio.fixture
async def client(agents: tuple[Path, str], data_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    tokens = {"t1": "u1", "t2": "u2"}
    async with client_for(agents[0], tokens=tokens, data_dir=data_dir) as http:
        http.headers["Authorization"] = "Bearer t1"
        yield http


async def recorded_session(client: httpx.AsyncClient, app: str) -> None:
    created = await client.post(f"/apps/{app}/users/u1/sessions/s1", json={})
    assert created.status_code == 200, created.text
    for text in ("weather Oslo", "hello"):
        ran = await client.post("/run", json=run_body(app, text))
        assert ran.status_code == 200, ran.text


async def test_a_session_becomes_a_case_that_runs_and_passes(
    client: httpx.AsyncClient, agents: tuple[Path, str], data_dir: Path
) -> None:
    root, app = agents
    await recorded_session(client, app)
    dev = f"/dev/apps/{app}"

    assert (await client.post(f"{dev}/eval_sets/regress")).status_code == 200
    added = await client.post(
        f"{dev}/eval_sets/regress/add_session",
        json={"eval_id": "oslo", "session_id": "s1", "user_id": "u1"},
    )
    assert added.status_code == 200, added.text
    assert (await client.get(f"{dev}/eval_sets")).json() == ["regress"]
    assert (await client.get(f"{dev}/eval-sets")).json() == {"eval_set_ids": ["regress"]}
    assert (await client.get(f"{dev}/eval_sets/regress/evals")).json() == ["oslo"]
    case = (await client.get(f"{dev}/eval_sets/regress/evals/oslo")).json()
    first = case["conversation"][0]
    assert first["user_content"]["parts"][0]["text"] == "weather Oslo"
    assert first["intermediate_data"]["tool_uses"][0]["name"] == "get_weather"

    ran = await client.post(f"{dev}/eval_sets/regress/run_eval", json={"eval_ids": []})

    assert ran.status_code == 200, ran.text
    [result] = ran.json()
    assert result["eval_id"] == "oslo" and result["final_eval_status"] == 1
    scores = {m["metric_name"]: m["score"] for m in result["overall_eval_metric_results"]}
    assert scores == {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0}
    [result_id] = (await client.get(f"{dev}/eval_results")).json()
    stored = (await client.get(f"{dev}/eval_results/{result_id}")).json()
    assert stored["eval_case_results"][0]["eval_id"] == "oslo"
    own = data_dir / "evals" / app / "users" / "u1"
    on_disk = json.loads((own / "regress.evalset.json").read_text())
    assert on_disk["eval_cases"][0]["eval_id"] == "oslo"  # adk-rx eval runs the same file
    assert (own / ".adk" / "eval_history" / f"{app}_{result_id}.evalset_result.json").is_file()
    assert list(root.rglob("*.evalset*.json")) == []  # nothing in the app's folder
    assert main(["eval", str(root / app), str(own)]) == 0


async def test_metrics_in_the_request_set_the_thresholds(
    client: httpx.AsyncClient, agents: tuple[Path, str]
) -> None:
    _, app = agents
    await recorded_session(client, app)
    dev = f"/dev/apps/{app}"
    await client.post(f"{dev}/eval-sets", json={"eval_set": {"eval_set_id": "m"}})
    await client.post(
        f"{dev}/eval-sets/m/add-session",
        json={"eval_id": "c", "session_id": "s1", "user_id": "u1"},
    )

    ran = await client.post(
        f"{dev}/eval_sets/m/run_eval",
        json={"eval_metrics": [{"metric_name": "response_match_score", "threshold": 0.5}]},
    )
    bad = await client.post(
        f"{dev}/eval_sets/m/run_eval",
        json={"eval_metrics": [{"metric_name": "safety_v1", "threshold": 0.5}]},
    )

    [result] = ran.json()
    assert [m["metric_name"] for m in result["overall_eval_metric_results"]] == [
        "response_match_score"
    ]
    assert bad.status_code == 400 and "safety_v1" in bad.json()["detail"]


async def test_bad_ids_unknown_sets_other_users_and_duplicates_are_refused(
    client: httpx.AsyncClient, agents: tuple[Path, str]
) -> None:
    _, app = agents
    await recorded_session(client, app)
    dev = f"/dev/apps/{app}"
    await client.post(f"{dev}/eval_sets/s")
    add = {"eval_id": "c", "session_id": "s1", "user_id": "u1"}

    assert (await client.post(f"{dev}/eval_sets/s")).status_code == 409  # exists
    assert (await client.post(f"{dev}/eval_sets/..bad")).status_code == 400
    assert (await client.get(f"{dev}/eval_sets/nope/evals")).status_code == 404
    assert (await client.post(f"{dev}/eval_sets/s/add_session", json=add)).status_code == 200
    again = await client.post(f"{dev}/eval_sets/s/add_session", json=add)
    assert again.status_code == 409 and "already has" in again.json()["detail"]
    foreign = await client.post(
        f"{dev}/eval_sets/s/add_session",
        json={**add, "eval_id": "d"},
        headers={"Authorization": "Bearer t2"},
    )
    assert foreign.status_code == 404
    assert (await client.get(f"{dev}/eval_results/nope")).status_code == 404
    deleted = await client.delete(f"{dev}/eval_sets/s/evals/c")
    assert deleted.status_code == 200
    assert (await client.get(f"{dev}/eval_sets/s/evals")).json() == []


async def test_without_tokens_every_client_is_the_one_local_user(
    agents: tuple[Path, str], data_dir: Path
) -> None:
    root, app = agents
    dev = f"/dev/apps/{app}"
    async with client_for(root, data_dir=data_dir) as first:
        assert (await first.post(f"{dev}/eval_sets/shared")).status_code == 200
    async with client_for(root, data_dir=data_dir) as second:
        assert (await second.get(f"{dev}/eval_sets")).json() == ["shared"]
        assert (await second.post(f"{dev}/eval_sets/shared")).status_code == 409  # exists

    assert (data_dir / "evals" / app / "local" / "shared.evalset.json").is_file()
