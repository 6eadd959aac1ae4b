"""A span tree as text lines, for ``adk-rx run --trace``::

invocation  12.31 ms
└─ invoke_agent root  11.90 ms
   ├─ call_llm  3.10 ms  model=gemini-2.0-flash in=12 out=3
   └─ execute_tool lookup  0.80 ms  ERROR RuntimeError: disk on fire
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from adk_rx.telemetry import attributes as attr

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = ["span_tree_lines"]


def _details(span: ReadableSpan) -> str:
    attributes = span.attributes or {}
    parts: list[str] = []
    model = attributes.get(attr.REQUEST_MODEL)
    if model:
        parts.append(f"model={model}")
    for key, label in ((attr.INPUT_TOKENS, "in"), (attr.OUTPUT_TOKENS, "out")):
        if key in attributes:
            parts.append(f"{label}={attributes[key]}")
    code = attributes.get(attr.ERROR_CODE)
    if code:
        parts.append(str(code))
    if span.status.status_code.name == "ERROR":
        parts.append(f"ERROR {span.status.description or ''}".rstrip())
    return "  ".join(parts)


def span_tree_lines(spans: Sequence[ReadableSpan]) -> list[str]:
    """One line per span, children indented under their parent, in start order."""
    ids = {s.context.span_id for s in spans if s.context is not None}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in ids else None, []).append(span)
    lines: list[str] = []

    def walk(span: ReadableSpan, prefix: str, branch: str) -> None:
        ms = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
        details = _details(span)
        lines.append(
            f"{prefix}{branch}{span.name}  {ms:.2f} ms" + (f"  {details}" if details else "")
        )
        below = children.get(span.context.span_id if span.context else None, [])
        inner = prefix + ("" if not branch else ("   " if branch == "└─ " else "│  "))
        for i, child in enumerate(below):
            walk(child, inner, "└─ " if i == len(below) - 1 else "├─ ")

    for root in children.get(None, []):
        walk(root, "", "")
    return lines
