"""Every google-adk route that the core modules (sessions, runs, invocations) do not serve.

Listed before the core routes: a path served by both is google-adk's shape here.
"""

from __future__ import annotations

from ..api import openapi
from . import (
    adk_routes_artifacts,
    adk_routes_dev,
    adk_routes_service,
    adk_routes_sessions,
    eval_routes,
)

__all__ = ["routes"]

routes = [
    *adk_routes_service.routes,
    *adk_routes_sessions.routes,
    *adk_routes_artifacts.routes,
    *adk_routes_dev.routes,
    *eval_routes.routes,
    *openapi.routes,
]
