"""Resumability: an invocation of a resumable app continues where it stopped.

``App(resumability_config=ResumabilityConfig(is_resumable=True))`` and
``runner.run_async(..., invocation_id=ID)`` continue invocation ID from its stored events, in a
new process too. One resumed invocation, followed through the modules of this package:

1. ``progress.py``: while any invocation of the app runs, its agents record where they are as
   events: a workflow agent's ``agent_state`` before each sub-agent (and round), an
   ``end_of_agent`` when an agent finished; a pending long-running call
   (:class:`PendingCalls`) keeps a SequentialAgent or LoopAgent from starting more.
2. ``stored.py``: a function call's tools start only once the event carrying the call is
   stored (:class:`StoredEvents`), so the log always shows the calls whose tools may have run.
3. ``invocation.py``: resuming, the Runner finds the invocation's user message in the session
   (:func:`resumed_user_content`; an unknown id is ``InvocationNotFoundError``) and reads the
   invocation's events into a :class:`ResumeLog` on the context (:func:`resume_from_log`),
   starting with the agent that took the invocation at first.
4. ``log.py``: each agent asks the log once: had it finished (it is skipped), which sub-agent
   and round it was in (a workflow agent starts there), which events it had stored.
5. ``llm_flow.py``: an LlmAgent goes on from its last stored event
   (:func:`resume_llm_flow`): stored tool responses are reused, a call without one runs again
   when its tool is idempotent and is answered ``{"error": "interrupted"}`` otherwise, and a
   model call that had not finished is made again.

Calls a crash left unanswered in earlier invocations are the Runner's to answer, whether or
not the app is resumable (``adk_rx/runner/dangling.py``).
"""

from adk_rx.resumability.invocation import resume_from_log, resumed_user_content
from adk_rx.resumability.llm_flow import resume_llm_flow
from adk_rx.resumability.log import ResumeLog
from adk_rx.resumability.progress import PendingCalls, agent_state_event, with_end_of_agent
from adk_rx.resumability.stored import StoredEvents

__all__ = [
    "PendingCalls",
    "ResumeLog",
    "StoredEvents",
    "agent_state_event",
    "resume_from_log",
    "resume_llm_flow",
    "resumed_user_content",
    "with_end_of_agent",
]
