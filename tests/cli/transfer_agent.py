"""A root that hands every conversation to ``helper``, whose model streams slowly or echoes.

Copied into a temporary agents folder by the CLI tests (see slow_agent.py for the words).
"""

from google.genai import types

from adk_rx import LlmAgent, LlmResponse
from adk_rx.testing import ScriptedLlm
from tests.cli.slow_agent import SlowLlm


def _transfer(_request):
    call = types.FunctionCall(name="transfer_to_agent", args={"agent_name": "helper"})
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


class HelperLlm(SlowLlm):
    """SlowLlm answering the user's latest words (not the transfer's "For context:" note)."""

    def generate_content(self, llm_request, stream=False):
        said = [
            c
            for c in llm_request.contents
            if c.role == "user"
            and c.parts
            and c.parts[0].text
            and not c.parts[0].text.startswith("For context:")
        ]
        llm_request.contents = said[-1:]  # each call gets a request of its own
        return super().generate_content(llm_request, stream)


helper = LlmAgent(name="helper", model=HelperLlm(model="slow"), instruction="Echo.")
root_agent = LlmAgent(
    name="front_desk",
    model=ScriptedLlm([_transfer] * 100),
    instruction="Hand over to helper.",
    sub_agents=[helper],
)
