"""``load_artifacts(artifact_names)``: lets the model read the session's artifacts.

Two halves:

* while the request is built, the tool lists the session's artifacts in the system
  instruction; when the request's last content answers a ``load_artifacts`` call, the
  named artifacts are appended to the request as one user content::

      ["Artifact a.txt is:", <a.txt as text>, "Artifact b.png is:", <b.png inline>]

* the call itself only echoes ``{"artifact_names": [...]}``; the loading happens on the
  next request, so the contents never enter the session history.

Text-like MIME types (``text/*``, JSON, XML, CSV, YAML) are sent as text; images, audio,
video and PDF as inline data; anything else as a placeholder naming type and size.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.rx._engine import sync
from adk_rx.tools.base import BaseTool

if TYPE_CHECKING:
    from adk_rx.context import ToolContext
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["LoadArtifactsTool", "artifact_as_part", "load_artifacts"]

_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/csv",
        "application/x-yaml",
        "application/yaml",
        "application/javascript",
    }
)
_INLINE_PREFIXES = ("image/", "audio/", "video/")


def _is_text(mime_type: str) -> bool:
    return (
        mime_type.startswith("text/")
        or mime_type in _TEXT_TYPES
        or mime_type.endswith(("+json", "+xml"))
    )


def artifact_as_part(name: str, artifact: types.Part) -> types.Part:
    """The artifact as a part a model can take: text, inline data, or a placeholder."""
    blob = artifact.inline_data
    if blob is None:
        return artifact  # text or a file reference: usable as it is
    mime_type = (blob.mime_type or "application/octet-stream").split(";")[0].strip().lower()
    data = blob.data or b""
    if _is_text(mime_type):
        return types.Part(text=data.decode("utf-8", errors="replace"))
    if mime_type.startswith(_INLINE_PREFIXES) or mime_type == "application/pdf":
        return artifact
    return types.Part(
        text=f"[Binary artifact: {name}, type: {mime_type}, size: {len(data) / 1024:.1f} KB. "
        "Its content cannot be shown inline.]"
    )


def _requested_names(request: LlmRequest, tool_name: str) -> list[str]:
    """The names in a ``load_artifacts`` response that ends the request's contents."""
    if not request.contents:
        return []
    names: list[str] = []
    for part in request.contents[-1].parts or []:
        response = part.function_response
        if response is None or response.name != tool_name:
            continue
        listed = (response.response or {}).get("artifact_names")
        if isinstance(listed, list):
            names += [n for n in listed if isinstance(n, str) and n not in names]
    return names


class LoadArtifactsTool(BaseTool):
    """Loads artifacts into the next model request (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(
            name="load_artifacts",
            description="Loads the artifacts and adds them to the session.",
            parameters={
                "type": "object",
                "properties": {
                    "artifact_names": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the names of the artifacts to load",
                    }
                },
                "required": ["artifact_names"],
            },
        )

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Echoes the names; the artifacts are attached to the next request."""
        names = args.get("artifact_names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return rx.throw(ValueError("load_artifacts needs 'artifact_names': a list of strings"))
        return sync.just({"artifact_names": list(names)})

    def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> Observable[None] | None:
        """Declares the tool, lists the artifacts, attaches the ones just asked for."""
        super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        if tool_context.invocation_context.services.artifact_service is None:
            return None

        def listed(names: list[str]) -> Observable[None]:
            if not names:
                return sync.empty()
            llm_request.append_instructions(
                [
                    f"You have a list of artifacts:\n  {json.dumps(names)}\n\nWhen the user asks "
                    "questions about any of the artifacts, you should call the `load_artifacts` "
                    "function to load the artifact. Do not generate any text other than the "
                    "function call."
                ]
            )
            return self._attach(tool_context, llm_request)

        return tool_context.list_artifacts().pipe(ops.flat_map(listed))

    def _attach(self, tool_context: ToolContext, llm_request: LlmRequest) -> Observable[None]:
        names = _requested_names(llm_request, self.name)
        if not names:
            return sync.empty()

        def load(name: str) -> Observable[list[types.Part]]:
            return tool_context.load_artifact(name).pipe(
                ops.map(
                    lambda part: [
                        types.Part(text=f"Artifact {name} is:"),
                        artifact_as_part(name, part),
                    ]
                ),
                ops.default_if_empty([types.Part(text=f"Artifact {name} was not found.")]),
                ops.catch(
                    lambda exc, _: sync.just(
                        [types.Part(text=f"Artifact {name} could not be loaded: {exc}")]
                    )
                ),
            )

        def append(loaded: list[list[types.Part]]) -> Observable[None]:
            parts = [part for pair in loaded for part in pair]
            llm_request.contents.append(types.Content(role="user", parts=parts))
            return sync.empty()

        return rx.concat(*(load(n) for n in names)).pipe(ops.to_list(), ops.flat_map(append))


load_artifacts = LoadArtifactsTool()
"""Lets the model see the session's artifacts by name (their list is in the request)."""
