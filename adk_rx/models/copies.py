"""``replaced``: a google-genai value with some fields changed, without pydantic's copy path.

``model.model_copy(update=...)`` goes through ``__copy__`` and ``copy.copy`` of each of the
model's dicts: 17 calls for one ``FunctionResponse``. The runtime makes such copies per
function call and per response (ids put on calls, response parts made from a template), so
it makes them here with the same result: a shallow copy, the changed fields set, and
``model_fields_set`` extended with them (no validation, as ``model_copy`` does none).
"""

from __future__ import annotations

from typing import Any, TypeVar

import pydantic

__all__ = ["replaced"]

M = TypeVar("M", bound=pydantic.BaseModel)

_set_attribute = object.__setattr__
_new = object.__new__
# BaseModel's slots, set through their descriptors (no attribute lookup on the type per set).
_SLOTS = vars(pydantic.BaseModel)
_set_extra = _SLOTS["__pydantic_extra__"].__set__
_set_fields_set = _SLOTS["__pydantic_fields_set__"].__set__
_set_private = _SLOTS["__pydantic_private__"].__set__


def replaced(model: M, **update: Any) -> M:
    """``model.model_copy(update=update)`` for a model without extra or private attributes
    (every google-genai type); any other model takes ``model_copy`` itself."""
    if model.__pydantic_extra__ is not None or model.__pydantic_private__ is not None:
        return model.model_copy(update=update)
    new = _new(type(model))
    _set_attribute(new, "__dict__", {**model.__dict__, **update})
    _set_extra(new, None)
    _set_fields_set(new, model.__pydantic_fields_set__ | {*update})
    _set_private(new, None)
    return new
