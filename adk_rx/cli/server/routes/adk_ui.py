"""google-adk's own dev UI, served from an installed google-adk package (``--ui google-adk``).

The bundle (an Angular app in ``google/adk/cli/browser``) is served at ``/dev-ui/``, same
origin as the API, with the ``runtime-config.json`` it reads at start-up (``backendUrl`` empty:
the API is this server); ``/`` and ``/dev-ui`` redirect to it. google-adk is found without
being imported (importing it pulls in FastAPI and OpenTelemetry): only its files are used.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from adk_rx.errors import ConfigurationError

from ..shared import json_response

__all__ = ["UIS", "find_bundle", "routes"]

UIS = ("adk-rx", "google-adk")
"""The pages ``adk-rx web`` can serve: its own (the default) or google-adk's dev UI."""

PREFIX = "/dev-ui"


def find_bundle() -> Path:
    """The folder of google-adk's browser bundle.

    Raises:
        ConfigurationError: google-adk is not installed, or its package has no bundle.
    """
    try:
        spec = importlib.util.find_spec("google.adk")
    except ModuleNotFoundError:
        spec = None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        bundle = Path(location) / "cli" / "browser"
        if (bundle / "index.html").is_file():
            return bundle
    raise ConfigurationError(
        "--ui google-adk serves the dev UI of an installed google-adk package: "
        'pip install "adk_rx[compat]" (or google-adk)'
    )


async def _to_ui(_: Request) -> Response:
    return RedirectResponse(f"{PREFIX}/")


async def _runtime_config(_: Request) -> Response:
    # No telemetry: adk_rx sends none, and the UI then loads no analytics.
    return json_response(
        {"backendUrl": "", "telemetry": False}, headers={"Cache-Control": "no-store"}
    )


async def _ui_config(_: Request) -> Response:
    return json_response({"logo_text": None, "logo_image_url": None})


def routes(bundle: Path) -> list[BaseRoute]:
    """The routes serving ``bundle`` at ``/dev-ui/``."""
    return [
        Route("/", _to_ui, methods=["GET"]),
        Route(PREFIX, _to_ui, methods=["GET"]),
        Route(f"{PREFIX}/assets/config/runtime-config.json", _runtime_config, methods=["GET"]),
        Route(f"{PREFIX}/config", _ui_config, methods=["GET"]),
        Mount(PREFIX, StaticFiles(directory=bundle, html=True), name="google-adk-ui"),
    ]
