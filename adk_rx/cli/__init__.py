"""The ``adk-rx`` command: ``run`` (terminal chat), ``api-server`` and ``web``.

:mod:`adk_rx.loading` (a layer below the command line: evaluation loads agents too) finds
and imports agents (one app per sub-folder of an agents folder); its names are re-exported
here. :mod:`adk_rx.cli.main` parses the command line; :mod:`adk_rx.cli.server` is the server.
"""

from adk_rx.loading.loader import AgentLoadError, discover_apps, load_agent, load_app

__all__ = ["AgentLoadError", "discover_apps", "load_agent", "load_app"]
