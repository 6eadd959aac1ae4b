"""``adk-rx api-server --a2a``: the apps of the folder served over A2A too.

One ``message/stream`` to ``/a2a/{app}``, followed through the modules:

1. ``mount.py``: past the server's edge (Host, Origin, tokens), the body is read bounded and
   handed to the SDK's JSON-RPC dispatcher of the app (made on first use, with the app's
   Runner); the token's user is the authenticated caller.
2. :mod:`adk_rx.a2a.executor`: the SDK's request handler keeps the task (scoped to its
   owner) and asks the executor to run it.
3. ``runs.py``: the run is a server-owned invocation, started as ``/run_sse`` starts one:
   the same session store, turn lock, limits and trace propagation; its events are read
   from its invocation log, and ``tasks/cancel`` is the invocation's cancel.
"""
