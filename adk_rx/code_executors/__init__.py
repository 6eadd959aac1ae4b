"""Code execution: the model writes Python, an executor runs it, the output goes back.

``LlmAgent(code_executor=...)`` takes one of:

* :class:`BuiltInCodeExecutor`: the model runs the code itself (Gemini's code execution tool).
* :class:`UnsafeLocalCodeExecutor`: a child of this interpreter, unconfined, with a timeout.
* :class:`SandboxedCodeExecutor`: a child with resource limits, a private temporary directory,
  a scrubbed environment and no network.

How one run goes (the agent's side is :mod:`adk_rx.flows.code_execution`)::

    model answer ─ first code block ─> execute_code(ctx, CodeExecutionInput)   cold Single
                                         │ session artifacts -> files in its directory
                                         │ child interpreter, own process group
                                         │ timeout or disposal: the group is SIGKILLed
                                         v
    CodeExecutionResult ─> files written -> artifacts; output -> code_execution_result event
                                         -> the model is called again

With ``stateful=True`` a session's runs share one interpreter (:mod:`.kernel`).
An executor is a one-method seam, :meth:`BaseCodeExecutor.execute_code`, returning a cold
Observable; a failing program is a result with ``stderr``, never an error.
"""

from adk_rx.code_executors.base import BaseCodeExecutor
from adk_rx.code_executors.built_in import BuiltInCodeExecutor
from adk_rx.code_executors.local import UnsafeLocalCodeExecutor
from adk_rx.code_executors.sandboxed import SandboxedCodeExecutor
from adk_rx.code_executors.values import CodeExecutionInput, CodeExecutionResult, File

__all__ = [
    "BaseCodeExecutor",
    "BuiltInCodeExecutor",
    "CodeExecutionInput",
    "CodeExecutionResult",
    "File",
    "SandboxedCodeExecutor",
    "UnsafeLocalCodeExecutor",
]
