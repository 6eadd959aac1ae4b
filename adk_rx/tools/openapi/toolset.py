"""OpenAPIToolset: one :class:`RestApiTool` per operation of an OpenAPI 3 document."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from adk_rx.auth.config import AuthConfig
from adk_rx.auth.credential import AuthCredential
from adk_rx.auth.schemes import AuthScheme, parse_scheme
from adk_rx.errors import ConfigurationError
from adk_rx.tools.openapi.rest_api_tool import RestApiTool
from adk_rx.tools.openapi.spec import load_spec, operations
from adk_rx.tools.toolset import BaseToolset, ToolFilter

if TYPE_CHECKING:
    from adk_rx.context import ReadonlyContext

__all__ = ["OpenAPIToolset"]


class OpenAPIToolset(BaseToolset):
    """The operations of an OpenAPI 3 document as tools (google-adk's ``OpenAPIToolset``).

    Args:
        spec_dict: the document, parsed.
        spec_str: the document as text (JSON or YAML, per ``spec_str_type``).
        spec_str_type: ``"json"`` or ``"yaml"``.
        auth_scheme: the scheme every operation uses (default: each operation's own
            ``security``, looked up in ``components.securitySchemes``).
        auth_credential: the configured credential (an API key, a bearer token, an OAuth2
            client id and secret).
        tool_filter: the names of the tools to keep, or a predicate.
        tool_name_prefix: a prefix for every tool name.
        timeout: seconds per request.
        max_response_bytes: a longer response is an error for the model.
        header_provider: extra headers per call, from the call's context.
        transport: the httpx transport every request goes through.

    Example::

        toolset = OpenAPIToolset(spec_str=open("notes.yaml").read(), spec_str_type="yaml",
                                 auth_credential=AuthCredential(...))
        agent = LlmAgent(name="notes", model=..., tools=[toolset])
    """

    def __init__(
        self,
        *,
        spec_dict: Mapping[str, Any] | None = None,
        spec_str: str | None = None,
        spec_str_type: str = "json",
        auth_scheme: AuthScheme | Mapping[str, Any] | None = None,
        auth_credential: AuthCredential | None = None,
        tool_filter: ToolFilter | None = None,
        tool_name_prefix: str | None = None,
        timeout: float = 30.0,
        max_response_bytes: int = 4 * 1024 * 1024,
        header_provider: Callable[[ReadonlyContext], Mapping[str, str]] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        if (spec_dict is None) == (spec_str is None):
            raise ConfigurationError("pass exactly one of spec_dict= and spec_str=")
        document = (
            dict(spec_dict) if spec_dict is not None else load_spec(spec_str or "", spec_str_type)
        )
        shared = parse_scheme(auth_scheme) if auth_scheme is not None else None
        self._tools: list[RestApiTool] = []
        for operation in operations(document):
            scheme = shared
            if scheme is None and operation.security_scheme is not None:
                scheme = parse_scheme(operation.security_scheme)
            config = (
                AuthConfig(auth_scheme=scheme, raw_auth_credential=auth_credential)
                if scheme is not None
                else None
            )
            self._tools.append(
                RestApiTool(
                    operation,
                    auth_config=config,
                    timeout=timeout,
                    max_response_bytes=max_response_bytes,
                    header_provider=header_provider,
                    transport=transport,
                )
            )

    def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[RestApiTool]:
        """Every operation's tool (the filter is applied by the flow)."""
        return list(self._tools)

    def get_tool(self, name: str) -> RestApiTool | None:
        """The tool named ``name``, or None."""
        return next((tool for tool in self._tools if tool.name == name), None)
