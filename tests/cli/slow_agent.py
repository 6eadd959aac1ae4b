"""An agent whose model streams slowly, echoes, or fails, decided by the user's words.

Copied into a temporary agents folder by the CLI tests:
* "slow": a stream of partial chunks, one every 20 ms (long enough to be interrupted);
* "fail": the model call raises;
* anything else: ``echo: <text>`` at once.
"""

import time

import reactivex as rx
from google.genai import types

from adk_rx import BaseLlm, LlmAgent, LlmResponse
from adk_rx.rx.bridges import from_blocking_iterable


def _chunk(text):
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]), partial=True
    )


class SlowLlm(BaseLlm):
    def generate_content(self, llm_request, stream=False):
        text = llm_request.contents[-1].parts[0].text or ""
        if "fail" in text:
            return rx.throw(RuntimeError("the model is down"))
        if "slow" in text:

            def chunks():
                for i in range(500):
                    yield _chunk(f"chunk{i} ")
                    time.sleep(0.02)

            return from_blocking_iterable(chunks)
        return rx.just(LlmResponse.text(f"echo: {text}"))


root_agent = LlmAgent(name="slowpoke", model=SlowLlm(model="slow"), instruction="Echo.")
