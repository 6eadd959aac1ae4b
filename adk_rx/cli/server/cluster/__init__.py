"""Several server processes serving the same sessions: one PostgreSQL, one Redis.

A run request that reaches one process while another reads its events, followed through the
modules of this package (none of it runs without ``--broker-url``):

1. ``turns.py``: before the run starts, the process takes the session's turn lock in the
   store without waiting, so a run in another process answers 409 as one in this process
   does; the lock is held until the run's log ends.
2. ``broker.py``: the owner publishes the invocation to Redis by reading its own log at its
   own pace (a slow Redis never slows the run); a process that does not own it streams it
   from Redis with the same cursors, and a cancel is published for the owner.
3. ``broker_liveness.py``: every process heartbeats, cancels the runs it owns when asked,
   and watches the others; when one dies, a survivor claims each of its runs, stores the
   answers to the calls left open and an ``INTERRUPTED`` event, and ends the stream.
4. ``takeover.py``: for a resumable app the survivor resumes the run instead, from the
   stored events, on the same stream and cursors (nothing that completed runs again).

Redis is transient: the session store stays the truth, and losing Redis loses no stored
event. The invocations themselves live in :mod:`adk_rx.cli.server.invocations`.
"""
