"""The server's HTTP and WebSocket routes: ADK's, and the server-owned invocations.

A ``POST /run_sse``, followed through the modules of this package (the Host, Origin and token
checks of :mod:`adk_rx.cli.server.edge` ran before it):

1. ``run_routes.py``: the body is read within the server's bounds and checked into a
   ``RunBody`` (``edge/body_reader.py``, ``edge/bodies.py``); the caller may name only its
   own user, and the app's Runner is built on first use (``shared.py``, ``runners.py``).
2. ``session_routes.py``: a session must exist (``find_session``; another user's is not
   found); a run reads its session only once, in the Runner, whose SessionNotFoundError
   answers the same 404. Besides that helper it serves ADK's session and artifact reads.
3. ``run_routes.py`` again: the session's turn is held across server processes
   (``cluster/turns.py``), the run starts as a server-owned invocation
   (``invocations/registry.py``) and the route waits until its user message is stored; the
   answer streams the invocation's log as server-sent events (``invocations/sse.py``). A
   client that leaves only detaches: ``.../invocations/{id}/events?after=`` reattaches.

The other routes: ``live_route.py`` serves ``/run_live`` (a WebSocket). ``adk_routes.py``
gathers google-adk's remaining routes, listed before the core ones: its service routes
(``adk_routes_service.py``), session writes (``adk_routes_sessions.py``), artifact routes
(``adk_routes_artifacts.py``), developer routes (``adk_routes_dev.py``, with the agent graph
of ``agent_graph.py``) and eval routes (``eval_routes.py``; their bodies are checked in
``eval_bodies.py``, and ``eval_scope.py`` says whose eval sets a caller reaches).
``adk_ui.py`` serves google-adk's own dev UI (``--ui google-adk``). The trace routes live
with the traces (:mod:`adk_rx.cli.server.traces`), ``/openapi.json`` with the API's
description (:mod:`adk_rx.cli.server.api`).
"""
