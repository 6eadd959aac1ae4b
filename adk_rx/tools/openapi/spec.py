"""An OpenAPI 3 document as operations a model can call (google-adk's parsing rules).

    load_spec(text, "json" | "yaml")  -> the document (bounded in size and depth)
    operations(document)              -> one Operation per path and method

Internal ``$ref``s are resolved (a cycle is cut where it closes); an external one is left
as it is. Each operation's parameters come from ``parameters`` (path-level ones included,
an operation-level one of the same name and place wins) and from the JSON request body: an
object body gives one parameter per property, an array body one named ``array``, any other
body one named ``body``. Python-side names are snake_case, keywords get a ``param_`` prefix,
duplicates a ``_0``, ``_1`` suffix; the tool name is the snake_case operationId (or path and
method), at most 60 characters. These are google-adk 2.13's rules, so both declare the same
tools for one document.
"""

from __future__ import annotations

import copy
import json
import keyword
import re
from dataclasses import dataclass, field
from typing import Any

from adk_rx.errors import ConfigurationError

__all__ = ["MAX_SPEC_CHARS", "ApiParam", "Operation", "load_spec", "operations", "snake_case"]

MAX_SPEC_CHARS = 8 * 1024 * 1024
"""A larger document is refused before it is parsed."""

_METHODS = ("get", "post", "put", "delete", "patch", "head", "options", "trace")
_MAX_NAME = 60
_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_DEFAULT_NAMES = {
    "body": "body",
    "query": "query_param",
    "path": "path_param",
    "header": "header_param",
    "cookie": "cookie_param",
}


def snake_case(text: str) -> str:
    """``getUserByID`` -> ``get_user_by_id`` (google-adk's conversion)."""
    text = re.sub(r"[^a-zA-Z0-9]+", "_", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    return re.sub(r"_+", "_", text.lower()).strip("_")


@dataclass
class ApiParam:
    """One argument of an operation: its wire name and place, and its Python-side name."""

    name: str
    location: str  # path | query | header | cookie | body
    schema: dict[str, Any]
    required: bool = False
    py_name: str = ""

    def __post_init__(self) -> None:
        if not self.py_name:
            name = snake_case(self.name)
            if keyword.iskeyword(name):
                name = "param_" + name
            self.py_name = name or _DEFAULT_NAMES.get(self.location, "value")


@dataclass
class Operation:
    """One path and method of the document."""

    name: str
    description: str
    method: str
    base_url: str
    path: str
    params: list[ApiParam] = field(default_factory=list)
    body_kind: str = ""  # "object" | "array" | "value" | "" (no body)
    security_scheme: dict[str, Any] | None = None

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (the tool's declaration)."""
        return {
            "properties": {p.py_name: p.schema for p in self.params},
            "required": [p.py_name for p in self.params if p.required],
            "title": f"{self.operation_id}_Arguments",
            "type": "object",
        }

    operation_id: str = ""


def load_spec(text: str, spec_type: str = "json") -> dict[str, Any]:
    """Parses a JSON or YAML document (refused when over :data:`MAX_SPEC_CHARS`)."""
    if len(text) > MAX_SPEC_CHARS:
        raise ConfigurationError(f"the OpenAPI document is over {MAX_SPEC_CHARS} characters")
    if spec_type == "json":
        try:
            document = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ConfigurationError(f"the OpenAPI document is not JSON: {exc}") from None
    elif spec_type == "yaml":
        try:
            import yaml
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigurationError("YAML specs need PyYAML: pip install 'adk_rx[auth]'") from exc
        try:
            document = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError) as exc:
            raise ConfigurationError(f"the OpenAPI document is not YAML: {exc}") from None
    else:
        raise ConfigurationError(f"spec_str_type must be 'json' or 'yaml', got {spec_type!r}")
    if not isinstance(document, dict):
        raise ConfigurationError("the OpenAPI document is not an object")
    return document


def _resolve(document: dict[str, Any]) -> dict[str, Any]:
    """The document with internal ``$ref``s replaced by what they point to."""
    done: dict[str, Any] = {}

    def target(ref: str) -> Any:
        node: Any = document
        for part in ref.split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def walk(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#"):
                if ref in seen and ref not in done:  # a cycle: cut it here
                    return {k: v for k, v in node.items() if k != "$ref"}
                if ref in done:
                    return copy.deepcopy(done[ref])
                found = target(ref)
                if found is None:
                    return node
                resolved = walk(found, seen | {ref})
                done[ref] = resolved
                return copy.deepcopy(resolved)
            return {k: walk(v, seen) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        return node

    try:
        return walk(document, frozenset())
    except RecursionError:
        raise ConfigurationError("the OpenAPI document nests too deeply") from None


def _sanitize(node: Any, in_schema: bool = False) -> Any:
    """Schema ``type``s other than JSON schema's seven are dropped (as google-adk does)."""
    if isinstance(node, dict):
        if in_schema and "type" in node:
            kind = node["type"]
            if isinstance(kind, str):
                if kind.lower() in _TYPES:
                    node["type"] = kind.lower()
                else:
                    del node["type"]
            elif isinstance(kind, list):
                kept = list(dict.fromkeys(k.lower() for k in kind if isinstance(k, str)))
                kept = [k for k in kept if k in _TYPES]
                if kept:
                    node["type"] = kept
                else:
                    del node["type"]
        for key, value in node.items():
            node[key] = _sanitize(value, in_schema or key in ("schema", "schemas"))
        return node
    if isinstance(node, list):
        return [_sanitize(item, in_schema) for item in node]
    return node


def _scheme_name(security: Any) -> str:
    if not isinstance(security, list) or not security:
        return ""
    if any(not requirement for requirement in security):
        return ""  # an empty requirement: authentication is optional
    first = security[0]
    return next(iter(first), "") if isinstance(first, dict) else ""


def _body_params(body: Any) -> tuple[list[ApiParam], str]:
    if not isinstance(body, dict):
        return [], ""
    content = body.get("content")
    if not isinstance(content, dict) or not content:
        return [], ""
    media = next(iter(content.values()))
    schema = media.get("schema") if isinstance(media, dict) else None
    schema = schema if isinstance(schema, dict) else {}
    if schema.get("type") == "object":
        required = set(schema.get("required") or [])
        properties = schema.get("properties") or {}
        params = [
            ApiParam(name, "body", prop if isinstance(prop, dict) else {}, name in required)
            for name, prop in properties.items()
        ]
        return params, "object"
    if schema.get("type") == "array":
        return [ApiParam("array", "body", schema)], "array"
    kind = (
        schema.get("oneOf") or schema.get("anyOf") or schema.get("allOf") or not schema.get("type")
    )
    name = "body" if kind else ""
    return [ApiParam(name, "body", schema)], "value"


def operations(document: dict[str, Any]) -> list[Operation]:
    """One :class:`Operation` per path and method of the document."""
    document = _sanitize(_resolve(document))
    servers = document.get("servers") or []
    base_url = str(servers[0].get("url", "")) if servers and isinstance(servers[0], dict) else ""
    components = document.get("components") or {}
    schemes = components.get("securitySchemes") or {} if isinstance(components, dict) else {}
    default_scheme = _scheme_name(document.get("security"))
    found: list[Operation] = []
    for path, item in (document.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        for method in _METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            own = [p for p in op.get("parameters") or [] if isinstance(p, dict) and "name" in p]
            overridden = {(p["name"], p.get("in")) for p in own}
            shared = [
                p
                for p in item.get("parameters") or []
                if isinstance(p, dict)
                and "name" in p
                and (p["name"], p.get("in")) not in overridden
            ]
            params: list[ApiParam] = []
            for p in own + shared:
                declared = p.get("schema")
                schema: dict[str, Any] = declared if isinstance(declared, dict) else {}
                description = str(p.get("description") or "")
                # google-adk: the schema's description, else the parameter's, else "".
                schema = {**schema, "description": schema.get("description") or description}
                location = str(p.get("in") or "")
                required = location == "path" or bool(p.get("required"))
                params.append(ApiParam(str(p["name"]), location, schema, required))
            body, body_kind = _body_params(op.get("requestBody"))
            params += body
            counts: dict[str, int] = {}
            for param in params:
                if param.py_name in counts:
                    counts[param.py_name] += 1
                    param.py_name = f"{param.py_name}_{counts[param.py_name] - 1}"
                else:
                    counts[param.py_name] = 0
            operation_id = str(op.get("operationId") or snake_case(f"{path}_{method}"))
            scheme_name = _scheme_name(op.get("security"))
            if not scheme_name and op.get("security") is None:
                scheme_name = default_scheme
            scheme = schemes.get(scheme_name) if scheme_name else None
            found.append(
                Operation(
                    name=snake_case(operation_id)[:_MAX_NAME],
                    description=str(op.get("description") or op.get("summary") or ""),
                    method=method,
                    base_url=base_url,
                    path=str(path),
                    params=params,
                    body_kind=body_kind,
                    security_scheme=scheme if isinstance(scheme, dict) else None,
                    operation_id=operation_id,
                )
            )
    return found
