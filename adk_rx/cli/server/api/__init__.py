"""The server's API described: ``/openapi.json`` and ``/docs``.

The document, followed through the modules of this package:

1. ``api_models.py``: the JSON each route takes and answers, as pydantic models (where a
   route validates with a model, that model itself: genai's ``Content``, ``Event``, the eval
   bodies).
2. ``openapi_operations.py``: one ``Operation`` per (method, path) of the server's route
   table: its parameters, body, answers and the errors particular to it.
3. ``openapi.py``: the paths come from the app's own route table, so no route is left out;
   the models become JSON schemas in one pass, the server's own limits are written into them,
   and every operation gets the answers its kind of route gives (403 from the Host and Origin
   checks, 401 without a token, 404 for another user's object, 413 for a body too large ...).
   ``/docs`` is one self-contained page listing the routes.

The suite fuzzes a real server from this document (``tests/cli/server/api/test_api_fuzz.py``):
a body that fits a model must be accepted, one that does not refused with a 4xx.
"""
