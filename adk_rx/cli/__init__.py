"""The ``adk-rx`` command: ``run`` (terminal chat), ``api-server`` and ``web``.

:mod:`adk_rx.cli.loader` finds and imports agents (one app per sub-folder of an agents
folder); :mod:`adk_rx.cli.main` parses the command line.
"""

from adk_rx.cli.loader import AgentLoadError, discover_apps, load_agent, load_app

__all__ = ["AgentLoadError", "discover_apps", "load_agent", "load_app"]
