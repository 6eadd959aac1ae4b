"""Instruction templating for the step loop: :mod:`adk_rx.instructions` (a seam-level module,
so plugins template instructions too)."""

from adk_rx.instructions import inject_state, resolve_instruction

__all__ = ["inject_state", "resolve_instruction"]
