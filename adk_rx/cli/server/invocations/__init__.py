"""Server-owned invocations: a run a request starts goes on after its client leaves.

One invocation, followed through the modules of this package:

1. ``registry.py``: a run route calls :meth:`~.registry.InvocationRegistry.start`, which
   answers "busy" when the session already runs here, and subscribes to the Runner on the
   I/O scheduler (never on the server's loop).
2. ``tap.py``: the server's session service is wrapped, so every stored event is reported,
   the user message and the records of a cancelled run too (the Runner stores them without
   emitting them); the first one tells the invocation its id.
3. ``log.py``: each event enters the invocation's bounded log, appended from the run's thread
   without waiting for anyone; every reader is only a cursor into that one log.
4. ``sse.py``: a client reads the log as server-sent events, ADK's ``/run_sse`` frames or the
   invocations stream (ids, heartbeats, a ``gap`` for a reader that fell behind, an ``end``),
   each at its own pace; one that left reattaches with ``after=``.
5. ``retention.py``: a finished log stays readable for the retention time, within bounds per
   user and in memory; one evicted early leaves a tombstone, and ``replay.py`` serves the
   same frames, with the same ids, from the session's stored events.

Across several server processes the same invocations are reached through Redis
(:mod:`adk_rx.cli.server.cluster`).
"""
