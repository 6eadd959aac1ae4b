"""Finding and importing the agents a user wrote: an agent target, or an agents folder.

The command line (``adk-rx run``, ``eval``, ``api-server``), the server and evaluation load
agents the same way. One load, followed through the modules of this package:

1. ``loader.py``: :func:`~adk_rx.loading.loader.load_agent` (or ``load_target_app``) reads the
   target as a folder (its ``agent.py`` or ``__init__.py``, imported as a package named after
   the folder so that relative imports work), a ``.py`` file, or a module path
   (``pkg.mod:attr``). For an agents folder, :func:`~adk_rx.loading.loader.discover_apps`
   only lists the sub-folders and :func:`~adk_rx.loading.loader.load_app` imports one app on
   first use and keeps it, named after its folder.
2. ``loader.py`` again: the module's ``root_agent`` or ``app`` is checked to be an agent (or
   an :class:`~adk_rx.apps.App`); anything else, or an import that raised, is an
   :class:`~adk_rx.errors.AgentLoadError` whose message names the file and what to change,
   the user's exception chained as its cause (``import_traceback`` shows the user's own
   frames).
3. ``extras.py``: when the import failed on a module that an extra of ``adk_rx`` installs,
   the message ends with the line to run (``pip install 'adk_rx[mcp]'``), read from the
   package's own metadata.
"""

from adk_rx.loading.loader import (
    AgentLoadError,
    discover_apps,
    load_agent,
    load_app,
    load_target_app,
)

__all__ = ["AgentLoadError", "discover_apps", "load_agent", "load_app", "load_target_app"]
