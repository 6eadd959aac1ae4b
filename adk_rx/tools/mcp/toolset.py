"""McpToolset: the tools of an MCP server, listed from the server at every model step."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from adk_rx.auth.config import AuthConfig
from adk_rx.auth.credential import AuthCredential
from adk_rx.auth.schemes import AuthScheme, parse_scheme
from adk_rx.errors import ConfigurationError, McpConnectionError
from adk_rx.rx import Bulkhead, from_async
from adk_rx.tools.base import BaseTool
from adk_rx.tools.mcp.call_options import (
    Confirmation,
    HeaderProvider,
    McpCallOptions,
    auth_headers,
)
from adk_rx.tools.mcp.load_mcp_resource import LoadMcpResourceTool
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
        connection_params: :class:`StdioConnectionParams`,
            :class:`StreamableHTTPConnectionParams` or :class:`SseConnectionParams`.
        tool_filter: the names of the tools to keep, or a predicate.
        tool_name_prefix: when given, each tool is renamed ``{prefix}_{name}``.
        auth_scheme: how the server authenticates calls (``adk_rx.auth``); with
            ``auth_credential``: a configured API key or bearer token, OAuth2 client
            credentials, or a user's sign-in asked for at the first call.
        auth_credential: the configured credential (or OAuth2 client).
        header_provider: ``(readonly_context) -> headers`` (or an awaitable of them) for each
            call and listing; each distinct set of headers gets a session of its own.
        require_confirmation: every call waits for the user's confirmation, or those for
            which ``require_confirmation(args)`` is true.
        use_mcp_resources: add the ``load_mcp_resource`` tool, which reads the server's
            resources for the model (their names are listed in each request).
        tool_timeout: seconds each call of a tool may take (wins over
            ``RunConfig.tool_timeout``); then the call is cancelled on the server and the
            model gets an error naming the tool.
        max_concurrency: at most this many calls of each tool run at once in the process;
            more wait first come, first served.

    Raises:
        ConfigurationError: the connection parameters are of neither kind.
    """

    def __init__(
        self,
        *,
        connection_params: ConnectionParams,
        tool_filter: ToolFilter | None = None,
        tool_name_prefix: str | None = None,
        auth_scheme: AuthScheme | dict[str, Any] | None = None,
        auth_credential: AuthCredential | None = None,
        header_provider: HeaderProvider | None = None,
        require_confirmation: Confirmation = False,
        use_mcp_resources: bool = False,
        tool_timeout: float | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        if tool_timeout is not None and not tool_timeout > 0:
            raise ConfigurationError(f"tool_timeout must be > 0 seconds, got {tool_timeout}")
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.tool_timeout = tool_timeout
        self.max_concurrency = max_concurrency
        self._bulkheads: dict[str, Bulkhead] = {}
        self.connection_params = connection_params
        auth_config = (
            AuthConfig(auth_scheme=parse_scheme(auth_scheme), raw_auth_credential=auth_credential)
            if auth_scheme is not None
            else None
        )
        self.options = McpCallOptions(
            connection_params,
            auth_config=auth_config,
            header_provider=header_provider,
            require_confirmation=require_confirmation,
        )
        self.connection = self.options.default
        self._tools: dict[str, McpTool] = {}
        self._resource_tool = LoadMcpResourceTool(self) if use_mcp_resources else None

    def get_tools(self, readonly_context: ReadonlyContext | None = None) -> Observable[Any]:
        """A Single of the server's tools (one ``tools/list`` round trip, all pages)."""
        return from_async(lambda: self._list(readonly_context))

    async def _listing_connection(self, readonly_context: ReadonlyContext | None) -> Any:
        """The session a listing goes through: the provider's headers, and a configured
        (not a user's) credential's."""
        headers = await self.options.headers(readonly_context) or {}
        config = self.options.auth_config
        raw = config.raw_auth_credential if config is not None else None
        if config is not None and raw is not None:
            headers.update(auth_headers(config, raw))
        return self.options.connection(headers)

    async def list_resources(self, readonly_context: ReadonlyContext | None = None) -> list[Any]:
        """The server's resources (``resources/list``, all pages)."""
        connection = await self._listing_connection(readonly_context)

        async def list_all(session: Any) -> list[Any]:
            found: list[Any] = []
            cursor: str | None = None
            while True:
                if cursor is None:
                    page = await session.list_resources()
                else:
                    from mcp.types import PaginatedRequestParams

                    page = await session.list_resources(
                        params=PaginatedRequestParams(cursor=cursor)
                    )
                found.extend(page.resources)
                cursor = page.next_cursor
                if not cursor:
                    return found

        timeout = self.connection_params.timeout
        return await connection.run(
            lambda session: asyncio.wait_for(list_all(session), timeout), repeatable=True
        )

    async def read_resource(
        self, uri: str, readonly_context: ReadonlyContext | None = None
    ) -> list[Any]:
        """The contents of the resource at ``uri`` (``resources/read``)."""
        connection = await self._listing_connection(readonly_context)
        timeout = self.connection_params.timeout

        async def read(session: Any) -> list[Any]:
            result = await asyncio.wait_for(session.read_resource(uri), timeout)
            return list(result.contents)

        return await connection.run(read, repeatable=True)

    async def _list(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
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
            connection = await self._listing_connection(readonly_context)
            listed = await connection.run(
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
        tools: list[BaseTool] = [self._tool(t) for t in listed]
        if self._resource_tool is not None:
            tools.append(self._resource_tool)
        return tools

    def _tool(self, listed: Any) -> McpTool:
        schema = dict(listed.input_schema or {"type": "object", "properties": {}})
        description = listed.description or ""
        known = self._tools.get(listed.name)
        if known is None or known.input_schema != schema or known.description != description:
            bulkhead = None
            if self.max_concurrency is not None:
                bulkhead = self._bulkheads.setdefault(listed.name, Bulkhead(self.max_concurrency))
            known = McpTool(
                name=listed.name,
                description=description,
                input_schema=schema,
                connection=self.connection,
                options=self.options,
                timeout=self.tool_timeout,
                bulkhead=bulkhead,
            )
            self._tools[listed.name] = known
        return known

    def close(self) -> Any:
        """Ends the session and a stdio server's process (waits for it, off its loop)."""
        return self.options.close()

    def __repr__(self) -> str:
        return f"McpToolset({self.connection_params!r})"
