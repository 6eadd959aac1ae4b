"""REST APIs as tools: :class:`OpenAPIToolset` reads an OpenAPI 3 document (JSON or YAML) and
makes one :class:`RestApiTool` per operation (google-adk's ``openapi_tool``).

``spec.py`` parses the document (``$ref``s resolved, parameters from path, query, header,
cookie and body, google-adk's naming rules); ``rest_api_tool.py`` calls one operation over
httpx with the toolset's auth (``adk_rx.auth``: an API key, a bearer token, OAuth2 client
credentials or a user's sign-in, which pauses the turn); ``toolset.py`` ties them together.
"""

from adk_rx.tools.openapi.rest_api_tool import RestApiTool
from adk_rx.tools.openapi.spec import ApiParam, Operation
from adk_rx.tools.openapi.toolset import OpenAPIToolset

__all__ = ["ApiParam", "OpenAPIToolset", "Operation", "RestApiTool"]
