"""An app for the dev page's code test: Gemini's code execution, scripted offline."""

from google.genai import types

from adk_rx import LlmAgent, LlmResponse
from adk_rx.code_executors import BuiltInCodeExecutor
from adk_rx.testing import ScriptedLlm

_parts = [
    types.Part(text="Let me count."),
    types.Part.from_executable_code(code="print(len('banana'))", language=types.Language.PYTHON),
    types.Part.from_code_execution_result(outcome=types.Outcome.OUTCOME_OK, output="6\n"),
    types.Part(text="banana has 6 letters."),
]
root_agent = LlmAgent(
    name="counter",
    model=ScriptedLlm(
        [LlmResponse(content=types.Content(role="model", parts=_parts))] * 4,
        model="gemini-2.5-flash",
    ),
    code_executor=BuiltInCodeExecutor(),
)
