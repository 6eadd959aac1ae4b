"""The instruments adk_rx records on a meter provider.

* ``gen_ai.client.token.usage`` (histogram, ``{token}``): input and output tokens of each
  model call (``gen_ai.token.type`` = ``input`` / ``output``), when the response carries usage.
* ``gen_ai.client.operation.duration`` (histogram, seconds): each model call, with
  ``error.type`` when it failed.
* ``adk_rx.cost`` (counter, in the unit the app's ``Pricing`` is written in): what each model
  call's tokens cost, by model (``gen_ai.request.model``), when the run has a pricing.
* ``adk_rx.invocations`` (counter) and ``adk_rx.invocation.duration`` (histogram, seconds):
  every invocation, by ``adk_rx.outcome`` (``ok``, ``error``, ``cancelled``, ``timeout``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.metrics import Meter

from adk_rx.telemetry import attributes as attr

__all__ = ["Instruments"]

# The GenAI conventions' advisory bucket boundaries.
_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304]
_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48]
_DURATION_BUCKETS += [40.96, 81.92]


class Instruments:
    """The instruments of one meter, created once per meter provider."""

    __slots__ = ("cost", "invocation_duration", "invocations", "operation_duration", "token_usage")

    def __init__(self, meter: Meter) -> None:
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used per model call",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of model calls",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.cost = meter.create_counter(
            "adk_rx.cost", unit="1", description="What model calls cost, by model (with a pricing)"
        )
        self.invocations = meter.create_counter(
            "adk_rx.invocations", unit="{invocation}", description="Invocations, by outcome"
        )
        self.invocation_duration = meter.create_histogram(
            "adk_rx.invocation.duration",
            unit="s",
            description="Duration of invocations, by outcome",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )

    def model_call(
        self,
        seconds: float,
        model: str,
        input_tokens: int | None,
        output_tokens: int | None,
        error_type: str | None,
        cost: float | None = None,
    ) -> None:
        """Records one model call (``cost``: what its tokens cost, with a pricing)."""
        common: dict[str, Any] = {attr.OPERATION: "generate_content", attr.REQUEST_MODEL: model}
        duration_attrs = common if error_type is None else {**common, attr.ERROR_TYPE: error_type}
        self.operation_duration.record(seconds, duration_attrs)
        if input_tokens is not None:
            self.token_usage.record(input_tokens, {**common, attr.TOKEN_TYPE: "input"})
        if output_tokens is not None:
            self.token_usage.record(output_tokens, {**common, attr.TOKEN_TYPE: "output"})
        if cost is not None:
            self.cost.add(cost, common)

    def invocation(self, seconds: float, outcome: str, base: Mapping[str, Any]) -> None:
        """Records one finished invocation."""
        attributes = {**base, attr.OUTCOME: outcome}
        self.invocations.add(1, attributes)
        self.invocation_duration.record(seconds, attributes)
