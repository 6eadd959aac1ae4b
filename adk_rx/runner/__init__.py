"""The Runner and what it uses to run one turn of a session.

One turn, followed through the modules of this package:

1. ``runner.py``: :meth:`Runner.run_async` checks its arguments and returns a cold
   Observable. Nothing runs until it is subscribed; each subscription builds one
   :class:`~adk_rx.runner.invocation.Invocation`.
2. ``gates.py``: the invocation waits for its turn on the session (one run at a time per
   session in this process; the store's turn lock orders processes).
3. ``invocation.py``: with the turn, it reads the session, builds the invocation's context
   and lets the plugins see the user message (``opening.py``), stores the message (not
   emitted), and asks ``routing.py`` which agent of the tree takes the turn (the agent that
   last spoke, when transfers allow it; else the root). ``body.py`` pipes that agent's run,
   a cold Observable, through the session writer; an LlmAgent's steps inside it run as
   plain calls while nothing waits (``adk_rx/flows/llm_loop.py``).
4. ``session_writer.py``: for each event the agent produces, in order, the writer applies it
   to the invocation's session view (so the next model step sees it), persists it (one append
   at a time; partial events are not stored), and only then is it emitted.
5. ``records.py``: on a dispose or a deadline, the invocation stops the agent, waits for the
   append in flight, and writes the records that keep the session valid: each stored
   function call without a response gets ``{"error": "cancelled"}``, and a final event with
   ``error_code="CANCELLED"`` (or ``"TIMEOUT"``) says where the turn stopped. Then the next
   run on the session may start.
"""

from adk_rx.runner.runner import InMemoryRunner, Runner

__all__ = ["InMemoryRunner", "Runner"]
