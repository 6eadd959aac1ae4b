"""google-adk's artifact routes beyond listing and loading the latest version.

Under ``/apps/{app}/users/{user}/sessions/{sid}/artifacts``:

* ``GET {name}/versions/{v}``: one version's Part (``v`` a number or ``latest``; 422 for
  anything else, 404 when there is no such version) - what google-adk's UI loads;
* ``GET {name}/versions/metadata`` and ``GET {name}/versions/{v}/metadata``: ArtifactVersion
  records ``{version, canonicalUri, customMetadata, createTime?, mimeType?}``;
* ``POST`` with ``{filename, artifact: Part, customMetadata?}``: saves a new version and
  answers its ArtifactVersion;
* ``DELETE {name}``: deletes every version, answers ``null``.

The artifact services keep neither custom metadata nor save times: a save with non-empty
``customMetadata`` answers 400 rather than dropping it, and ``createTime`` is the time of the
session event that recorded the version in its ``artifactDelta`` (left out when no event
did, e.g. for a version saved through this route).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from google.genai import types
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.artifacts.base import USER_PREFIX

from ..edge.validation import check_artifact_name, parse_model
from ..shared import json_response, not_found, server_of
from .session_routes import artifact_call, find_session, ids_of, json_body

__all__ = ["routes"]


async def _ids(request: Request) -> dict[str, str]:
    app_name, user = await ids_of(request)
    if "name" in request.path_params:
        check_artifact_name(request.path_params["name"])
    sid = request.path_params["sid"]
    await find_session(request, app_name, user, sid)
    return {"app_name": app_name, "user_id": user, "session_id": sid}


def _version(raw: str) -> int | None:
    if raw == "latest":
        return None
    try:
        return int(raw)
    except ValueError:
        raise HTTPException(422, "Invalid version ID") from None


async def _load(request: Request, ids: dict[str, str], name: str, version: int | None) -> Any:
    service = server_of(request).runners.artifact_service
    found = await artifact_call(service.load_artifact(**ids, filename=name, version=version))
    return found[0] if found else None


def _canonical_uri(ids: Mapping[str, str], name: str, version: int) -> str:
    owner = f"apps/{quote(ids['app_name'], safe='')}/users/{quote(ids['user_id'], safe='')}"
    if not name.startswith(USER_PREFIX):
        owner += f"/sessions/{quote(ids['session_id'], safe='')}"
    return f"adk-rx://{owner}/artifacts/{quote(name, safe='')}/versions/{version}"


async def _save_times(request: Request, ids: dict[str, str], name: str) -> dict[int, float]:
    """Version -> timestamp of the session event that recorded it."""
    session = await find_session(request, ids["app_name"], ids["user_id"], ids["session_id"])
    times: dict[int, float] = {}
    for event in session.events:
        saved = event.actions.artifact_delta.get(name)
        if isinstance(saved, int):
            times.setdefault(saved, event.timestamp)
    return times


def _record(
    ids: Mapping[str, str], name: str, version: int, part: Any, times: Mapping[int, float]
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "version": version,
        "canonicalUri": _canonical_uri(ids, name, version),
        "customMetadata": {},
    }
    if version in times:
        record["createTime"] = times[version]
    blob = getattr(part, "inline_data", None)
    if blob is not None and blob.mime_type:
        record["mimeType"] = blob.mime_type
    return record


async def _versions(request: Request, ids: dict[str, str], name: str) -> list[int]:
    service = server_of(request).runners.artifact_service
    found = await artifact_call(service.list_versions(**ids, filename=name))
    return found[0] if found else []


async def load_version(request: Request) -> Response:
    ids = await _ids(request)
    name = request.path_params["name"]
    part = await _load(request, ids, name, _version(request.path_params["version"]))
    if part is None:
        raise not_found(f"artifact {name!r}")
    return json_response(part.model_dump(mode="json", by_alias=True, exclude_none=True))


async def version_metadata(request: Request) -> Response:
    ids = await _ids(request)
    name = request.path_params["name"]
    version = _version(request.path_params["version"])
    if version is None:
        known = await _versions(request, ids, name)
        version = known[-1] if known else None
    part = await _load(request, ids, name, version) if version is not None else None
    if part is None or version is None:
        raise not_found(f"version of artifact {name!r}")
    times = await _save_times(request, ids, name)
    return json_response(_record(ids, name, version, part, times))


async def versions_metadata(request: Request) -> Response:
    ids = await _ids(request)
    name = request.path_params["name"]
    times = await _save_times(request, ids, name)
    records = []
    for version in await _versions(request, ids, name):
        part = await _load(request, ids, name, version)
        if part is not None:
            records.append(_record(ids, name, version, part, times))
    return json_response(records)


def _save_body(body: Mapping[str, Any]) -> tuple[str, types.Part]:
    filename = body.get("filename")
    if not isinstance(filename, str) or not filename:
        raise HTTPException(400, "filename is required (a non-empty string)")
    check_artifact_name(filename)
    raw = body.get("artifact")
    if not isinstance(raw, Mapping):
        raise HTTPException(400, "artifact is required (a Part: {text} or {inlineData})")
    part = parse_model(types.Part, raw, "artifact")
    metadata = body.get("custom_metadata", body.get("customMetadata"))
    if metadata:
        raise HTTPException(
            400, "this server's artifact service keeps no custom metadata; send none"
        )
    return filename, part


async def save_artifact(request: Request) -> Response:
    ids = await _ids(request)
    filename, part = _save_body(await json_body(request))
    service = server_of(request).runners.artifact_service
    (version,) = await artifact_call(service.save_artifact(**ids, filename=filename, artifact=part))
    return json_response(_record(ids, filename, version, part, {}))


async def delete_artifact(request: Request) -> Response:
    ids = await _ids(request)
    service = server_of(request).runners.artifact_service
    await artifact_call(service.delete_artifact(**ids, filename=request.path_params["name"]))
    return json_response(None)


_ARTIFACTS = "/apps/{app}/users/{user}/sessions/{sid}/artifacts"
routes = [
    Route(_ARTIFACTS, save_artifact, methods=["POST"]),
    Route(_ARTIFACTS + "/{name}", delete_artifact, methods=["DELETE"]),
    Route(_ARTIFACTS + "/{name}/versions/metadata", versions_metadata, methods=["GET"]),
    Route(_ARTIFACTS + "/{name}/versions/{version}/metadata", version_metadata, methods=["GET"]),
    Route(_ARTIFACTS + "/{name}/versions/{version}", load_version, methods=["GET"]),
]
