"""Declarations built from signatures: JSON schema per parameter type, descriptions, hiding."""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional

import pydantic
import pytest
from reactivex import Observable

from adk_rx.errors import ConfigurationError
from adk_rx.tools.function import FunctionTool, parse_docstring
from adk_rx.tools.schema import UntypedParameterWarning, function_schema

if TYPE_CHECKING:
    from adk_rx.context import ToolContext


def _params(func: Any) -> dict[str, Any] | None:
    return FunctionTool(func).declaration().parameters_json_schema


def _walk_keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _walk_keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _walk_keys(v)}
    return set()


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(pydantic.BaseModel):
    """A postal address."""

    street: str
    zip_code: int | None = None


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Tree(pydantic.BaseModel):
    value: int
    children: list[Tree] = []


def test_primitive_parameters_map_to_json_types_and_are_required() -> None:
    def f(s: str, i: int, x: float, b: bool) -> None: ...

    assert _params(f) == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "x": {"type": "number"},
            "b": {"type": "boolean"},
        },
        "required": ["s", "i", "x", "b"],
    }


def test_defaults_and_optional_parameters_are_not_required() -> None:
    def f(
        a: int,
        b: int = 3,
        c: Optional[str] = None,  # noqa: UP045 - the typing spelling is supported too
        d: str | None = None,
        e: int | None = 5,
        g: float | None = None,
    ) -> None: ...

    schema = _params(f)

    assert schema is not None
    assert schema["required"] == ["a"]
    assert schema["properties"]["b"] == {"type": "integer", "default": 3}
    assert schema["properties"]["c"] == {"type": "string", "default": None}
    assert schema["properties"]["d"] == {"type": "string", "default": None}
    assert schema["properties"]["e"] == {"type": "integer", "default": 5}


def test_an_optional_parameter_without_default_is_not_required() -> None:
    def f(a: int, b: int | None) -> None: ...

    schema = _params(f)

    assert schema is not None
    assert schema["required"] == ["a"]
    assert schema["properties"]["b"] == {"type": "integer", "default": None}


def test_literal_and_enum_parameters_list_their_values() -> None:
    def f(
        mode: Literal["fast", "slow"], only: Literal["x"], color: Color, level: Level
    ) -> None: ...

    props = (_params(f) or {})["properties"]

    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert props["only"] == {"type": "string", "enum": ["x"]}
    assert props["color"] == {"type": "string", "enum": ["red", "green"]}
    assert props["level"]["enum"] == [1, 2]
    assert props["level"]["type"] == "integer"


def test_lists_and_dicts_describe_their_items() -> None:
    def f(ids: list[int], scores: dict[str, float], anything: list, mapping: dict) -> None: ...  # type: ignore[type-arg]

    props = (_params(f) or {})["properties"]

    assert props["ids"] == {"type": "array", "items": {"type": "integer"}}
    assert props["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["anything"]["type"] == "array"
    assert props["mapping"]["type"] == "object"


def test_nested_models_and_dataclasses_are_inlined_without_refs_or_titles() -> None:
    def f(address: Address, where: Point) -> None:
        """Ship.

        Args:
            address: where to ship.
        """

    schema = _params(f)

    assert schema is not None
    assert schema["properties"]["address"] == {
        "type": "object",
        "description": "where to ship.",
        "properties": {
            "street": {"type": "string"},
            "zip_code": {"type": "integer", "default": None},
        },
        "required": ["street"],
    }
    assert schema["properties"]["where"]["properties"] == {
        "x": {"type": "number"},
        "y": {"type": "number"},
    }
    assert schema["properties"]["where"]["required"] == ["x", "y"]
    assert {"$ref", "$defs", "title", "additionalProperties"}.isdisjoint(_walk_keys(schema))


def test_a_recursive_model_keeps_its_defs() -> None:
    def f(tree: Tree) -> None: ...

    schema = _params(f)

    assert schema is not None
    assert schema["properties"]["tree"] == {"$ref": "#/$defs/Tree"}
    assert schema["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert "title" not in _walk_keys(schema)


def test_annotated_constraints_reach_the_schema() -> None:
    def f(count: Annotated[int, pydantic.Field(ge=1, le=10)]) -> None: ...

    assert (_params(f) or {})["properties"]["count"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10,
    }


def test_args_section_gives_each_parameter_its_description() -> None:
    def f(city: str, days: int = 1, *, unit: str = "C") -> None:
        """Gets the forecast.

        Args:
            city (str): the city
                to look up.
            days: how many days.
            unit: "C" or "F".
        """

    props = (_params(f) or {})["properties"]

    assert props["city"]["description"] == "the city to look up."
    assert props["days"]["description"] == "how many days."
    assert props["unit"]["description"] == '"C" or "F".'


def test_description_is_the_docstring_without_args_returns_and_raises() -> None:
    def f(a: int) -> int:
        """Doubles a number.

        The body says more.

        Args:
            a: the number.

        Returns:
            twice a.

        Raises:
            ValueError: never.

        Example:
            f(2) == 4
        """
        return 2 * a

    assert FunctionTool(f).description == (
        "Doubles a number.\n\nThe body says more.\n\nExample:\n    f(2) == 4"
    )
    assert FunctionTool(f).declaration().description == FunctionTool(f).description


def test_parse_docstring_without_sections_keeps_everything() -> None:
    assert parse_docstring("One line.") == ("One line.", {})
    assert parse_docstring("") == ("", {})


def test_tool_context_is_hidden_by_name_or_annotation() -> None:
    def by_name(query: str, tool_context: Any) -> None: ...

    def by_annotation(query: str, ctx: ToolContext) -> None: ...

    for func in (by_name, by_annotation):
        assert (_params(func) or {})["properties"] == {"query": {"type": "string"}}
        assert (_params(func) or {})["required"] == ["query"]


def test_a_function_without_parameters_declares_none() -> None:
    def ping(tool_context: Any) -> str:
        """Pings."""
        return "pong"

    declaration = FunctionTool(ping).declaration()

    assert declaration.name == "ping"
    assert declaration.parameters_json_schema is None


def test_star_args_are_left_out_and_star_kwargs_open_the_schema() -> None:
    def f(a: int, *rest: int, **extra: Any) -> None: ...

    assert _params(f) == {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": True,
    }


def test_unannotated_parameters_take_their_defaults_type_or_any() -> None:
    def f(a, b=2, c="x", d=None) -> None: ...  # type: ignore[no-untyped-def]

    with pytest.warns(UntypedParameterWarning) as seen:
        props = (_params(f) or {})["properties"]

    assert {str(w.message).split("'")[1] for w in seen} == {"a", "d"}
    assert props["a"] == {}
    assert props["b"] == {"type": "integer", "default": 2}
    assert props["c"] == {"type": "string", "default": "x"}
    assert props["d"] == {"default": None}


def test_parameter_names_that_clash_with_pydantic_attributes_work() -> None:
    def f(json: str, model_config: int, _private: bool) -> None: ...

    assert set((_params(f) or {})["properties"]) == {"json", "model_config", "_private"}


def test_a_type_without_json_schema_is_a_configuration_error() -> None:
    class Opaque:
        pass

    def f(thing: Opaque) -> None: ...

    with pytest.raises(ConfigurationError, match="'f'"):
        FunctionTool(f)


def test_an_unresolvable_return_hint_is_tolerated_but_a_parameter_hint_is_not() -> None:
    def returns_local() -> LocalOnly:  # type: ignore[name-defined]  # noqa: F821
        ...

    def takes_local(x: LocalOnly) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    assert FunctionTool(returns_local).name == "returns_local"
    with pytest.raises(ConfigurationError, match="'x'"):
        FunctionTool(takes_local)


def test_names_come_from_the_function_or_the_override_and_are_checked() -> None:
    def lookup(q: str) -> None: ...

    class Finder:
        def __call__(self, q: str) -> None:
            """Finds things."""

        def search(self, q: str) -> None: ...

    assert FunctionTool(lookup).name == "lookup"
    assert FunctionTool(lookup, name="find").declaration().name == "find"
    assert FunctionTool(functools.partial(lookup)).name == "lookup"
    assert FunctionTool(Finder()).name == "Finder"
    assert FunctionTool(Finder()).description == "Finds things."
    assert FunctionTool(Finder().search).name == "search"
    with pytest.raises(ConfigurationError, match="invalid tool name"):
        FunctionTool(lambda q: q)
    with pytest.raises(ConfigurationError, match="invalid tool name"):
        FunctionTool(lookup, name="bad name")


def test_a_partial_hides_its_bound_parameters() -> None:
    def f(a: int, b: str) -> None: ...

    assert (_params(functools.partial(f, b="x")) or {})["required"] == ["a"]


def test_function_schema_reports_an_observable_return_annotation() -> None:
    def streams() -> Observable[int]: ...  # type: ignore[empty-body]

    def plain() -> int: ...  # type: ignore[empty-body]

    assert function_schema(streams).returns_observable
    assert not function_schema(plain).returns_observable


def test_a_parameter_without_a_type_hint_warns_naming_it() -> None:
    def lookup(city, limit=3):  # type: ignore[no-untyped-def]
        """Looks a city up."""

    with pytest.warns(UntypedParameterWarning, match="parameter 'city' of tool 'lookup'") as seen:
        function_schema(lookup)
    assert len(seen) == 1  # limit takes its default's type: no warning
    assert seen[0].filename == __file__  # points at the caller, not at adk_rx
