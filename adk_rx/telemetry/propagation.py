"""Continuing a caller's trace: the W3C ``traceparent`` header of an incoming request."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from opentelemetry import context as otel_context
from opentelemetry import propagate

__all__ = ["continued_trace"]


@contextlib.contextmanager
def continued_trace(headers: Mapping[str, str]) -> Iterator[None]:
    """While inside, the current context is the one the headers carry (``traceparent``,
    ``tracestate``, baggage, through OpenTelemetry's configured propagators), so an
    invocation subscribed here (or scheduled from here: adk_rx's schedulers copy the
    context) continues the caller's trace. Without a ``traceparent`` nothing changes."""
    if "traceparent" not in headers:
        yield
        return
    token = otel_context.attach(propagate.extract(headers))
    try:
        yield
    finally:
        otel_context.detach(token)
