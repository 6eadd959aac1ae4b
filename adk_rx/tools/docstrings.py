"""Google-style docstrings read for a tool: its description and its parameters' descriptions.

A :class:`~adk_rx.tools.function.FunctionTool` describes itself to the model with its
function's docstring, less the sections a model has no use for; the ``Args:`` entries become
the descriptions of the parameters in its schema.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring"]


# Google-style sections left out of a tool's description; "Args:" ones also feed the schema.
_ARGS_SECTIONS = frozenset({"args", "arguments", "parameters", "params", "keyword args"})
_HIDDEN_SECTIONS = _ARGS_SECTIONS | {"returns", "return", "yields", "yield", "raises"}
_SECTION = re.compile(r"^(\s*)([A-Za-z][A-Za-z ]*):\s*$")
_ARG = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Splits a Google-style docstring into (description, {parameter: description}).

    The description is the docstring without its ``Args:``, ``Returns:``, ``Yields:`` and
    ``Raises:`` sections; other sections (``Example:``, ``Note:``) stay in it.
    """
    kept: list[str] = []
    params: dict[str, str] = {}
    lines = inspect.cleandoc(doc).splitlines()
    i = 0
    while i < len(lines):
        header = _SECTION.match(lines[i])
        if header is None or header.group(2).strip().lower() not in _HIDDEN_SECTIONS:
            kept.append(lines[i])
            i += 1
            continue
        indent, is_args = len(header.group(1)), header.group(2).strip().lower() in _ARGS_SECTIONS
        i += 1
        current: str | None = None
        entry_indent: int | None = None
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
            line = lines[i]
            i += 1
            if not is_args or not line.strip():
                continue
            entry_indent = _indent(line) if entry_indent is None else entry_indent
            match = _ARG.match(line.strip()) if _indent(line) <= entry_indent else None
            if match is not None:
                current = str(match.group(1))
                params[current] = match.group(2).strip()
            elif current is not None:  # a continuation line of the current entry
                params[current] = f"{params[current]} {line.strip()}".strip()
    description = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return description, params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
