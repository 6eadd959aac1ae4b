"""PlanReActPlanner: plan, reason and act in tagged text (google-adk's ``PlanReActPlanner``).

The instruction asks the model to write its plan under ``/*PLANNING*/``, its reasoning under
``/*REASONING*/``, tool use under ``/*ACTION*/`` and its answer under ``/*FINAL_ANSWER*/``.
Reading a response, the planner keeps the parts up to the first group of function calls,
splits a text at its last ``/*FINAL_ANSWER*/`` (what precedes becomes a thought) and marks
a text that opens with a planning tag as a thought, tags removed. Works with any model: it
needs no built-in thinking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types

from adk_rx.planners.base import BasePlanner

if TYPE_CHECKING:
    from adk_rx.context import CallbackContext, ReadonlyContext
    from adk_rx.models.llm_request import LlmRequest

__all__ = [
    "ACTION_TAG",
    "FINAL_ANSWER_TAG",
    "PLANNING_TAG",
    "REASONING_TAG",
    "REPLANNING_TAG",
    "PlanReActPlanner",
]

PLANNING_TAG = "/*PLANNING*/"
REPLANNING_TAG = "/*REPLANNING*/"
REASONING_TAG = "/*REASONING*/"
ACTION_TAG = "/*ACTION*/"
FINAL_ANSWER_TAG = "/*FINAL_ANSWER*/"

_PLANNING_TAGS = (PLANNING_TAG, REASONING_TAG, ACTION_TAG, REPLANNING_TAG)


def _strip_tags(text: str) -> str:
    for tag in _PLANNING_TAGS:
        text = text.replace(tag, "")
    return text


class PlanReActPlanner(BasePlanner):
    """Constrains the model to plan before it acts, in tagged text."""

    def build_planning_instruction(
        self, readonly_context: ReadonlyContext, llm_request: LlmRequest
    ) -> str:
        """The Plan-ReAct instruction (google-adk's wording)."""
        return _INSTRUCTION

    def process_planning_response(
        self, callback_context: CallbackContext, response_parts: list[types.Part]
    ) -> list[types.Part] | None:
        """Planning and reasoning as thoughts, the final answer as text, calls as they are."""
        if not response_parts:
            return None
        kept: list[types.Part] = []
        calling = False
        for part in response_parts:
            call = part.function_call
            if call is not None:
                if call.name:  # a call without a name is dropped
                    kept.append(part)
                    calling = True
                continue
            if calling:
                break  # stop after the first group of calls
            kept.extend(_split(part))
        return kept


def _split(part: types.Part) -> list[types.Part]:
    text = part.text
    if text and FINAL_ANSWER_TAG in text:
        cut = text.rfind(FINAL_ANSWER_TAG)
        reasoning = _strip_tags(text[:cut])
        answer = text[cut + len(FINAL_ANSWER_TAG) :]
        split: list[types.Part] = []
        if reasoning:
            split.append(types.Part(text=reasoning, thought=True))
        if answer:
            split.append(types.Part(text=answer))
        return split
    if text and text.startswith(_PLANNING_TAGS):
        return [part.model_copy(update={"text": _strip_tags(text), "thought": True})]
    return [part]


_INSTRUCTION = "\n\n".join(
    [
        f"""
When answering the question, try to leverage the available tools to gather the information instead of your memorized knowledge.

Follow this process when answering the question: (1) first come up with a plan in natural language text format; (2) Then use tools to execute the plan and provide reasoning between tool code snippets to make a summary of current state and next step. Tool code snippets and reasoning should be interleaved with each other. (3) In the end, return one final answer.

Follow this format when answering the question: (1) The planning part should be under {PLANNING_TAG}. (2) The tool code snippets should be under {ACTION_TAG}, and the reasoning parts should be under {REASONING_TAG}. (3) The final answer part should be under {FINAL_ANSWER_TAG}.
""",  # noqa: E501
        f"""
Below are the requirements for the planning:
The plan is made to answer the user query if following the plan. The plan is coherent and covers all aspects of information from user query, and only involves the tools that are accessible by the agent. The plan contains the decomposed steps as a numbered list where each step should use one or multiple available tools. By reading the plan, you can intuitively know which tools to trigger or what actions to take.
If the initial plan cannot be successfully executed, you should learn from previous execution results and revise your plan. The revised plan should be under {REPLANNING_TAG}. Then use tools to follow the new plan.
""",  # noqa: E501
        """
Below are the requirements for the reasoning:
The reasoning makes a summary of the current trajectory based on the user query and tool outputs. Based on the tool outputs and plan, the reasoning also comes up with instructions to the next steps, making the trajectory closer to the final answer.
""",  # noqa: E501
        """
Below are the requirements for the final answer:
The final answer should be precise and follow query formatting requirements. Some queries may not be answerable with the available tools and information. In those cases, inform the user why you cannot process their query and ask for more information.
""",  # noqa: E501
        """
Below are the requirements for the tool code:

**Custom Tools:** The available tools are described in the context and can be directly used.
- Code must be valid self-contained Python snippets with no imports and no references to tools or Python libraries that are not in the context.
- You cannot use any parameters or fields that are not explicitly defined in the APIs in the context.
- The code snippets should be readable, efficient, and directly relevant to the user query and reasoning steps.
- When using the tools, you should use the library name together with the function name, e.g., vertex_search.search().
- If Python libraries are not provided in the context, NEVER write your own code other than the function calls using the provided tools.
""",  # noqa: E501
        """
VERY IMPORTANT instruction that you MUST follow in addition to the above instructions:

You should ask for clarification if you need more information to answer the question.
You should prefer using the information available in the context instead of repeated tool use.
""",
    ]
)
