"""``replaced`` gives what ``model_copy(update=...)`` gives, for google-genai values."""

from __future__ import annotations

import pydantic
from google.genai import types

from adk_rx.models.copies import replaced


def test_a_replaced_value_equals_model_copy_with_the_same_update() -> None:
    template = types.FunctionResponse(name="_", response={})
    made = replaced(template, id="c1", name="add", response={"result": 3})
    copied = template.model_copy(update={"id": "c1", "name": "add", "response": {"result": 3}})
    assert made == copied
    assert made.model_fields_set == copied.model_fields_set == {"id", "name", "response"}
    assert made.model_dump(exclude_unset=True) == copied.model_dump(exclude_unset=True)
    assert type(made) is types.FunctionResponse


def test_the_original_is_left_as_it_was() -> None:
    part = types.Part(text="a")
    made = replaced(part, text="b", thought=True)
    assert (part.text, part.thought, part.model_fields_set) == ("a", None, {"text"})
    assert (made.text, made.thought) == ("b", True)
    made.text = "c"  # a value of its own
    assert part.text == "a"


class _WithPrivate(pydantic.BaseModel):
    name: str = ""
    _seen: int = pydantic.PrivateAttr(default=0)


def test_a_model_with_private_attributes_takes_model_copy() -> None:
    value = _WithPrivate(name="a")
    value._seen = 2
    made = replaced(value, name="b")
    assert made.name == "b" and made._seen == 2
