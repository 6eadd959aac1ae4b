"""The private engine of adk_rx's streams: what the runtime is built from, not for users.

Users call the operators of :mod:`adk_rx.rx` (its ``__all__``); the rest of adk_rx also builds
on these, which may change with the runtime:

* ``sync.py``: Observables whose items are known at subscribe time (the cheapest Single,
  Maybe and Completable) and the one place inner stages are subscribed (``subscribe_inner``);
* ``awaitable.py``: Observables that asyncio can await whatever thread completes them;
* ``generator_stage.py``: ``from_generator``, the driver of the LLM step loop (plain calls
  while nothing waits);
* ``written_steps.py``: a step generator and the writer of its items in one plain-call driver
  that resumes itself after an answer that came later (the Runner's plain turn);
* ``collected.py``: wait for a source's end, its items kept aside (a step that handles an
  answer arriving later as plain values);
* ``concat_map_direct.py``: ``concat_map`` whose mapper may answer without an Observable;
* ``first_or_recover.py``: a call's first result mapped, or a recovery, in one layer;
* ``blocking.py``: a blocking call on a pool (``from_blocking``), whose job also maps its
  result, recovers from its error and makes its items, with no layer of their own;
* ``stage_chain.py``: a run made of stages with a life cycle (the Runner's invocation);
* ``top_level.py``: ``StartAware``, a source that knows whether its subscriber can stop it;
* ``pending.py``: a Single's outcome, read at once or waited for (the session writer's
  appends);
* ``queue_drain.py``: the serializing observer behind ``serialize`` and backpressure;
* ``retry_decided.py``: retry after an error when and if a rule says so;
* ``channel.py``: the bounded buffer behind the pull bridges;
* ``slots.py``: lock-free handles for one subscription's inners (``Slot``, ``Both``);
* ``inner.py``: the observers an inner stage is subscribed with, each its own handle.
"""
