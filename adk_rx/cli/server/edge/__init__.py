"""The server's edge: what a request passes before a route acts on it.

A request, followed through the modules of this package:

1. ``security.py``: one ASGI middleware in front of every route checks the ``Host`` (the
   server's own names only: no DNS rebinding), the ``Origin`` (another site's page reaches
   nothing) and, when the server has tokens, the bearer token, which names the caller's
   user.
2. ``cors.py``: the other origins ``--allow-origins`` lists pass the Origin check and get
   CORS headers (preflights too); the Host check and the token still apply.
3. ``body_reader.py``: a route that takes a body reads it bounded in bytes and time, counts
   its items and depth in one pass, and only then parses it.
4. ``bodies.py``: a run or session body in ADK's JSON shapes (camelCase accepted) becomes
   the values the route uses.
5. ``validation.py``: every id, name, cursor, message and client-written state is checked
   before anything is stored; what is refused answers a 4xx with a message
   (:mod:`adk_rx.cli.server.errors`), within the bounds of :mod:`adk_rx.cli.server.limits`.
6. ``error_answers.py``: whatever error a route ends in becomes a JSON ``{"detail"}`` answer
   with its status.
"""
