"""Instruction templating: ``{key}`` and ``{key?}`` filled from session state.

A placeholder is a state key in braces: ``{name}``, ``{app:theme}``, ``{user:lang}``,
``{temp:draft}``; a trailing ``?`` makes it optional (a missing key becomes ``""``);
``{artifact.notes}`` inserts the text of the latest version of an artifact. Anything in
braces that is not a valid key (JSON, code) is left as written, and ``{{`` / ``}}`` stand
for literal braces. A missing required key raises :class:`InstructionError` naming the key.

An instruction given as a callable ``(ReadonlyContext) -> str`` (or awaitable / Observable
of str) is used as returned, without templating.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.callbacks import lift_result
from adk_rx.context import ReadonlyContext
from adk_rx.errors import InstructionError
from adk_rx.rx._engine import sync

if TYPE_CHECKING:
    from adk_rx.context import InvocationContext

__all__ = ["inject_state", "resolve_instruction"]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_ARTIFACT = "artifact."
_KEY = re.compile(r"^(?:(?:app|user|temp):)?[A-Za-z_][A-Za-z0-9_]*$")


def inject_state(
    template: str,
    state: Mapping[str, Any],
    agent_name: str = "",
    artifacts: Mapping[str, str | None] | None = None,
) -> str:
    """Fills the placeholders of ``template`` from ``state``.

    Args:
        template: the instruction text.
        state: the session state.
        agent_name: named in the error message.
        artifacts: file name -> text (None when missing) for ``{artifact.<name>}``
            placeholders; without it they are left as written.

    Raises:
        InstructionError: a required state key or artifact is missing.
    """
    if "{" not in template and "}" not in template:
        return template
    where = f" of agent {agent_name!r}" if agent_name else ""

    def fill(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "{{":
            return "{"
        if whole == "}}":
            return "}"
        inner = match.group(1).strip()
        optional = inner.endswith("?")
        key = inner[:-1] if optional else inner
        if key.startswith(_ARTIFACT) and artifacts is not None:
            filename = key[len(_ARTIFACT) :]
            found = artifacts.get(filename)
            if found is not None:
                return found
            if optional:
                return ""
            raise InstructionError(
                f"instruction{where} needs artifact {filename!r}, which was not found; save "
                f"it first or write {{{key}?}} to make it optional"
            )
        if not _KEY.match(key):
            return whole
        if key in state:
            value = state[key]
            return "" if value is None else str(value)
        if optional:
            return ""
        raise InstructionError(
            f"instruction{where} needs state key {key!r}, which is not set; set it in the "
            f"session state (e.g. create_session(state=...)) or write {{{key}?}} to make it "
            "optional"
        )

    return _PLACEHOLDER.sub(fill, template)


def _artifact_names(template: str) -> list[str]:
    names = []
    for match in _PLACEHOLDER.finditer(template):
        inner = (match.group(1) or "").strip()
        if inner.startswith(_ARTIFACT):
            names.append(inner.removesuffix("?")[len(_ARTIFACT) :])
    return names


def resolve_instruction(
    instruction: str | Callable[..., Any], ctx: InvocationContext
) -> Observable[str]:
    """Emits the final text of one instruction (templated, or from its provider)."""
    if callable(instruction):

        def provide(_: Any) -> Observable[str]:
            result = instruction(ReadonlyContext(ctx))
            lifted = lift_result(result)
            return (
                sync.just(result or "")
                if lifted is None
                else lifted.pipe(ops.map(lambda text: text or ""), ops.default_if_empty(""))
            )

        return rx.defer(provide)
    names = _artifact_names(instruction)
    if not names:
        return rx.defer(
            lambda _: sync.just(inject_state(instruction, ctx.session.state, ctx.agent.name))
        )
    return _with_artifacts(instruction, names, ctx)


def _with_artifacts(template: str, names: list[str], ctx: InvocationContext) -> Observable[str]:
    service = ctx.services.artifact_service

    def load(filename: str) -> Observable[tuple[str, str | None]]:
        if service is None:
            return sync.just((filename, None))
        return service.load_artifact(
            app_name=ctx.app_name,
            user_id=ctx.user_id,
            session_id=ctx.session.id,
            filename=filename,
        ).pipe(
            ops.map(lambda part: (filename, part.text or "")),
            ops.default_if_empty((filename, None)),
        )

    def fill(pairs: list[tuple[str, str | None]]) -> str:
        return inject_state(template, ctx.session.state, ctx.agent.name, dict(pairs))

    return rx.from_iterable(dict.fromkeys(names)).pipe(
        ops.concat_map(load), ops.to_list(), ops.map(fill)
    )
