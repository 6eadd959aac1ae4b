"""LlmRequest <-> the Anthropic Messages API.

Requests: the system instruction becomes ``system``; a model turn becomes an ``assistant``
message whose function calls are ``tool_use`` blocks; function responses become
``tool_result`` blocks of a ``user`` message (``is_error`` when the response is only an
``error``); images and PDFs go as base64 (or URL) sources. Claude's own thinking comes back
as it left: a thought part with a signature is a ``thinking`` block, a thought part with
only a signature is ``redacted_thinking``. Thoughts Claude did not sign (another model's)
are left out, as Claude refuses them. An attachment Claude cannot read becomes a short
note saying so: the session stays usable and the stored part is untouched.

With a ``cache_config`` on the request, ``cache_control`` marks the last tool, the system
instruction and the last block of the stable history (:mod:`adk_rx.models.context_cache`).

Responses: content blocks become parts (a signature is kept as the part's
``thought_signature``), ``stop_reason`` a genai finish reason, and ``usage`` the usage
metadata: ``prompt_token_count`` counts every input token billed (cache reads and writes
included), ``cached_content_token_count`` the cache reads. The genai usage type has no
field for cache writes, so their count rides in ``custom_metadata`` (stored with the event).
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from typing import Any

from google.genai import types

from adk_rx.errors import ConfigurationError
from adk_rx.events import new_call_id
from adk_rx.models.context_cache import (
    ContextCacheConfig,
    estimate_prefix_tokens,
    stable_prefix_count,
)
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.openai_messages import parameters_schema

__all__ = [
    "CACHE_WRITE_TOKENS",
    "STOP_REASONS",
    "finish_reason_from_anthropic",
    "params_from_request",
    "part_from_block",
    "usage_from_anthropic",
]

_log = logging.getLogger("adk_rx.models")

CACHE_WRITE_TOKENS = "cache_creation_input_tokens"
"""The ``custom_metadata`` key holding the input tokens a call wrote to Claude's cache."""

STOP_REASONS = {
    "end_turn": "STOP",
    "stop_sequence": "STOP",
    "tool_use": "STOP",
    "pause_turn": "STOP",
    "max_tokens": "MAX_TOKENS",
    "model_context_window_exceeded": "MAX_TOKENS",
    "refusal": "SAFETY",
}

_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_TOOL_ID = re.compile(r"[a-zA-Z0-9_-]+")
_UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})


def params_from_request(llm_request: LlmRequest, model: str, max_tokens: int) -> dict[str, Any]:
    """The keyword arguments of ``client.messages.create`` for ``llm_request``."""
    config = llm_request.config
    ids = _CallIds()
    contents = llm_request.contents
    stable = stable_prefix_count(contents)
    head = _messages(contents[:stable], ids)
    messages = head + _messages(contents[stable:], ids)
    params: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": config.max_output_tokens or max_tokens,
    }
    system = llm_request.system_instruction_text()
    if system:
        params["system"] = system
    tools = [_tool(d) for d in llm_request.function_declarations()]
    if tools:
        params["tools"] = tools
        choice = _tool_choice(config.tool_config)
        if choice is not None:
            params["tool_choice"] = choice
    thinking = _thinking(config.thinking_config)
    if thinking is not None:
        params["thinking"] = thinking
    params.update(_sampling(config, thinks=thinking is not None and thinking["type"] != "disabled"))
    cache = llm_request.cache_config
    if cache is not None and estimate_prefix_tokens(config, contents[:stable]) >= cache.min_tokens:
        _mark_cache(params, head, cache)
    return params


def _mark_cache(
    params: dict[str, Any], head: list[dict[str, Any]], cache: ContextCacheConfig
) -> None:
    """Breakpoints after the tools, the system instruction and the stable history."""
    control: dict[str, Any] = {"type": "ephemeral"}
    if cache.ttl_seconds >= 3600:
        control["ttl"] = "1h"
    if params.get("tools"):
        params["tools"][-1]["cache_control"] = control
    if params.get("system"):
        params["system"] = [{"type": "text", "text": params["system"], "cache_control": control}]
    for message in reversed(head):
        for block in reversed(message["content"]):
            if block["type"] not in _UNCACHEABLE:
                block["cache_control"] = control
                return


class _CallIds:
    """Tool-use ids as Claude accepts them, consistent between a call and its result.

    Calls without an id (history from a provider that sends none) get one, and their
    results are paired with it by name, in order.
    """

    def __init__(self) -> None:
        self._renamed: dict[str, str] = {}
        self._unanswered: defaultdict[str, deque[str]] = defaultdict(deque)

    def call(self, call_id: str | None, name: str) -> str:
        if not call_id:
            fresh = new_call_id()
            self._unanswered[name].append(fresh)
            return fresh
        return self._valid(call_id)

    def result(self, call_id: str | None, name: str) -> str:
        if not call_id:
            pending = self._unanswered[name]
            return pending.popleft() if pending else new_call_id()
        return self._valid(call_id)

    def _valid(self, call_id: str) -> str:
        if _TOOL_ID.fullmatch(call_id):
            return call_id
        return self._renamed.setdefault(call_id, new_call_id())


def _messages(contents: Sequence[types.Content], ids: _CallIds) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for content in contents:
        role = "assistant" if content.role == "model" else "user"
        blocks = [b for p in content.parts or [] if (b := _block(p, role, ids)) is not None]
        if blocks:  # Claude refuses a message without content
            messages.append({"role": role, "content": blocks})
    return messages


def _block(part: types.Part, role: str, ids: _CallIds) -> dict[str, Any] | None:
    if part.thought:
        return _thinking_block(part)
    if part.function_call is not None and part.function_call.name:
        call = part.function_call
        return {
            "type": "tool_use",
            "id": ids.call(call.id, call.name or ""),
            "name": call.name,
            "input": dict(call.args or {}),
        }
    if part.function_response is not None:
        return _tool_result(part.function_response, ids)
    if part.text:
        return {"type": "text", "text": part.text}
    if role == "user" and (part.inline_data is not None or part.file_data is not None):
        return _attachment(part)
    if part.executable_code is not None:
        return {"type": "text", "text": f"```python\n{part.executable_code.code or ''}\n```"}
    if part.code_execution_result is not None:
        output = part.code_execution_result.output or ""
        return {"type": "text", "text": f"Execution result:\n```\n{output}\n```"}
    return None


def _thinking_block(part: types.Part) -> dict[str, Any] | None:
    try:
        signature = part.thought_signature.decode() if part.thought_signature else ""
    except UnicodeDecodeError:
        return None  # another model's signature: Claude would refuse the block
    if not signature:
        return None
    if part.text is None:
        return {"type": "redacted_thinking", "data": signature}
    return {"type": "thinking", "thinking": part.text, "signature": signature}


def _tool_result(response: types.FunctionResponse, ids: _CallIds) -> dict[str, Any]:
    data = dict(response.response or {})
    if set(data) == {"result"} and isinstance(data["result"], str):
        text = data["result"]
    else:
        text = json.dumps(data, default=str, ensure_ascii=False)
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": ids.result(response.id, response.name or ""),
        "content": text,
    }
    if set(data) == {"error"}:
        block["is_error"] = True
    return block


def _attachment(part: types.Part) -> dict[str, Any]:
    if part.inline_data is not None:
        mime = (part.inline_data.mime_type or "").split(";")[0].strip().lower()
        data = part.inline_data.data or b""
        source: dict[str, Any] = {
            "type": "base64",
            "media_type": mime,
            "data": base64.b64encode(data).decode(),
        }
    else:
        assert part.file_data is not None
        mime = (part.file_data.mime_type or "").split(";")[0].strip().lower()
        uri = part.file_data.file_uri or ""
        source = {"type": "url", "url": uri}
        if not uri.startswith(("https://", "http://")):
            mime = "unreachable"
    if mime in _IMAGE_TYPES:
        return {"type": "image", "source": source}
    if mime == "application/pdf":
        return {"type": "document", "source": source}
    _log.warning("Claude cannot read an attachment of type %r; it is left out", mime)
    return {"type": "text", "text": f"[an attachment of type {mime!r} that Claude cannot read]"}


def _tool(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": declaration.name,
        "input_schema": parameters_schema(declaration),
    }
    if declaration.description:
        tool["description"] = declaration.description
    return tool


def _tool_choice(tool_config: types.ToolConfig | None) -> dict[str, Any] | None:
    calling = tool_config.function_calling_config if tool_config else None
    if calling is None or calling.mode is None:
        return None
    mode = str(getattr(calling.mode, "value", calling.mode)).upper()
    if mode == "NONE":
        return {"type": "none"}
    if mode == "ANY":
        names = calling.allowed_function_names or []
        if len(names) == 1:
            return {"type": "tool", "name": names[0]}
        return {"type": "any"}
    return {"type": "auto"}


def _thinking(config: types.ThinkingConfig | None) -> dict[str, Any] | None:
    """genai's thinking budget as Claude's ``thinking``: 0 off, < 0 adaptive, else a budget."""
    if config is None:
        return None
    budget = config.thinking_budget
    if budget is None:
        if not config.include_thoughts:
            return None
        raise ConfigurationError(
            "Claude needs an explicit thinking_budget: 0 turns thinking off, -1 lets the model "
            "choose (adaptive thinking), a number >= 1024 is a budget in tokens"
        )
    if budget == 0:
        return {"type": "disabled"}
    if budget < 0:
        return {"type": "adaptive", "display": "summarized"}
    return {"type": "enabled", "budget_tokens": budget}


def _sampling(config: types.GenerateContentConfig, *, thinks: bool) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if config.stop_sequences:
        options["stop_sequences"] = config.stop_sequences
    if thinks:  # Claude refuses sampling settings while it thinks
        return options
    # The SDK no longer names them (current models fix them); older models still take them,
    # so a value the application set is sent as it is.
    sampling = {
        "temperature": config.temperature,
        "top_p": config.top_p,
        "top_k": int(config.top_k) if config.top_k is not None else None,
    }
    extra = {k: v for k, v in sampling.items() if v is not None}
    if extra:
        options["extra_body"] = extra
    return options


def finish_reason_from_anthropic(reason: Any) -> str | None:
    """The genai finish reason for an Anthropic ``stop_reason``."""
    if not isinstance(reason, str) or not reason:
        return None
    return STOP_REASONS.get(reason, reason.upper())


def part_from_block(block: Any) -> types.Part | None:
    """A part from a complete content block (an SDK object); None for server-side blocks."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return types.Part(text=block.text)
    if kind == "thinking":
        return types.Part(
            text=block.thinking, thought=True, thought_signature=_sig(block.signature)
        )
    if kind == "redacted_thinking":
        return types.Part(thought=True, thought_signature=_sig(block.data))
    if kind == "tool_use":
        args = block.input if isinstance(block.input, Mapping) else {}
        call = types.FunctionCall(id=block.id, name=block.name, args=dict(args))
        return types.Part(function_call=call)
    _log.info("a Claude content block of type %r is not kept", kind)
    return None


def _sig(signature: str | None) -> bytes | None:
    return signature.encode() if signature else None


def usage_from_anthropic(
    usage: Any,
) -> tuple[types.GenerateContentResponseUsageMetadata, dict[str, Any] | None]:
    """The usage metadata of a Claude ``usage``, and the custom metadata of its cache writes."""
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    prompt = (getattr(usage, "input_tokens", None) or 0) + read + written
    output = getattr(usage, "output_tokens", None) or 0
    details = getattr(usage, "output_tokens_details", None)
    thinking = min(getattr(details, "thinking_tokens", None) or 0, output)
    metadata = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=output - thinking,
        thoughts_token_count=thinking or None,
        cached_content_token_count=read or None,
        total_token_count=prompt + output,
    )
    return metadata, ({CACHE_WRITE_TOKENS: written} if written else None)
