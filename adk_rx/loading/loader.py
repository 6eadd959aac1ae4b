"""Finding and importing agents for the command line, the server and evaluation.

An *agent target* is one of:

* a folder whose ``agent.py`` (or ``__init__.py``) exposes ``root_agent`` or ``app`` (an
  :class:`~adk_rx.apps.App`); the folder is imported as a package named after it, so
  ``agent.py`` may use relative imports; or a folder with ``root_agent.yaml`` and no
  ``agent.py``, google-adk's Agent Config (see :mod:`adk_rx.loading.agent_config`);
* a ``.py`` file that exposes ``root_agent`` or ``app``;
* a module path, ``pkg.mod`` (its ``app`` or ``root_agent``) or ``pkg.mod:attr``.

An *agents folder* holds one app per sub-folder whose ``agent.py`` exposes ``root_agent`` or
``app`` (or that holds ``root_agent.yaml``); the app is named after the sub-folder (an
``app`` is renamed to it).
:func:`discover_apps` only looks at the files; :func:`load_app` imports an app on first use
and keeps it.

Every failure is an :class:`AgentLoadError` whose message names the file and says what to
change (for a missing optional dependency, the extra to install); an exception raised while
importing the user's module is chained as its cause, and :func:`import_traceback` formats it
from the user's own frames (the command line prints it, the server logs it).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import traceback
from pathlib import Path
from types import ModuleType

from adk_rx.agents.base import BaseAgent
from adk_rx.apps import App
from adk_rx.errors import AgentLoadError, ConfigurationError
from adk_rx.loading.agent_config import CONFIG_FILE, from_config
from adk_rx.loading.extras import install_hint

__all__ = [
    "AgentLoadError",
    "app_name_for",
    "discover_apps",
    "import_traceback",
    "load_agent",
    "load_app",
    "load_target_app",
]

ROOT_AGENT = "root_agent"
APP = "app"
_FILE_PREFIX = "_adk_rx_agent_"


def load_agent(target: str) -> BaseAgent:
    """Imports an agent target and returns its root agent (an ``app``'s root agent).

    Args:
        target: a folder, a ``.py`` file, or a module path (``pkg.mod`` / ``pkg.mod:attr``).

    Raises:
        AgentLoadError: the target does not exist, fails to import, or has no agent.
    """
    found = _load(target)
    return found.root_agent if isinstance(found, App) else found


def load_target_app(target: str) -> App:
    """Imports an agent target and returns it as an App named as :func:`app_name_for` says.

    A target exposing ``app`` keeps its plugins and policies; a bare ``root_agent`` becomes
    an App without them.

    Raises:
        AgentLoadError: the target does not exist, fails to import, or has no agent.
    """
    found = _load(target)
    agent = found.root_agent if isinstance(found, App) else found
    name = app_name_for(target, agent)
    return _named(found, name, target)


def _load(target: str) -> BaseAgent | App:
    path = Path(target)
    if path.is_dir():
        return _folder_agent(path)
    if path.suffix == ".py":
        if not path.is_file():
            raise AgentLoadError(f"{target}: no such file")
        if path.name == "agent.py" and path.resolve().parent.name.isidentifier():
            return _agent_of(_import_folder(path.parent), ROOT_AGENT, path)  # relative imports
        return _agent_of(_import_file(path), ROOT_AGENT, path)
    module_name, _, attr = target.partition(":")
    if not module_name.replace(".", "").replace("_", "").isalnum():
        raise AgentLoadError(
            f"{target!r} is neither a folder, a .py file nor a module path (pkg.mod[:attr])"
        )
    return _agent_of(_import_module(module_name), attr or ROOT_AGENT, module_name)


def _named(found: BaseAgent | App, name: str, where: object) -> App:
    try:
        if isinstance(found, App):
            return found if found.name == name else found.replace(name=name)
        return App(name=name, root_agent=found)
    except ConfigurationError as exc:
        raise AgentLoadError(f"{where}: {exc}") from exc


def app_name_for(target: str, agent: BaseAgent) -> str:
    """The app name sessions are stored under: the folder's name, else the agent's name."""
    path = Path(target)
    if path.is_dir():
        return path.resolve().name
    if path.name == "agent.py" and path.resolve().parent.name.isidentifier():
        return path.resolve().parent.name  # loaded as its folder
    return agent.name


def discover_apps(agents_dir: str | Path) -> dict[str, Path]:
    """The apps of an agents folder: sub-folder name -> sub-folder, sorted by name.

    A sub-folder counts when it holds an ``agent.py`` and its name is a Python identifier;
    nothing is imported.

    Raises:
        AgentLoadError: ``agents_dir`` is not a folder.
    """
    root = Path(agents_dir)
    if not root.is_dir():
        raise AgentLoadError(f"{agents_dir}: not a folder (expected one sub-folder per app)")
    return {
        child.name: child
        for child in sorted(root.iterdir())
        if child.is_dir()
        and child.name.isidentifier()
        and ((child / "agent.py").is_file() or (child / CONFIG_FILE).is_file())
    }


_apps: dict[Path, App] = {}
_apps_lock = threading.Lock()


def load_app(agents_dir: str | Path, name: str) -> App:
    """App ``name`` of ``agents_dir`` (named after its folder), imported on first use.

    Raises:
        AgentLoadError: no such app, or it fails to import, or it has no ``root_agent``.
    """
    apps = discover_apps(agents_dir)
    folder = apps.get(name)
    if folder is None:
        known = ", ".join(apps) or "none"
        raise AgentLoadError(
            f"no app named {name!r} in {agents_dir} (apps: {known}); an app is a sub-folder "
            f"whose agent.py defines {ROOT_AGENT} or {APP}"
        )
    key = folder.resolve()
    with _apps_lock:
        app = _apps.get(key)
        if app is None:
            app = _named(_folder_agent(folder), name, folder)
            _apps[key] = app
    return app


def import_traceback(error: BaseException) -> str:
    """The traceback of an error raised while importing an agent, without the loader's frames.

    Frames of this module and of ``importlib`` are dropped, so the first frame shown is the
    user's ``agent.py`` (``File "…/agent.py", line N``).
    """
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename != __file__ and "importlib" not in frame.filename
    ]
    lines = ["Traceback (most recent call last):\n"]
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(error)
    return "".join(lines)


# -- importing ------------------------------------------------------------------------------
def _folder_agent(folder: Path) -> BaseAgent | App:
    """The agent of a folder: its agent.py (or __init__.py), else its root_agent.yaml."""
    config = folder / CONFIG_FILE
    if (
        (folder / "agent.py").is_file()
        or (folder / "__init__.py").is_file()
        or not config.is_file()
    ):
        return _agent_of(_import_folder(folder), ROOT_AGENT, folder)
    parent = str(folder.resolve().parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)  # so the config's dotted names find the folder's modules
    return from_config(config)


def _agent_of(module: ModuleType, attr: str, where: object) -> BaseAgent | App:
    if attr == ROOT_AGENT and isinstance(getattr(module, APP, None), App):
        return getattr(module, APP)
    subject = _subject(module, where)
    if not hasattr(module, attr):
        raise AgentLoadError(
            f"{subject} defines no {attr!r}; "
            f"assign the root agent to a module-level variable named {attr} "
            f"(or an App to {APP})"
        )
    agent = getattr(module, attr)
    if not isinstance(agent, BaseAgent | App):
        raise AgentLoadError(
            f"{subject}: {attr} is a {type(agent).__name__}, not an agent "
            "(a BaseAgent such as LlmAgent, or an App)"
        )
    return agent


def _subject(module: ModuleType, where: object) -> str:
    """The module as the user knows it: a lone file by its path, never by our private name."""
    if module.__name__.startswith(_FILE_PREFIX):
        return str(where)
    return f"{where}: {module.__name__}"


def _import_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise AgentLoadError(f"no module named {name!r} (is it on sys.path?)") from exc
        raise _import_failed(name, exc) from exc
    except Exception as exc:
        raise _import_failed(name, exc) from exc


def _import_file(path: Path) -> ModuleType:
    """Imports a single .py file under a private module name (its folder goes on sys.path)."""
    path = path.resolve()
    name = f"{_FILE_PREFIX}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AgentLoadError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file can import its neighbours
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise _import_failed(path, exc) from exc
    return module


def _import_folder(folder: Path) -> ModuleType:
    """Imports ``folder`` as a package named after it, then its ``agent`` module if present."""
    folder = folder.resolve()
    name = folder.name
    if not name.isidentifier():
        raise AgentLoadError(
            f"{folder}: the folder name {name!r} is not a Python identifier; rename it "
            "(letters, digits and underscores)"
        )
    has_agent = (folder / "agent.py").is_file()
    if not has_agent and not (folder / "__init__.py").is_file():
        raise AgentLoadError(f"{folder}: no agent.py (it should define {ROOT_AGENT})")
    package = _package(folder)
    if not has_agent:
        return package
    return _import_module_from(f"{name}.agent", folder / "agent.py")


def _package(folder: Path) -> ModuleType:
    name = folder.name
    existing = sys.modules.get(name)
    if existing is not None:
        locations = [Path(p).resolve() for p in getattr(existing, "__path__", [])]
        if folder in locations:
            return existing
        raise AgentLoadError(
            f"{folder}: the folder name {name!r} is already the name of another module "
            f"({getattr(existing, '__file__', None) or locations}); rename the folder"
        )
    init = folder / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(folder)]
        )
    else:  # a namespace-like package: just the search location
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise _import_failed(init, exc) from exc
    return module


def _import_module_from(name: str, path: Path) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise _import_failed(path, exc) from exc


def _import_failed(what: object, error: Exception) -> AgentLoadError:
    """The error for an import that raised; a missing optional dependency names its extra."""
    hint = install_hint(error)
    return AgentLoadError(f"importing {what} failed: {error!r}" + (f"; {hint}" if hint else ""))
