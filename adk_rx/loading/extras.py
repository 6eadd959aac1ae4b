"""Which extra of ``adk_rx`` installs a module, read from the package's own metadata.

An agent that imports an optional dependency that is not installed fails to load with a
``ModuleNotFoundError``; :func:`install_hint` turns it into the line to run::

    ModuleNotFoundError: No module named 'mcp'
        -> "it needs the mcp extra: pip install 'adk_rx[mcp]'"

A requirement's distribution name is matched to the missing module with its dashes read as
dots (``opentelemetry-sdk`` installs ``opentelemetry.sdk``, ``google-adk`` ``google.adk``);
of the extras that list it, the smallest one (never ``dev``) is named.
"""

from __future__ import annotations

import functools
import re
from importlib import metadata

__all__ = ["extra_for", "install_hint"]

DISTRIBUTION = "adk_rx"
# 'mcp<3,>=2; extra == "mcp"' -> ("mcp", "mcp")
_REQUIREMENT = re.compile(
    r"""^\s*([A-Za-z0-9][A-Za-z0-9._-]*).*;\s*extra\s*==\s*["']([^"']+)["']"""
)


@functools.cache
def _extras() -> dict[str, list[str]]:
    """extra -> the module names of its requirements (empty when adk_rx is not installed)."""
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:  # run from a source tree: no metadata to read
        return {}
    extras: dict[str, list[str]] = {}
    for requirement in requirements:
        found = _REQUIREMENT.match(requirement)
        if found is not None and found.group(2) != "dev":
            module = found.group(1).lower().replace("-", ".")
            extras.setdefault(found.group(2), []).append(module)
    return extras


def extra_for(module: str) -> str | None:
    """The smallest extra of ``adk_rx`` whose requirements install ``module``, if any."""
    wanted = module.lower()

    def installs(m: str) -> bool:
        if m == wanted or wanted.startswith(m + "."):
            return True
        # A missing namespace on the way (opentelemetry.exporter), never a top-level name:
        # `openai` is not what the bench extra is for.
        return "." in wanted and m.startswith(wanted + ".")

    providing = [
        (len(modules), extra)
        for extra, modules in _extras().items()
        if any(installs(m) for m in modules)
    ]
    return min(providing)[1] if providing else None


def install_hint(error: BaseException) -> str | None:
    """What to install when ``error`` is a missing module an extra of ``adk_rx`` provides."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    extra = extra_for(error.name)
    if extra is None:
        return None
    return f"it needs the {extra} extra: pip install '{DISTRIBUTION}[{extra}]'"
