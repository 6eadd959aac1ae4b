"""What a Runner reports to: :class:`Telemetry` decides, once per invocation, whether anyone
listens.

With no tracer provider and no meter provider configured (the given ones, else
OpenTelemetry's global ones, are the API's no-op or proxy providers), an invocation gets
:data:`NO_TRACE` and its contexts carry no scope: the runtime's hooks see ``None`` and skip.
"""

from __future__ import annotations

import os
from importlib import metadata
from typing import TYPE_CHECKING

import opentelemetry.metrics._internal as _metrics_state
import opentelemetry.trace as _trace_state
from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider, NoOpMeterProvider
from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, TracerProvider

from adk_rx.telemetry.attributes import capture_content
from adk_rx.telemetry.metrics import Instruments
from adk_rx.telemetry.spans import InvocationTrace

if TYPE_CHECKING:
    from adk_rx.context import InvocationContext
    from adk_rx.telemetry.spans import TraceScope

__all__ = ["NO_TRACE", "NoTrace", "Telemetry", "is_configured"]

try:
    _VERSION = metadata.version("adk_rx")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    _VERSION = "0"

_NOOP_TRACER = trace.NoOpTracer()
# The API's stand-ins when nothing is configured (the proxies delegate once a global is set,
# but get_*_provider() then returns the real provider, never the proxy).
_NOOP_TRACER_PROVIDERS = (ProxyTracerProvider, NoOpTracerProvider)
_NOOP_METER_PROVIDERS: tuple[type, ...] = (NoOpMeterProvider,)
try:  # the proxy class is not exported by the API; missing means there is none to skip
    from opentelemetry.metrics._internal import _ProxyMeterProvider

    _NOOP_METER_PROVIDERS += (_ProxyMeterProvider,)
except ImportError:  # pragma: no cover
    pass


def is_configured(provider: TracerProvider | MeterProvider) -> bool:
    """False for the API's no-op and proxy providers (nothing would be recorded)."""
    return not isinstance(provider, _NOOP_TRACER_PROVIDERS + _NOOP_METER_PROVIDERS)


# The API's get_*_provider() reads the environment on every call while no global provider is
# set (a few microseconds); the module slot they fill is read here instead, unless a provider
# is named by environment variable (then the API loads it on first use).
_TRACER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
_METER_FROM_ENV = "OTEL_PYTHON_METER_PROVIDER" in os.environ
_TRACER_SLOT = hasattr(_trace_state, "_TRACER_PROVIDER")
_METER_SLOT = hasattr(_metrics_state, "_METER_PROVIDER")
# True where the slot says nothing and the API must be asked each time.
_ASK_TRACERS = not _TRACER_SLOT or _TRACER_FROM_ENV
_ASK_METERS = not _METER_SLOT or _METER_FROM_ENV


class NoTrace:
    """The invocation hooks when nobody listens: each does nothing."""

    __slots__ = ()

    def opened(self, ctx: InvocationContext) -> TraceScope | None:
        """No scope: the runtime's span hooks are skipped."""
        return None

    def stopping(self, code: str) -> None:
        """Nothing to mark."""

    def end(self, outcome: str, error: BaseException | None = None) -> None:
        """Nothing to end."""


NO_TRACE = NoTrace()
"""The trace of an invocation nobody listens to: every call on it does nothing."""


class Telemetry:
    """The tracer and meter providers of a Runner (OpenTelemetry's global ones by default).

    Args:
        tracer_provider: where spans go; None means the global provider at each invocation.
        meter_provider: where metrics go; None means the global provider at each invocation.
    """

    __slots__ = (
        "_instruments",
        "_meter_source",
        "_tracer",
        "_tracer_source",
        "meter_provider",
        "tracer_provider",
    )

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self._tracer_source: object = None
        self._tracer: trace.Tracer = _NOOP_TRACER
        self._meter_source: object = None
        self._instruments: Instruments | None = None

    def start_invocation(self, *, app_name: str, session_id: str) -> InvocationTrace | NoTrace:
        """The hooks of one invocation, subscribed now (the caller's span is the parent)."""
        # The global providers, when set (read inline: no call per invocation while unset).
        tracers = self.tracer_provider
        if tracers is None and (_ASK_TRACERS or _trace_state._TRACER_PROVIDER is not None):  # pyright: ignore[reportPrivateUsage]
            tracers = trace.get_tracer_provider()
        meters = self.meter_provider
        if meters is None and (_ASK_METERS or _metrics_state._METER_PROVIDER is not None):  # pyright: ignore[reportPrivateUsage]
            meters = metrics.get_meter_provider()
        if tracers is None and meters is None:
            return NO_TRACE  # nothing configured: the common case, decided in well under 1 us
        # The providers seen last time were configured: skip the (ABC) isinstance checks.
        tracing = tracers is not None and (tracers is self._tracer_source or is_configured(tracers))
        measuring = meters is not None and (meters is self._meter_source or is_configured(meters))
        if not tracing and not measuring:
            return NO_TRACE
        if tracing and tracers is not None and tracers is not self._tracer_source:
            self._tracer = tracers.get_tracer("adk_rx", _VERSION)
            self._tracer_source = tracers
        if measuring and meters is not None and meters is not self._meter_source:
            self._instruments = Instruments(meters.get_meter("adk_rx", _VERSION))
            self._meter_source = meters
        return InvocationTrace(
            self._tracer if tracing else _NOOP_TRACER,
            self._instruments if measuring else None,
            capture_content(),
            app_name=app_name,
            session_id=session_id,
            telemetry=self,
        )
