"""google-adk's eval routes under ``/dev/apps/{app}``: eval sets made from sessions, run, and
their results, each scoped to the caller.

Where the sets live and whose they are: :mod:`.eval_scope` (the caller's own sets under the
server's data directory; the app folder's sets read-only for everyone; another user's set or
result answers 404). Bodies: :mod:`.eval_bodies` (a malformed one answers 400, an oversize
one 413).

* ``GET eval_sets`` (ids) and ``GET eval-sets`` (``{"eval_set_ids": [...]}``): the caller's
  sets and the app's shipped ones;
* ``POST eval_sets/{id}`` and ``POST eval-sets`` (``{"eval_set": {"eval_set_id": ...}}``)
  create one of the caller's (409 when the caller has it, 403 when the app ships it);
* ``POST eval_sets/{id}/add_session`` (and ``eval-sets/{id}/add-session``) with
  ``{"eval_id", "session_id", "user_id"}`` turns one of the caller's stored sessions into a
  case of one of the caller's sets (409 when the set has a case of that id); it answers
  ``{"eval_id", "warnings"}``, a warning for each call the session still waits on (an
  approval, a credential, a long-running call): the case holds no answer to it, so record the
  answer in the session and add it again;
* ``GET eval_sets/{id}/evals``, ``GET|DELETE eval_sets/{id}/evals/{case}``;
* ``POST eval_sets/{id}/run_eval`` with ``{"eval_ids": [...], "eval_metrics": [{"metric_name",
  "threshold"}]}`` runs cases (all when ``eval_ids`` is empty) and stores the result with the
  caller's results;
* ``GET eval_results`` (ids), ``GET eval_results/{id}``: the caller's results.
"""

from __future__ import annotations

import asyncio
import json
import time

from google.genai import types
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.errors import AdkRxError
from adk_rx.evaluation import EvalCase, EvalSet, evaluate
from adk_rx.evaluation.replay import waiting_for

from ..shared import json_response, not_found, runner_for, user_path
from .eval_bodies import AddSessionBody, CreateEvalSetBody, RunEvalBody, parse_body
from .eval_scope import checked, eval_scope
from .session_routes import find_session, json_body

__all__ = ["routes"]


async def list_sets(request: Request) -> Response:
    scope = await eval_scope(request)
    ids = await asyncio.to_thread(scope.ids)
    if request.url.path.endswith("eval-sets"):
        return json_response({"eval_set_ids": ids})
    return json_response(ids)


async def create_set(request: Request) -> Response:
    scope = await eval_scope(request)
    body = await json_body(request)  # the path form takes none, but reads one within bounds
    eval_set_id = request.path_params.get("eval_set_id")
    if eval_set_id is None:
        eval_set_id = parse_body(CreateEvalSetBody, body).eval_set.eval_set_id
    eval_set_id = checked(eval_set_id, "eval_set_id")
    await scope.refuse_shipped(eval_set_id)
    eval_set = EvalSet(eval_set_id=eval_set_id, creation_timestamp=time.time())
    async with scope.writing():
        created = await asyncio.to_thread(scope.own.create, eval_set)
    if not created:
        raise HTTPException(409, f"eval set {eval_set_id!r} already exists")
    return json_response(json.loads(eval_set.to_json()))


async def add_session(request: Request) -> Response:
    scope = await eval_scope(request)
    eval_set_id = await scope.writable(request.path_params["eval_set_id"])
    body = parse_body(AddSessionBody, await json_body(request))
    user_path(request, body.user_id)  # another user's session: 404
    session = await find_session(request, scope.app, body.user_id, body.session_id)
    case = EvalCase.from_session(session, eval_id=body.eval_id)
    async with scope.writing():
        try:
            updated = await asyncio.to_thread(
                scope.own.update, eval_set_id, lambda eval_set: eval_set.add_case(case)
            )
        except AdkRxError as exc:  # the set already has a case of that id
            raise HTTPException(409, str(exc)) from exc
    if updated is None:
        raise not_found(f"eval set {eval_set_id!r}")
    warnings = [
        f"the session still waits for an answer to {_asked(call)}: the case replays without "
        "it; answer it in the session, then add the session again"
        for call in waiting_for(session.events)
    ]
    return json_response({"eval_id": case.eval_id, "warnings": warnings})


def _asked(call: types.FunctionCall) -> str:
    if call.name == "adk_request_confirmation":
        original = (call.args or {}).get("originalFunctionCall") or {}
        return f"the approval of {original.get('name', 'a tool call')}"
    if call.name == "adk_request_credential":
        return "a credential request"
    return f"the long-running call {call.name}"


async def list_cases(request: Request) -> Response:
    scope = await eval_scope(request)
    eval_set = await scope.find(request.path_params["eval_set_id"])
    return json_response(sorted(c.eval_id for c in eval_set.eval_cases))


async def one_case(request: Request) -> Response:
    scope = await eval_scope(request)
    eval_set = await scope.find(request.path_params["eval_set_id"])
    case_id = request.path_params["case_id"]
    case = next((c for c in eval_set.eval_cases if c.eval_id == case_id), None)
    if case is None:
        raise not_found(f"eval case {case_id!r}")
    if request.method == "DELETE":
        eval_set_id = await scope.writable(eval_set.eval_set_id)

        def without_case(current: EvalSet) -> EvalSet:
            kept = [c for c in current.eval_cases if c.eval_id != case_id]
            return current.model_copy(update={"eval_cases": kept})

        async with scope.writing():
            await asyncio.to_thread(scope.own.update, eval_set_id, without_case)
        return json_response(None)
    whole = json.loads(eval_set.model_copy(update={"eval_cases": [case]}).to_json())
    return json_response(whole["eval_cases"][0])


async def run_eval(request: Request) -> Response:
    scope = await eval_scope(request)
    eval_set = await scope.find(request.path_params["eval_set_id"])
    body = parse_body(RunEvalBody, await json_body(request))
    criteria = body.criteria()
    wanted = body.case_ids()
    known = {c.eval_id for c in eval_set.eval_cases}
    missing = [eval_id for eval_id in wanted if eval_id not in known]
    if missing:  # a case that is not there, as GET evals/{case} answers
        raise not_found(f"eval case {', '.join(missing[:5])} of set {eval_set.eval_set_id!r}")
    cases = [c for c in eval_set.eval_cases if not wanted or c.eval_id in wanted]
    runner = await runner_for(request, scope.app)
    subset = eval_set.model_copy(update={"eval_cases": cases})
    result = await asyncio.to_thread(evaluate, runner.agent, subset, criteria)
    stored = result.to_dict()
    async with scope.writing():
        await asyncio.to_thread(scope.own.save_result, stored)
    user = next((c.session_input.user_id for c in cases if c.session_input), "eval_user")
    return json_response(
        [
            {"eval_set_file": eval_set.eval_set_id, "user_id": user, **case}
            for case in stored["eval_case_results"]
        ]
    )


async def list_results(request: Request) -> Response:
    scope = await eval_scope(request)
    return json_response(await asyncio.to_thread(scope.own.result_ids))


async def one_result(request: Request) -> Response:
    scope = await eval_scope(request)
    result_id = checked(request.path_params["result_id"], "eval_result_id")
    try:
        found = await asyncio.to_thread(scope.own.load_result, result_id)
    except AdkRxError as exc:  # a broken file on the server's side
        raise HTTPException(500, str(exc)) from exc
    if found is None:
        raise not_found(f"eval result {result_id!r}")
    return json_response(found)


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
