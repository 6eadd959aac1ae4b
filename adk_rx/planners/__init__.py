"""Planners: how an LlmAgent plans before it acts (``LlmAgent(planner=...)``), as in google-adk.

* :class:`BuiltInPlanner` turns on the model's own thinking (``thinking_config``);
* :class:`PlanReActPlanner` asks any model to plan, reason and act in tagged text, and marks
  the planning and reasoning as thoughts, so only the final answer reads as the answer.

A planner adds to each request (an instruction, a thinking config) and may rewrite each
response's parts; :class:`BasePlanner` is the seam for planners of one's own.
"""

from adk_rx.planners.base import BasePlanner
from adk_rx.planners.built_in import BuiltInPlanner
from adk_rx.planners.plan_re_act import PlanReActPlanner

__all__ = ["BasePlanner", "BuiltInPlanner", "PlanReActPlanner"]
