"""``EvalConfig``: google-adk's eval config file (``test_config.json``), read and checked.

``{"criteria": {metric: threshold | criterion}, "user_simulator_config": {...}}``; without a
``criteria`` key the defaults apply (``tool_trajectory_avg_score`` 1.0 and
``response_match_score`` 0.8, as google-adk's). ``custom_metrics`` (google-adk runs a Python
function named in the config) is not supported: a config that has them is an error, so no
metric is silently skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pydantic

from adk_rx.errors import ConfigurationError
from adk_rx.evaluation.criteria import BaseCriterion
from adk_rx.evaluation.metrics import RESPONSE, TRAJECTORY, parse_criterion
from adk_rx.evaluation.simulation import LlmBackedUserSimulatorConfig

__all__ = ["DEFAULT_CRITERIA", "EvalConfig", "criteria_from_config"]

DEFAULT_CRITERIA: Mapping[str, float] = {TRAJECTORY: 1.0, RESPONSE: 0.8}
"""The thresholds a case must meet when no config names others."""

Criteria = Mapping[str, float | Mapping[str, Any] | BaseCriterion]


class EvalConfig(pydantic.BaseModel):
    """The metrics to score, each with its criterion, and the simulated user's settings."""

    model_config = pydantic.ConfigDict(arbitrary_types_allowed=True, frozen=True)

    criteria: dict[str, BaseCriterion]
    user_simulator_config: LlmBackedUserSimulatorConfig | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> EvalConfig:
        """A config from its JSON object (None: the defaults).

        Raises:
            ConfigurationError: an unknown or cloud-only metric, a criterion or simulator
                config that does not fit, or ``custom_metrics``.
        """
        data = dict(data or {})
        if data.get("custom_metrics") or data.get("customMetrics"):
            raise ConfigurationError(
                "custom_metrics (a Python function per metric, google-adk's) are not supported"
            )
        raw = data.get("user_simulator_config", data.get("userSimulatorConfig"))
        try:
            simulator = None if raw is None else LlmBackedUserSimulatorConfig.model_validate(raw)
        except pydantic.ValidationError as exc:
            raise ConfigurationError(f"user_simulator_config is not valid: {exc}") from exc
        return cls(criteria=criteria_from_config(data), user_simulator_config=simulator)

    @classmethod
    def load(cls, path: str | Path) -> EvalConfig:
        """A config file.

        Raises:
            ConfigurationError: the file cannot be read, is not a JSON object, or is invalid.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"cannot read the eval config {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigurationError(f"{path}: the eval config must be a JSON object")
        return cls.from_mapping(data)

    @property
    def thresholds(self) -> dict[str, float]:
        """metric -> threshold."""
        return {name: c.threshold for name, c in self.criteria.items()}


def criteria_from_config(config: Mapping[str, Any] | None) -> dict[str, BaseCriterion]:
    """The criteria of google-adk's eval config (``{"criteria": {name: threshold | object}}``).

    Metrics left out keep their defaults only when ``criteria`` is missing altogether.

    Raises:
        ConfigurationError: an unknown metric, or a criterion that does not fit its metric.
    """
    if not config or "criteria" not in config:
        return as_criteria(DEFAULT_CRITERIA)
    raw = config["criteria"]
    if not isinstance(raw, Mapping):
        raise ConfigurationError('eval config "criteria" must be an object of metric: criterion')
    return as_criteria(raw)


def as_criteria(criteria: Criteria | EvalConfig | None) -> dict[str, BaseCriterion]:
    """Typed criteria from thresholds, JSON objects, criteria or a config (None: defaults)."""
    if isinstance(criteria, EvalConfig):
        return dict(criteria.criteria)
    given = DEFAULT_CRITERIA if criteria is None else criteria
    return {name: parse_criterion(name, value) for name, value in given.items()}
