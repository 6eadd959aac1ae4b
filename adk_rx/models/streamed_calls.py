"""Function calls whose arguments Gemini streams in pieces, put back together.

With ``stream_function_call_arguments`` (Vertex AI), a streamed call arrives over several
chunks: the first names the function (``will_continue: true``), the next ones carry
``partial_args`` (a JSON path and a piece of its value; strings come in pieces to append),
and a last one without ``will_continue`` closes it::

    chunks:   {name: f, will_continue}  {partial_args: $.city "Os"}  {partial_args: $.city "lo"}  {}
    assembled:                                                                   f(city="Oslo")

:class:`StreamedCalls` holds the call being assembled and hands back the complete call, as a
plain function-call part (id, name, args, and the thought signature of its first piece), the
only shape the API accepts in the history sent back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from adk_rx.events import new_call_id

__all__ = ["StreamedCalls", "is_fragment"]

_MAX_INDEX = 10_000  # a JSON path index beyond this is refused, not allocated
_PATH_STEP = re.compile(
    r"""\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]|\.?([^.\[\]]+)"""
)


def _path(json_path: str) -> list[str | int]:
    """``$.a.b[0]['c d']`` as ``["a", "b", 0, "c d"]``."""
    steps: list[str | int] = []
    for match in _PATH_STEP.finditer(json_path.removeprefix("$")):
        index, single, double, name = match.groups()
        if index is not None:
            steps.append(int(index))
        else:
            steps.append(re.sub(r"\\(.)", r"\1", single or double or name or ""))
    return steps


def _set(target: dict[str, Any], steps: list[str | int], value: Any) -> None:
    current: Any = target
    for step, following in zip(steps, [*steps[1:], None], strict=True):
        container: Any = [] if isinstance(following, int) else {}
        if isinstance(step, int):
            if not isinstance(current, list) or step > _MAX_INDEX:
                return
            current.extend([None] * (step + 1 - len(current)))
            if following is None:
                current[step] = value
            elif current[step] is None:
                current[step] = container
            current = current[step]
        else:
            if not isinstance(current, dict):
                return
            if following is None:
                current[step] = value
            else:
                current = current.setdefault(step, container)


def is_fragment(call: types.FunctionCall, assembling: bool) -> bool:
    """Whether ``call`` is a piece of a streamed call (``assembling``: one is open)."""
    return (
        bool(call.partial_args)
        or call.will_continue is not None
        or (assembling and not call.args and not call.name)
    )


@dataclass
class _Draft:
    name: str | None = None
    call_id: str | None = None
    signature: bytes | None = None
    args: dict[str, Any] = field(default_factory=dict)
    strings: dict[str, list[str]] = field(default_factory=dict)

    def add(self, arg: types.PartialArg) -> None:
        path = arg.json_path
        if not path:
            return
        if arg.string_value is not None:
            self.strings.setdefault(path, []).append(arg.string_value)
            return
        self.strings.pop(path, None)  # a scalar replaces what was streamed for the path
        if arg.number_value is not None:
            _set(self.args, _path(path), arg.number_value)
        elif arg.bool_value is not None:
            _set(self.args, _path(path), arg.bool_value)
        elif arg.null_value is not None:
            _set(self.args, _path(path), None)

    def part(self) -> types.Part:
        for path, pieces in self.strings.items():
            _set(self.args, _path(path), "".join(pieces))
        call = types.FunctionCall(id=self.call_id or new_call_id(), name=self.name, args=self.args)
        return types.Part(function_call=call, thought_signature=self.signature)


class StreamedCalls:
    """The streamed call being assembled in one response stream."""

    def __init__(self) -> None:
        self._draft: _Draft | None = None

    def takes(self, part: types.Part) -> bool:
        """Whether ``part`` is a piece of a streamed call (then :meth:`add` it)."""
        call = part.function_call
        return call is not None and is_fragment(call, self._draft is not None)

    def add(self, part: types.Part) -> list[types.Part]:
        """Takes a piece; returns the calls it completes (a new name also closes the last)."""
        call = part.function_call
        assert call is not None
        done: list[types.Part] = []
        draft = self._draft
        if draft is not None and call.name and draft.name and call.name != draft.name:
            done.append(draft.part())
            draft = None
        if draft is None:
            draft = self._draft = _Draft()
        draft.name = call.name or draft.name
        draft.call_id = draft.call_id or call.id
        draft.signature = draft.signature or part.thought_signature
        for key, value in (call.args or {}).items():
            draft.args[key] = value
        for arg in call.partial_args or []:
            draft.add(arg)
        if not call.will_continue:
            done.append(draft.part())
            self._draft = None
        return done

    def finish(self) -> list[types.Part]:
        """The call still open when the stream ends (the API sent no closing piece)."""
        draft, self._draft = self._draft, None
        return [draft.part()] if draft is not None and draft.name else []
