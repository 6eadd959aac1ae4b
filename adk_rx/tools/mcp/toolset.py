"""McpToolset: the tools of an MCP server, listed from the server at every model step."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from adk_rx.errors import McpConnectionError
from adk_rx.rx import from_async
from adk_rx.tools.base import BaseTool
from adk_rx.tools.mcp.connection import McpConnection
from adk_rx.tools.mcp.params import ConnectionParams
from adk_rx.tools.mcp.tool import McpTool, describe_error
from adk_rx.tools.toolset import BaseToolset, ToolFilter

if TYPE_CHECKING:
    from adk_rx.context import ReadonlyContext

__all__ = ["McpToolset"]


class McpToolset(BaseToolset):
    """Exposes an MCP server's tools to an agent (``tools=[McpToolset(...)]``).

    One client session per toolset, opened on first use and reused; ``close()`` (called by
    ``Runner.close()``) ends it and stops a stdio server's process. Tools are listed from
    the server at every step, so tools the server adds or removes show up. A server that
    died since the last request is started (or connected to) again; when that fails, the
    model step fails with :class:`~adk_rx.errors.McpConnectionError` naming the server:
    the model is not asked to answer without the tools it was given.

    Args:
        connection_params: :class:`StdioConnectionParams` or
            :class:`StreamableHTTPConnectionParams`.
        tool_filter: the names of the tools to keep, or a predicate.
        tool_name_prefix: when given, each tool is renamed ``{prefix}_{name}``.

    Raises:
        ConfigurationError: the connection parameters are of neither kind.
    """

    def __init__(
        self,
        *,
        connection_params: ConnectionParams,
        tool_filter: ToolFilter | None = None,
        tool_name_prefix: str | None = None,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self.connection_params = connection_params
        self.connection = McpConnection(connection_params)
        self._tools: dict[str, McpTool] = {}

    def get_tools(self, readonly_context: ReadonlyContext | None = None) -> Observable[Any]:
        """A Single of the server's tools (one ``tools/list`` round trip, all pages)."""
        return from_async(self._list)

    async def _list(self) -> list[BaseTool]:
        async def list_all(session: Any) -> list[Any]:
            found: list[Any] = []
            cursor: str | None = None
            while True:
                if cursor is None:
                    page = await session.list_tools()
                else:
                    from mcp.types import PaginatedRequestParams

                    page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
                found.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return found

        timeout = self.connection_params.timeout
        try:
            listed = await self.connection.run(
                lambda session: asyncio.wait_for(list_all(session), timeout), repeatable=True
            )
        except McpConnectionError:
            raise
        except TimeoutError as exc:
            raise McpConnectionError(
                f"the MCP server {self.connection.server} did not list its tools within {timeout} s"
            ) from exc
        except Exception as exc:
            raise McpConnectionError(
                f"the MCP server {self.connection.server} did not list its tools: "
                f"{describe_error(exc)}"
            ) from exc
        return [self._tool(t) for t in listed]

    def _tool(self, listed: Any) -> McpTool:
        schema = dict(listed.input_schema or {"type": "object", "properties": {}})
        description = listed.description or ""
        known = self._tools.get(listed.name)
        if known is None or known.input_schema != schema or known.description != description:
            known = McpTool(
                name=listed.name,
                description=description,
                input_schema=schema,
                connection=self.connection,
            )
            self._tools[listed.name] = known
        return known

    def close(self) -> Any:
        """Ends the session and a stdio server's process (waits for it, off its loop)."""
        return self.connection.close()

    def __repr__(self) -> str:
        return f"McpToolset({self.connection_params!r})"
