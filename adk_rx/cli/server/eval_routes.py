"""google-adk's eval routes under ``/dev/apps/{app}``: eval sets made from sessions, run, and
their results, kept as files beside the app the way google-adk keeps them.

* eval sets: ``<agents_dir>/<app>/<eval_set_id>.evalset.json`` (so ``adk-rx eval`` runs them
  too); results: ``<agents_dir>/<app>/.adk/eval_history/<app>_<result_id>.evalset_result.json``.
* ``GET eval_sets`` (ids) and ``GET eval-sets`` (``{"eval_set_ids": [...]}``);
  ``POST eval_sets/{id}`` and ``POST eval-sets`` (``{"eval_set": {"eval_set_id": ...}}``)
  create one; ``POST eval_sets/{id}/add_session`` (and ``eval-sets/{id}/add-session``) with
  ``{"eval_id", "session_id", "user_id"}`` turns a stored session into a case;
  ``GET eval_sets/{id}/evals``, ``GET|DELETE eval_sets/{id}/evals/{case}``;
  ``POST eval_sets/{id}/run_eval`` with ``{"eval_ids": [...], "eval_metrics": [{"metric_name",
  "threshold"}]}`` runs cases (all when ``eval_ids`` is empty) and stores the result;
  ``GET eval_results`` (ids), ``GET eval_results/{id}``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.errors import AdkRxError
from adk_rx.evaluation import EvalCase, EvalSet, criteria_from_config, evaluate

from .session_routes import find_session, json_body
from .shared import json_response, not_found, runner_for, server_of, user_path

__all__ = ["routes"]

_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")


def _checked_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _ID.match(value) or ".." in value:
        raise HTTPException(400, f"{what} must be letters, digits, '_', '-' or '.'")
    return value


async def _app_dir(request: Request) -> tuple[str, Path]:
    app = request.path_params["app"]
    await runner_for(request, app)  # 404 for an unknown app
    return app, server_of(request).runners.agents_dir / app


def _set_path(folder: Path, eval_set_id: str) -> Path:
    return folder / f"{_checked_id(eval_set_id, 'eval_set_id')}.evalset.json"


def _history(folder: Path) -> Path:
    return folder / ".adk" / "eval_history"


async def _load_set(folder: Path, eval_set_id: str) -> EvalSet:
    path = _set_path(folder, eval_set_id)
    if not await asyncio.to_thread(path.is_file):
        raise not_found(f"eval set {eval_set_id!r}")
    try:
        return await asyncio.to_thread(EvalSet.load, path)
    except AdkRxError as exc:
        raise HTTPException(500, str(exc)) from exc


async def list_sets(request: Request) -> Response:
    _, folder = await _app_dir(request)
    ids = sorted(p.name.removesuffix(".evalset.json") for p in folder.glob("*.evalset.json"))
    if request.url.path.endswith("eval-sets"):
        return json_response({"eval_set_ids": ids})
    return json_response(ids)


async def create_set(request: Request) -> Response:
    _, folder = await _app_dir(request)
    eval_set_id = request.path_params.get("eval_set_id")
    if eval_set_id is None:
        body = await json_body(request)
        eval_set_id = (body.get("eval_set") or {}).get("eval_set_id")
    eval_set_id = _checked_id(eval_set_id, "eval_set_id")
    path = _set_path(folder, eval_set_id)
    if await asyncio.to_thread(path.exists):
        raise HTTPException(400, f"eval set {eval_set_id!r} already exists")
    eval_set = EvalSet(eval_set_id=eval_set_id, creation_timestamp=time.time())
    await asyncio.to_thread(eval_set.save, path)
    return json_response(json.loads(eval_set.to_json()))


async def add_session(request: Request) -> Response:
    app, folder = await _app_dir(request)
    eval_set = await _load_set(folder, request.path_params["eval_set_id"])
    body = await json_body(request)
    eval_id = _checked_id(body.get("eval_id"), "eval_id")
    user_id, session_id = body.get("user_id"), body.get("session_id")
    if not isinstance(user_id, str) or not isinstance(session_id, str):
        raise HTTPException(400, "user_id and session_id are required")
    user_path(request, user_id)
    session = await find_session(request, app, user_id, session_id)
    case = EvalCase.from_session(session, eval_id=eval_id)
    try:
        updated = eval_set.add_case(case)
    except AdkRxError as exc:
        raise HTTPException(400, str(exc)) from exc
    await asyncio.to_thread(updated.save, _set_path(folder, eval_set.eval_set_id))
    return json_response(None)


async def list_cases(request: Request) -> Response:
    _, folder = await _app_dir(request)
    eval_set = await _load_set(folder, request.path_params["eval_set_id"])
    return json_response(sorted(c.eval_id for c in eval_set.eval_cases))


async def one_case(request: Request) -> Response:
    _, folder = await _app_dir(request)
    eval_set = await _load_set(folder, request.path_params["eval_set_id"])
    case_id = request.path_params["case_id"]
    case = next((c for c in eval_set.eval_cases if c.eval_id == case_id), None)
    if case is None:
        raise not_found(f"eval case {case_id!r}")
    if request.method == "DELETE":
        kept = [c for c in eval_set.eval_cases if c.eval_id != case_id]
        updated = eval_set.model_copy(update={"eval_cases": kept})
        await asyncio.to_thread(updated.save, _set_path(folder, eval_set.eval_set_id))
        return json_response(None)
    whole = json.loads(eval_set.model_copy(update={"eval_cases": [case]}).to_json())
    return json_response(whole["eval_cases"][0])


async def run_eval(request: Request) -> Response:
    app, folder = await _app_dir(request)
    eval_set = await _load_set(folder, request.path_params["eval_set_id"])
    body = await json_body(request)
    wanted = body.get("eval_ids") or []
    cases = [c for c in eval_set.eval_cases if not wanted or c.eval_id in wanted]
    metrics = body.get("eval_metrics") or []
    try:
        criteria = criteria_from_config(
            {"criteria": {m["metric_name"]: m.get("threshold", 0.0) for m in metrics}}
            if metrics
            else None
        )
    except (AdkRxError, KeyError, TypeError) as exc:
        raise HTTPException(400, f"bad eval_metrics: {exc}") from exc
    runner = await runner_for(request, app)
    subset = eval_set.model_copy(update={"eval_cases": cases})
    result = await asyncio.to_thread(evaluate, runner.agent, subset, criteria)
    stored = result.to_dict()
    history = _history(folder)
    path = history / f"{app}_{stored['eval_set_result_id']}.evalset_result.json"

    def write() -> None:
        history.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored, indent=2), encoding="utf-8")

    await asyncio.to_thread(write)
    user = next((c.session_input.user_id for c in cases if c.session_input), "eval_user")
    return json_response(
        [
            {"eval_set_file": eval_set.eval_set_id, "user_id": user, **case}
            for case in stored["eval_case_results"]
        ]
    )


async def list_results(request: Request) -> Response:
    app, folder = await _app_dir(request)
    prefix = f"{app}_"
    names = [
        p.name.removeprefix(prefix).removesuffix(".evalset_result.json")
        for p in _history(folder).glob(f"{prefix}*.evalset_result.json")
    ]
    return json_response(sorted(names))


async def one_result(request: Request) -> Response:
    app, folder = await _app_dir(request)
    result_id = _checked_id(request.path_params["result_id"], "eval_result_id")
    path = _history(folder) / f"{app}_{result_id}.evalset_result.json"
    if not await asyncio.to_thread(path.is_file):
        raise not_found(f"eval result {result_id!r}")
    return json_response(json.loads(await asyncio.to_thread(path.read_text, encoding="utf-8")))


_DEV = "/dev/apps/{app}"
routes = [
    Route(_DEV + "/eval_sets", list_sets, methods=["GET"]),
    Route(_DEV + "/eval-sets", list_sets, methods=["GET"]),
    Route(_DEV + "/eval-sets", create_set, methods=["POST"]),
    Route(_DEV + "/eval_sets/{eval_set_id}", create_set, methods=["POST"]),
    Route(_DEV + "/eval_sets/{eval_set_id}/add_session", add_session, methods=["POST"]),
    Route(_DEV + "/eval-sets/{eval_set_id}/add-session", add_session, methods=["POST"]),
    Route(_DEV + "/eval_sets/{eval_set_id}/evals", list_cases, methods=["GET"]),
    Route(_DEV + "/eval_sets/{eval_set_id}/evals/{case_id}", one_case, methods=["GET", "DELETE"]),
    Route(_DEV + "/eval_sets/{eval_set_id}/run_eval", run_eval, methods=["POST"]),
    Route(_DEV + "/eval_results", list_results, methods=["GET"]),
    Route(_DEV + "/eval_results/{result_id}", one_result, methods=["GET"]),
]
