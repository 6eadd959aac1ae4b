"""Traces for the dev pages: what each run did and when, as spans.

A trace request, followed through the modules of this package:

1. ``trace_index.py``: while the server runs, the store tap reports every stored event here,
   so a route whose path names only the app and the session (or an event), as google-adk's
   do, finds the user that owns it, and so the caller may read it.
2. ``trace_routes.py`` (adk-rx's page: one invocation) or google-adk's trace pane routes
   (``adk_routes_dev.py``, by session or by event) ask for the spans.
3. ``span_view.py``: when the server keeps the OpenTelemetry spans of its runs (a
   ``SpanStore``), they are answered in google-adk's trace-pane shape, with the attributes
   its UI reads (the event each model call made, its response).
4. ``trace_view.py``: for runs whose spans the server does not hold (no SDK, an earlier
   process, spans dropped from the bounded store), spans are derived from the events each
   run stored, which carry their timestamps.
"""
