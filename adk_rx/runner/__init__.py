"""The Runner and what it uses to run one turn of a session.

One turn, followed through the modules of this package:

1. ``runner.py``: the :class:`Runner` is built once with its services, frozen in one
   :class:`~adk_rx.runner.services.TurnServices` (``services.py``: the stores, plugins,
   schedulers, telemetry, app, summarizer, per-session gates and run tracker).
   :meth:`Runner.run_async` checks its arguments into one typed
   :class:`~adk_rx.runner.request.TurnRequest` (``request.py``) and returns a cold
   Observable; nothing runs until it is subscribed, and each subscription is one
   :class:`~adk_rx.runner.invocation.Invocation` of that request with those services.
2. ``invocation.py`` and ``gates.py``: the invocation waits for its turn on the session (one
   run at a time per session in this process; the store's turn lock orders processes) and
   sets the deadline.
3. ``turn.py``: :func:`~adk_rx.runner.turn.open_turn` reads the session, builds the
   invocation's context (which references the services), lets the plugins see the user
   message, answers calls a crash left open (``dangling.py``) and stores the message (not
   emitted).
4. ``body.py``: the agent that takes the turn (``routing.py``: the agent that last spoke, when
   transfers allow it; else the root) runs, a cold Observable, its events piped through the
   session writer; an LlmAgent's steps inside it run as plain calls while nothing waits
   (``adk_rx/flows/llm_loop.py``).
5. ``session_writer.py``: for each event the agent produces, in order, the writer applies it
   to the invocation's session view (so the next model step sees it), persists it (one append
   at a time; partial events are not stored), and only then is it emitted.
6. ``invocation.py`` and ``records.py``: on a dispose or a deadline, the invocation stops the
   body, waits for the append in flight, and writes the records that keep the session valid:
   each stored function call without a response gets ``{"error": "cancelled"}``, and a final
   event with ``error_code="CANCELLED"`` (or ``"TIMEOUT"``) says where the turn stopped. After
   a normal end the app may compact the session (``adk_rx/compaction/``). Then the next run
   on the session may start.

``in_memory.py`` gives a Runner with in-memory services; ``shutdown.py`` and ``toolsets.py``
close a Runner (its runs, then its plugins and the agent tree's toolsets).
"""

from adk_rx.runner.in_memory import InMemoryRunner
from adk_rx.runner.runner import Runner

__all__ = ["InMemoryRunner", "Runner"]
