"""The code-executor seam: run one program, as a cold Observable of its result."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from reactivex import Observable

from adk_rx.code_executors.values import CodeExecutionInput, CodeExecutionResult
from adk_rx.errors import ConfigurationError

if TYPE_CHECKING:
    from adk_rx.context import InvocationContext
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["DEFAULT_CODE_BLOCK_DELIMITERS", "DEFAULT_RESULT_DELIMITERS", "BaseCodeExecutor"]

DEFAULT_CODE_BLOCK_DELIMITERS: tuple[tuple[str, str], ...] = (
    ("```tool_code\n", "\n```"),
    ("```python\n", "\n```"),
)
"""google-adk's code fences: what opens and closes a code block in a model's answer."""

DEFAULT_RESULT_DELIMITERS: tuple[str, str] = ("```tool_output\n", "\n```")
"""google-adk's fence around a run's output sent back to the model as text."""


class BaseCodeExecutor(ABC):
    """Runs the code blocks an ``LlmAgent(code_executor=...)``'s model writes.

    The agent's loop (:mod:`adk_rx.flows.code_execution`, google-adk 2.13's) finds the first
    code block in each answer, runs it with :meth:`execute_code`, and sends the output back to
    the model as a ``code_execution_result``, until the model answers without code or
    ``error_retry_attempts`` runs in a row failed.

    Args:
        stateful: runs of one session share their interpreter (only where the executor
            supports it).
        error_retry_attempts: failed runs in a row, within one invocation, after which the
            model's code is no longer run (its answer then stands as it is).
        code_block_delimiters: the (opening, closing) fences that enclose a code block.
        execution_result_delimiters: the fence around a run's output sent back as text.
    """

    def __init__(
        self,
        *,
        stateful: bool = False,
        error_retry_attempts: int = 2,
        code_block_delimiters: Sequence[tuple[str, str]] = DEFAULT_CODE_BLOCK_DELIMITERS,
        execution_result_delimiters: tuple[str, str] = DEFAULT_RESULT_DELIMITERS,
    ) -> None:
        if error_retry_attempts < 0:
            raise ConfigurationError(
                f"error_retry_attempts must be >= 0, got {error_retry_attempts}"
            )
        if any(not lead or not trail for lead, trail in code_block_delimiters):
            raise ConfigurationError("a code block delimiter needs an opening and a closing fence")
        self.stateful = stateful
        self.error_retry_attempts = error_retry_attempts
        self.code_block_delimiters = tuple(code_block_delimiters)
        self.execution_result_delimiters = execution_result_delimiters

    @abstractmethod
    def execute_code(
        self, ctx: InvocationContext, code_input: CodeExecutionInput
    ) -> Observable[CodeExecutionResult]:
        """A cold Single of the result of running ``code_input``.

        Nothing runs before the subscription; disposing it stops the program (an executor
        that runs a process kills it). A program that fails is a result with ``stderr``, not
        an error: errors are for an executor that cannot run at all.
        """

    def close(self) -> None:  # noqa: B027 (a no-op by default, not abstract)
        """Ends what the executor keeps between runs (a stateful one's interpreters)."""

    def process_llm_request(self, llm_request: LlmRequest) -> None:
        """Adjusts each request of the agent (the built-in executor declares its tool)."""
        del llm_request
