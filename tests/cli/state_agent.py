"""An agent that shows its state: it answers with its instruction, filled from the state.

Copied into a temporary agents folder by the ``adk-rx run`` flag tests. It logs one INFO
line when imported (for ``--log-level``) and counts turns in the state (``turns``).
"""

import logging

import reactivex as rx

from adk_rx import BaseLlm, LlmAgent, LlmResponse

logging.getLogger("state_agent").info("state_agent imported")


class InstructionEcho(BaseLlm):
    def generate_content(self, llm_request, stream=False):
        text = (llm_request.contents[-1].parts or [])[0].text or ""
        return rx.just(LlmResponse.text(f"{text} -> {llm_request.system_instruction_text()}"))


def count_turn(callback_context):
    callback_context.state["turns"] = int(callback_context.state.get("turns") or 0) + 1


root_agent = LlmAgent(
    name="stateful",
    model=InstructionEcho(model="echo"),
    instruction="name={name?} turns={turns?}",
    before_agent_callback=count_turn,
)
