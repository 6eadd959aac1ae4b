"""What the broker costs Redis, counted on the broker and exported as OpenTelemetry metrics.

The broker adds to plain integers as it writes (nothing on the run's path); the counters are
observable instruments of the OpenTelemetry metrics API, read only when a metric reader
collects. With no meter provider installed (the SDK is in the ``otel`` extra) the API's
no-op meter is used and nothing is exported; the counts stay on the broker.

Instruments (meter ``adk_rx.server.broker``, each a monotonic counter):

* ``adk_rx.broker.writes``: round trips that wrote a run's keys (announcements, event
  batches, ends);
* ``adk_rx.broker.batches``: the round trips among them that published events (one per
  burst of events);
* ``adk_rx.broker.events``: events published;
* ``adk_rx.broker.bytes``: the event JSON published, in bytes (UTF-8);
* ``adk_rx.broker.events_skipped``: events of runs that ended with no reader on another
  server, which were therefore not published (what the lazy publishing saved).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation

__all__ = ["BrokerCounts"]

_INSTRUMENTS = (
    ("writes", "{write}", "Redis round trips that wrote a run's keys"),
    ("batches", "{batch}", "Redis round trips that published a burst of events"),
    ("events", "{event}", "Events published to Redis"),
    ("bytes", "By", "Event JSON published to Redis"),
    ("events_skipped", "{event}", "Events not published: nobody on another server read them"),
)


class BrokerCounts:
    """The broker's running totals, and their export as observable counters.

    Args:
        meter_provider: where the counters are registered; None: the global provider (a
            no-op until the OpenTelemetry SDK installs one).
    """

    __slots__ = ("batches", "bytes", "events", "events_skipped", "writes")

    def __init__(self, meter_provider: MeterProvider | None = None) -> None:
        self.writes = 0
        self.batches = 0
        self.events = 0
        self.bytes = 0
        self.events_skipped = 0
        meter = metrics.get_meter("adk_rx.server.broker", meter_provider=meter_provider)
        for name, unit, description in _INSTRUMENTS:
            meter.create_observable_counter(
                f"adk_rx.broker.{name}",
                callbacks=[self._reader(name)],
                unit=unit,
                description=description,
            )

    def _reader(self, name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
        def observe(_: CallbackOptions) -> Iterable[Observation]:
            return [Observation(getattr(self, name))]

        return observe

    def batch(self, events: int, size: int) -> None:
        """One round trip that published ``events`` events of ``size`` bytes of JSON."""
        self.writes += 1
        self.batches += 1
        self.events += events
        self.bytes += size
