"""McpTool: one tool of an MCP server, called through its toolset's session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from adk_rx.rx import Bulkhead, from_async
from adk_rx.tools.base import BaseTool
from adk_rx.tools.function import REJECTED, REQUIRES_CONFIRMATION

if TYPE_CHECKING:
    from adk_rx.context import ToolContext
    from adk_rx.tools.mcp.call_options import McpCallOptions
    from adk_rx.tools.mcp.connection import McpConnection

PENDING_AUTH = {"pending": True, "message": "Needs your authorization to access your data."}
"""What the model sees while the user signs in (google-adk's words)."""

__all__ = ["PENDING_AUTH", "McpTool", "describe_error", "result_dict"]


class McpTool(BaseTool):
    """A tool an MCP server lists; its schema is the server's ``inputSchema``.

    The call runs as a task on the runtime loop; disposing the run cancels it and the server
    gets a cancellation notification. An ``isError`` result, a timeout or a server that
    went away answer ``{"error": ...}`` to the model. Progress notifications of the server
    become progress reports (partial events with ``custom_metadata["tool_progress"]``).

    With the toolset's options a call first waits for the user's confirmation when
    ``require_confirmation`` says so (``adk_request_confirmation``), then gets a credential
    (``auth_scheme``; a user's sign-in pauses the turn), then goes out with the headers of the
    credential and of ``header_provider``, on the session for those headers.

    Args:
        name: the tool's name on the server.
        description: the server's description.
        input_schema: the server's JSON schema of the arguments.
        connection: the session of the toolset.
        options: the toolset's confirmation, auth and header options (None: none).
        timeout: seconds one call may take (the toolset's ``tool_timeout``).
        bulkhead: the limit of concurrent calls of this tool (the toolset keeps one per tool
            name, so a tool listed again keeps its line).
    """

    reports_progress = True

    def __init__(
        self,
        *,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        connection: McpConnection,
        options: McpCallOptions | None = None,
        timeout: float | None = None,
        bulkhead: Bulkhead | None = None,
    ) -> None:
        super().__init__(
            name=name, description=description, parameters=input_schema, timeout=timeout
        )
        if bulkhead is not None:
            self.bulkhead = bulkhead
            self.max_concurrency = bulkhead.max_concurrent
        self.input_schema = dict(input_schema)
        self.connection = connection
        self.options = options

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Calls the tool on the server; emits the response dict."""
        arguments = dict(args)
        return from_async(lambda: self._call(arguments, tool_context))

    async def _call(self, arguments: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            report: dict[str, Any] = {"progress": done}
            if total is not None:
                report["total"] = total
            if message:
                report["message"] = message
            tool_context.report_progress(report)

        connection = self.connection
        options = self.options
        if options is not None:
            if options.needs_confirmation(arguments):
                confirmation = tool_context.tool_confirmation
                if confirmation is None:
                    tool_context.request_confirmation(
                        hint=f"Please approve or reject the call of {self.name} with arguments "
                        f"{arguments!r}."
                    )
                    return {"error": REQUIRES_CONFIRMATION}
                if not confirmation.confirmed:
                    return {"error": REJECTED}
            headers = await options.headers(tool_context, tool_context)
            if headers is None:
                return dict(PENDING_AUTH)
            connection = options.connection(headers)
        timeout = connection.params.timeout

        async def call(session: Any) -> Any:
            return await session.call_tool(
                self.name, arguments, read_timeout_seconds=timeout, progress_callback=progress
            )

        try:
            result = await connection.run(call)
        except Exception as exc:  # a crashed or silent server: the model gets to know
            return {"error": f"MCP tool {self.name!r} failed: {describe_error(exc)}"}
        return result_dict(result)


def describe_error(exc: BaseException) -> str:
    """``Type: message`` of the first error inside ``exc`` (an exception group's first)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def result_dict(result: Any) -> dict[str, Any]:
    """An MCP ``CallToolResult`` as the dict the model sees.

    ``isError`` -> ``{"error": text}``; structured content -> that object; text-only content
    -> ``{"result": text}``; other content -> ``{"content": [...]}`` (JSON of each block).
    """
    blocks = list(getattr(result, "content", None) or [])
    texts = [b.text for b in blocks if getattr(b, "type", None) == "text"]
    if getattr(result, "is_error", False):
        return {"error": "\n".join(texts) or "the MCP tool reported an error"}
    structured = getattr(result, "structured_content", None)
    if isinstance(structured, dict):
        return structured
    if blocks and len(texts) == len(blocks):
        return {"result": "\n".join(texts)}
    return {"content": [b.model_dump(mode="json", exclude_none=True) for b in blocks]}
