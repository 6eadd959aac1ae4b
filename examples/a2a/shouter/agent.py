"""The remote half of the A2A example: an agent that shouts back what it is told, served over
A2A by ``adk-rx api-server examples/a2a --a2a`` (see ``examples/a2a/desk/agent.py``).

Its model is a few lines of Python, so the example runs offline.
"""

from __future__ import annotations

import reactivex as rx
from reactivex import Observable

from adk_rx import BaseLlm, LlmAgent, LlmRequest, LlmResponse


class Shout(BaseLlm):
    """Answers the user's last words in capitals."""

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        said = ""
        for content in llm_request.contents:
            if content.role == "user":
                said = " ".join(p.text for p in content.parts or [] if p.text)
        return rx.just(LlmResponse.text(f"{said.upper()}!"))


root_agent = LlmAgent(
    name="shouter",
    description="Shouts back whatever it is told.",
    model=Shout(model="shout"),
    instruction="Shout.",
)
