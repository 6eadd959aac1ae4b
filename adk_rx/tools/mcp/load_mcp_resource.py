"""``load_mcp_resource``: the model reads an MCP server's resources (google-adk's tool).

With ``McpToolset(use_mcp_resources=True)`` each request lists the server's resources in the
instructions and declares ``load_mcp_resource(resource_names=[...])``; a call answers with the
contents of the named resources (by name or URI): text as it is, binary as base64. Bounded:
at most :data:`MAX_NAMES` names a call, :data:`MAX_CHARS` characters of each resource.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from adk_rx.rx import from_async
from adk_rx.tools.base import BaseTool

if TYPE_CHECKING:
    from adk_rx.context import ToolContext
    from adk_rx.models.llm_request import LlmRequest
    from adk_rx.tools.mcp.toolset import McpToolset

__all__ = ["MAX_CHARS", "MAX_NAMES", "LoadMcpResourceTool"]

MAX_NAMES = 16
MAX_CHARS = 100_000
_log = logging.getLogger(__name__)

_SCHEMA = {
    "type": "object",
    "properties": {"resource_names": {"type": "array", "items": {"type": "string"}}},
}


class LoadMcpResourceTool(BaseTool):
    """Reads resources of its toolset's server for the model.

    Args:
        toolset: the toolset whose server has the resources.
    """

    def __init__(self, toolset: McpToolset) -> None:
        super().__init__(
            name="load_mcp_resource",
            description="Loads resources from the MCP server.\n\n"
            "NOTE: Call when you need access to resources.",
            parameters=_SCHEMA,
        )
        self.toolset = toolset

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Emits ``{"resources": [{name, uri, mime_type, text | blob}, ...]}``."""
        names = args.get("resource_names") or []
        return from_async(lambda: self._load(names, tool_context))

    async def _load(self, names: Any, tool_context: ToolContext) -> dict[str, Any]:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return {"error": "resource_names must be a list of strings"}
        if len(names) > MAX_NAMES:
            return {"error": f"at most {MAX_NAMES} resources a call"}
        listed = await self.toolset.list_resources(tool_context)
        by_name = {str(r.name): str(r.uri) for r in listed}
        known = set(by_name.values())
        loaded: list[dict[str, Any]] = []
        for name in names:
            uri = by_name.get(name) or (name if name in known else None)
            if uri is None:
                loaded.append({"name": name, "error": "no such resource"})
                continue
            for content in await self.toolset.read_resource(uri, tool_context):
                loaded.append(_content(name, uri, content))
        return {"resources": loaded}

    def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> Observable[None] | None:
        """Declares the tool and lists the server's resources in the instructions."""
        super().process_llm_request(tool_context=tool_context, llm_request=llm_request)

        async def list_them() -> None:
            try:
                listed = await self.toolset.list_resources(tool_context)
            except Exception as exc:  # the tools still work; the model just sees no list
                _log.warning("listing the MCP server's resources failed: %s", exc)
                return
            names = [str(r.name) for r in listed]
            if names:
                llm_request.append_instructions(
                    [
                        f"You have a list of MCP resources:\n{json.dumps(names)}\n\n"
                        "When the user asks questions about any of the resources, call the "
                        "`load_mcp_resource` function to load the resource first."
                    ]
                )

        return from_async(list_them)


def _content(name: str, uri: str, content: Any) -> dict[str, Any]:
    mime_type = getattr(content, "mime_type", None) or getattr(content, "mimeType", None)
    out: dict[str, Any] = {"name": name, "uri": uri, "mime_type": mime_type}
    text = getattr(content, "text", None)
    blob = getattr(content, "blob", None)
    if text is not None:
        out["text"] = text[:MAX_CHARS]
        if len(text) > MAX_CHARS:
            out["truncated"] = True
    elif blob is not None:
        try:
            size = len(base64.b64decode(blob, validate=True))
        except ValueError:
            return {**out, "error": "the server sent undecodable binary content"}
        if len(blob) > MAX_CHARS:
            return {**out, "size": size, "error": "binary content too large to show"}
        out["blob"] = blob
        out["size"] = size
    return out
