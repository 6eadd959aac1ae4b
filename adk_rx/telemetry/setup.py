"""The OpenTelemetry SDK as ``adk-rx`` sets it up: an OTLP/HTTP exporter and a span store.

``adk-rx run --otlp-endpoint URL`` (and ``api-server``/``web``), or the standard
``OTEL_EXPORTER_OTLP_ENDPOINT``, export spans and metrics to ``URL/v1/traces`` and
``URL/v1/metrics``; ``OTEL_SERVICE_NAME`` names the service (default ``adk-rx``). The
servers also keep recent spans in a :class:`~adk_rx.telemetry.span_store.SpanStore` for
the dev page's trace view, and ``run --trace`` prints each turn's span tree from one.
Everything here needs the ``otel`` extra.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics, trace

from adk_rx.errors import ConfigurationError

if TYPE_CHECKING:
    from adk_rx.telemetry.span_store import SpanStore

__all__ = ["ENDPOINT_ENV", "SdkSetup", "sdk_available", "setup_sdk"]

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"


def sdk_available() -> bool:
    """True when the OpenTelemetry SDK (the ``otel`` extra) is installed."""
    try:
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class SdkSetup:
    """Providers made by :func:`setup_sdk`; pass them to Runners, ``shutdown()`` at exit."""

    tracer_provider: Any
    meter_provider: Any | None
    span_store: SpanStore | None
    endpoint: str | None

    def install_globally(self) -> None:
        """Makes them OpenTelemetry's global providers, unless others are set already, so a
        tool's own spans go to the same place."""
        from opentelemetry.trace import ProxyTracerProvider

        if isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
            trace.set_tracer_provider(self.tracer_provider)
        if self.meter_provider is not None and type(metrics.get_meter_provider()).__name__ in (
            "_ProxyMeterProvider",
            "NoOpMeterProvider",
        ):
            metrics.set_meter_provider(self.meter_provider)

    def shutdown(self) -> None:
        """Flushes what the exporters hold and stops them."""
        self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()


def setup_sdk(*, otlp_endpoint: str | None = None, keep_spans: bool = False) -> SdkSetup | None:
    """The SDK providers for an OTLP endpoint and/or a span store; None when neither is wanted
    or, for a span store alone, when the SDK is not installed.

    Args:
        otlp_endpoint: the collector's base URL; default ``OTEL_EXPORTER_OTLP_ENDPOINT``.
        keep_spans: keep recent spans in a SpanStore.

    Raises:
        ConfigurationError: an endpoint is asked for but the ``otel`` extra is missing.
    """
    endpoint = (otlp_endpoint or os.environ.get(ENDPOINT_ENV, "")).strip() or None
    if endpoint is None and not keep_spans:
        return None
    if not sdk_available():
        if endpoint is not None:
            raise ConfigurationError(
                "exporting traces needs the OpenTelemetry SDK: pip install 'adk_rx[otel]'"
            )
        return None
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    from adk_rx.telemetry.span_store import SpanStore

    service = os.environ.get("OTEL_SERVICE_NAME") or "adk-rx"
    resource = Resource.create({SERVICE_NAME: service})
    tracer_provider = TracerProvider(resource=resource)
    store = SpanStore() if keep_spans else None
    if store is not None:
        tracer_provider.add_span_processor(store)
    meter_provider = None
    if endpoint is not None:
        meter_provider = _otlp(tracer_provider, resource, endpoint)
    return SdkSetup(tracer_provider, meter_provider, store, endpoint)


def _otlp(tracer_provider: Any, resource: Any, endpoint: str) -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise ConfigurationError(
            "exporting over OTLP/HTTP needs opentelemetry-exporter-otlp-proto-http: "
            "pip install 'adk_rx[otel]'"
        ) from exc
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    if not endpoint.startswith(("http://", "https://")):
        raise ConfigurationError(
            f"--otlp-endpoint / {ENDPOINT_ENV} must be an http:// or https:// URL, got {endpoint!r}"
        )
    base = endpoint.rstrip("/")
    tracer_provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces"))
    )
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{base}/v1/metrics"))
    return MeterProvider(resource=resource, metric_readers=[reader])
