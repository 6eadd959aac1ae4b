"""The tool seam: a name, a declaration for the model, and ``run_async``."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from google.genai import types
from reactivex import Observable

from adk_rx.errors import ConfigurationError
from adk_rx.rx.bulkhead import Bulkhead

if TYPE_CHECKING:
    from adk_rx.context import ToolContext
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["BaseTool", "check_tool_name", "tool_result_dict"]

_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")


def check_tool_name(name: str) -> str:
    """Returns ``name`` if a model can call it, else raises ConfigurationError."""
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        raise ConfigurationError(
            f"invalid tool name {name!r}: use a letter or underscore, then letters, digits, "
            "'_', '.' or '-' (at most 64 characters)"
        )
    return name


def tool_result_dict(value: Any) -> dict[str, Any]:
    """A tool's return value as the dict the model sees (non-dicts become ``{"result": v}``)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    return {"result": value}


class BaseTool(ABC):
    """A capability the model can call.

    Args:
        parameters: the JSON schema of the arguments; when given, the tool declares itself.
        timeout: seconds one call may take (waiting for a permit included); then its work
            is cancelled and the model gets an error naming the tool. Wins over
            ``RunConfig.tool_timeout``; None leaves it to the RunConfig.
        max_concurrency: at most this many calls of this tool object run at once in the
            process, across invocations; the others wait, first come first served
            (``bulkhead``). None: no limit.

    Attributes:
        name: the wire name the model calls (an identifier).
        description: what the tool does, shown to the model.
        is_long_running: the call may finish in a later turn (its id goes into
            ``Event.long_running_tool_ids``).
        reports_progress: the tool may call ``tool_context.report_progress`` (each report
            becomes a partial event of the calling agent).
        is_idempotent: running the call twice does no harm, so a resumed invocation runs
            again a call that a crash or a stop left without a response (otherwise the
            call is answered ``{"error": "interrupted"}``).
        timeout: the tool's own deadline per call, in seconds (None: ``RunConfig``'s).
        max_concurrency: the tool's limit of concurrent calls (None: no limit).
        bulkhead: the :class:`~adk_rx.rx.Bulkhead` that enforces ``max_concurrency``.
    """

    reports_progress: bool = False
    # Class defaults, so a subclass that does not call BaseTool.__init__ still has them.
    timeout: float | None = None
    max_concurrency: int | None = None
    bulkhead: Bulkhead | None = None

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        is_long_running: bool = False,
        parameters: Mapping[str, Any] | None = None,
        is_idempotent: bool = False,
        timeout: float | None = None,
        max_concurrency: int | None = None,
    ):
        self.name = check_tool_name(name)
        if timeout is not None and not timeout > 0:
            raise ConfigurationError(f"tool {name!r}: timeout must be > 0 seconds, got {timeout}")
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigurationError(
                f"tool {name!r}: max_concurrency must be >= 1, got {max_concurrency}"
            )
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        # One per tool object: every invocation of the process waits in the same line.
        self.bulkhead = None if max_concurrency is None else Bulkhead(max_concurrency)
        self.description = description
        self.is_long_running = is_long_running
        self.is_idempotent = is_idempotent
        self.custom_metadata: dict[str, Any] = {}
        # Built once: a tool's declaration goes into every request of every step.
        self._declaration = (
            None
            if parameters is None
            else types.FunctionDeclaration(
                name=self.name,
                description=description,
                parameters_json_schema=dict(parameters),
            )
        )

    def declaration(self) -> types.FunctionDeclaration | None:
        """The function declaration sent to the model; None keeps the tool undeclared.

        A tool built with ``parameters=`` (a JSON schema) is declared with it.
        """
        return self._declaration

    @abstractmethod
    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Runs the tool; a cold Observable of at most one result (a dict, or None).

        A tool that has its result at once (it never blocks) emits it while subscribed
        (``adk_rx.rx.single(fn)``, ``rx.just``, ``rx.create`` calling ``on_next`` at once):
        the call is then a plain call on the agent's thread, with no subscription kept.
        """

    def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> Observable[None] | None:
        """Adjusts the request before the model call; by default declares the tool."""
        llm_request.append_tools([self])
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
