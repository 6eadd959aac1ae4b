"""The bodies of the eval routes, in google-adk's request shapes, checked before use.

A body has been read by :func:`~.session_routes.json_body` (size, depth, standard JSON, an
object); each model here then checks its fields' types strictly (``"5"`` is not a number,
``5`` not an id) and ids as file names. camelCase keys are accepted, as google-adk accepts
them, and fields these routes do not use are ignored (google-adk's UI may send more).
Anything else is a :class:`RequestRejectedError` (400) that names the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar

import pydantic
from pydantic.alias_generators import to_camel

from adk_rx.errors import AdkRxError
from adk_rx.evaluation import DEFAULT_CRITERIA, BaseCriterion, criteria_from_config
from adk_rx.evaluation.eval_store import check_eval_id
from adk_rx.evaluation.metrics import METRICS

from ..edge.validation import ID_SCHEMA, check_id
from ..errors import RequestRejectedError

__all__ = ["EVAL_ID_SCHEMA", "AddSessionBody", "CreateEvalSetBody", "RunEvalBody", "parse_body"]

B = TypeVar("B", bound="_Body")


def _checked_by(check: Callable[[str, str], str]) -> pydantic.AfterValidator:
    def validate(value: str) -> str:
        try:
            return check(value, "the id")
        except AdkRxError as exc:  # pydantic reports a ValueError with the field's name
            raise ValueError(str(exc)) from exc

    return pydantic.AfterValidator(validate)


EVAL_ID_SCHEMA = {
    "type": "string",
    "maxLength": 128,
    # check_eval_id's rule as a JSON schema: no "..", so each dot is followed by another
    # character or ends the id.
    "pattern": r"^[A-Za-z0-9_](\.?[A-Za-z0-9_-])*\.?$",
}
"""What :func:`~adk_rx.evaluation.eval_store.check_eval_id` takes, for ``/openapi.json``."""
EvalId = Annotated[str, _checked_by(check_eval_id), pydantic.WithJsonSchema(EVAL_ID_SCHEMA)]
"""An eval set or case id: a safe file name."""
StoreId = Annotated[str, _checked_by(check_id), pydantic.WithJsonSchema(ID_SCHEMA)]
"""A session or user id, as every route takes them."""


class _Body(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, strict=True, extra="ignore", frozen=True
    )


class NewEvalSet(_Body):
    """``{"eval_set_id": ...}``: the other fields of an eval set are not taken on creation."""

    eval_set_id: EvalId


class CreateEvalSetBody(_Body):
    """``POST .../eval-sets``: ``{"eval_set": {"eval_set_id": ...}}``."""

    eval_set: NewEvalSet


class AddSessionBody(_Body):
    """``POST .../add_session``: the caller's stored session that becomes case ``eval_id``."""

    eval_id: EvalId
    session_id: StoreId
    user_id: StoreId


# A criterion object has a threshold; the rest depends on the metric (judge options, rubrics).
_CRITERION_SCHEMA = {
    "anyOf": [
        {
            "type": "object",
            "properties": {"threshold": {"type": "number"}},
            "required": ["threshold"],
        },
        {"type": "null"},
    ]
}


class EvalMetric(_Body):
    """A metric and its threshold (the metric's default threshold when left out), or its
    criterion in google-adk's shape (``{"threshold": ..., "judge_model_options": ...}``)."""

    metric_name: Annotated[str, pydantic.WithJsonSchema({"enum": list(METRICS)})]
    threshold: float | None = None
    criterion: Annotated[dict[str, Any] | None, pydantic.WithJsonSchema(_CRITERION_SCHEMA)] = None


class RunEvalBody(_Body):
    """``POST .../run_eval``: which cases (all when none are named) and which metrics.

    ``eval_case_ids`` is google-adk's newer name for ``eval_ids``; both are taken.
    """

    eval_ids: list[EvalId] = []
    eval_case_ids: list[EvalId] = []
    eval_metrics: list[EvalMetric] = []

    def case_ids(self) -> list[str]:
        """The named cases, in order, each once."""
        return list(dict.fromkeys([*self.eval_ids, *self.eval_case_ids]))

    def criteria(self) -> dict[str, BaseCriterion] | None:
        """metric -> criterion, or None for the defaults.

        Raises:
            RequestRejectedError: a metric this evaluator does not have, or a criterion that
                does not fit it.
        """
        if not self.eval_metrics:
            return None
        thresholds: dict[str, Any] = {
            m.metric_name: m.criterion
            if m.criterion is not None
            else m.threshold
            if m.threshold is not None
            else DEFAULT_CRITERIA.get(m.metric_name, 0.0)
            for m in self.eval_metrics
        }
        try:
            return criteria_from_config({"criteria": thresholds})
        except AdkRxError as exc:
            raise RequestRejectedError(f"bad eval_metrics: {exc}") from exc


def parse_body(model: type[B], data: Mapping[str, Any]) -> B:
    """``data`` as ``model``.

    Raises:
        RequestRejectedError: a field is missing or of the wrong type, or an id is not a
            safe one; the message names the field.
    """
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'the body'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        raise RequestRejectedError(f"the body is not a valid {model.__name__}: {problems}") from exc
