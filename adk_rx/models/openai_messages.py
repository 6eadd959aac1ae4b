"""LlmRequest <-> the OpenAI chat-completions wire format.

Requests: the system instruction becomes a ``system`` message; a model turn becomes an
``assistant`` message whose function calls are ``tool_calls`` (with ids); each function
response becomes a ``tool`` message with its ``tool_call_id``; thoughts and empty turns are
left out (several servers reject empty content). Calls that carry no id (a history written by
a provider without ids) get one, and their responses are paired with it by name, in order.

Responses: ``choices[0].message`` becomes the model content (``reasoning_content`` as a
thought part), ``finish_reason`` the genai finish reason, ``usage`` the usage metadata.
Anything that does not have the documented shape is a ``ModelError`` with status
``"invalid_response"``, never a half-read response.
"""

from __future__ import annotations

import base64
import json
from collections import defaultdict, deque
from collections.abc import Mapping
from typing import Any

from google.genai import types

from adk_rx.errors import ModelError
from adk_rx.events import new_call_id
from adk_rx.models.aggregation import finish_error
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.response_metadata import (
    average_logprob,
    citations_from_openai,
    logprobs_from_openai,
)

__all__ = [
    "FINISH_REASONS",
    "body_from_request",
    "finish_reason_from_openai",
    "function_call_part",
    "invalid_response",
    "parameters_schema",
    "response_from_completion",
    "usage_from_openai",
]

FINISH_REASONS = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "function_call": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}


def invalid_response(provider: str, detail: str) -> ModelError:
    """The error for a provider answer that does not have the expected shape."""
    return ModelError(f"{provider} sent an invalid response: {detail}", status="invalid_response")


def body_from_request(llm_request: LlmRequest, model: str, *, stream: bool) -> dict[str, Any]:
    """The JSON body of a ``/chat/completions`` request."""
    body: dict[str, Any] = {"model": model, "messages": _messages(llm_request)}
    tools = [_tool(d) for d in llm_request.function_declarations()]
    if tools:
        body["tools"] = tools
        choice = _tool_choice(llm_request.config.tool_config)
        if choice is not None:
            body["tool_choice"] = choice
    body.update(_generation_options(llm_request.config))
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def _messages(llm_request: LlmRequest) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    system = llm_request.system_instruction_text()
    if system:
        messages.append({"role": "system", "content": system})
    # Calls without an id get one here; their responses find it by function name, in order.
    unanswered: defaultdict[str, deque[str]] = defaultdict(deque)
    for content in llm_request.contents:
        parts = content.parts or []
        if content.role == "model":
            message = _assistant_message(parts, unanswered)
            if message is not None:
                messages.append(message)
            continue
        user_parts: list[dict[str, Any]] = []
        for part in parts:
            if part.function_response is not None:
                messages.append(_tool_message(part.function_response, unanswered))
            elif part.text and not part.thought:
                user_parts.append({"type": "text", "text": part.text})
            elif part.inline_data is not None and part.inline_data.data is not None:
                mime = part.inline_data.mime_type or "application/octet-stream"
                url = f"data:{mime};base64,{base64.b64encode(part.inline_data.data).decode()}"
                user_parts.append({"type": "image_url", "image_url": {"url": url}})
        if not user_parts:
            continue
        if all(p["type"] == "text" for p in user_parts):
            text = "\n".join(p["text"] for p in user_parts)
            messages.append({"role": "user", "content": text})
        else:
            messages.append({"role": "user", "content": user_parts})
    return messages


def _assistant_message(
    parts: list[types.Part], unanswered: defaultdict[str, deque[str]]
) -> dict[str, Any] | None:
    text = "".join(p.text for p in parts if p.text and not p.thought)
    tool_calls: list[dict[str, Any]] = []
    for part in parts:
        call = part.function_call
        if call is None or not call.name:
            continue
        call_id = call.id or new_call_id()
        if not call.id:
            unanswered[call.name].append(call_id)
        tool_calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.args or {})},
            }
        )
    if not text and not tool_calls:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def _tool_message(
    response: types.FunctionResponse, unanswered: defaultdict[str, deque[str]]
) -> dict[str, Any]:
    call_id = response.id
    if not call_id:
        pending = unanswered[response.name or ""]
        call_id = pending.popleft() if pending else new_call_id()
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": json.dumps(response.response or {}, default=str),
    }


def parameters_schema(declaration: types.FunctionDeclaration) -> Any:
    """The JSON schema of a function's parameters (an empty object schema when it has none)."""
    if declaration.parameters_json_schema is not None:
        return declaration.parameters_json_schema
    if declaration.parameters is not None:
        return declaration.parameters.json_schema.model_dump(
            mode="json", exclude_none=True, by_alias=True
        )
    return {"type": "object", "properties": {}}


def _tool(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    parameters = parameters_schema(declaration)
    function: dict[str, Any] = {"name": declaration.name, "parameters": parameters}
    if declaration.description:
        function["description"] = declaration.description
    return {"type": "function", "function": function}


def _tool_choice(tool_config: types.ToolConfig | None) -> Any:
    calling = tool_config.function_calling_config if tool_config else None
    if calling is None or calling.mode is None:
        return None
    mode = str(getattr(calling.mode, "value", calling.mode)).upper()
    if mode == "NONE":
        return "none"
    if mode == "ANY":
        names = calling.allowed_function_names or []
        if len(names) == 1:
            return {"type": "function", "function": {"name": names[0]}}
        return "required"
    return "auto"


def _generation_options(config: types.GenerateContentConfig) -> dict[str, Any]:
    options: dict[str, Any] = {
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_tokens": config.max_output_tokens,
        "stop": config.stop_sequences or None,
        "seed": config.seed,
        "presence_penalty": config.presence_penalty,
        "frequency_penalty": config.frequency_penalty,
    }
    if config.response_mime_type == "application/json":
        schema = config.response_json_schema
        if schema is None and isinstance(config.response_schema, types.Schema):
            schema = config.response_schema.json_schema.model_dump(
                mode="json", exclude_none=True, by_alias=True
            )
        options["response_format"] = (
            {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
            if schema is not None
            else {"type": "json_object"}
        )
    return {k: v for k, v in options.items() if v is not None}


def finish_reason_from_openai(reason: Any) -> str | None:
    """The genai finish reason for an OpenAI ``finish_reason``."""
    if not isinstance(reason, str) or not reason:
        return None
    return FINISH_REASONS.get(reason, reason.upper())


def usage_from_openai(usage: Any) -> types.GenerateContentResponseUsageMetadata | None:
    """Token counts from an OpenAI ``usage`` object."""
    if not isinstance(usage, Mapping):
        return None
    completion_details: Any = usage.get("completion_tokens_details") or {}
    prompt_details: Any = usage.get("prompt_tokens_details") or {}
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=usage.get("prompt_tokens"),
        candidates_token_count=usage.get("completion_tokens"),
        total_token_count=usage.get("total_tokens"),
        thoughts_token_count=completion_details.get("reasoning_tokens"),
        cached_content_token_count=prompt_details.get("cached_tokens"),
    )


def function_call_part(provider: str, call_id: Any, name: Any, arguments: Any) -> types.Part:
    """A function-call part from an OpenAI tool call; bad shapes raise ``invalid_response``."""
    if not isinstance(name, str) or not name:
        raise invalid_response(provider, f"a tool call without a function name: {name!r}")
    if arguments is None or arguments == "":
        args: Any = {}
    elif isinstance(arguments, Mapping):
        args = dict(arguments)  # some servers send an object instead of a JSON string
    elif isinstance(arguments, str):
        try:
            args = json.loads(arguments)
        except ValueError:
            raise invalid_response(
                provider, f"tool call {name!r} has arguments that are not JSON: {arguments!r}"
            ) from None
    else:
        raise invalid_response(provider, f"tool call {name!r} has arguments {arguments!r}")
    if not isinstance(args, dict):
        raise invalid_response(provider, f"tool call {name!r} arguments are not an object")
    call_id = call_id if isinstance(call_id, str) and call_id else new_call_id()
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def response_from_completion(provider: str, body: Any) -> LlmResponse:
    """An LlmResponse from a non-streamed ``chat.completion`` body."""
    if isinstance(body, Mapping) and body.get("error"):
        error: Any = body["error"]
        message = error.get("message") if isinstance(error, Mapping) else error
        raise ModelError(f"{provider} reported an error: {message}", status="provider_error")
    choices = body.get("choices") if isinstance(body, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise invalid_response(provider, "no choices in the completion")
    choice: Mapping[str, Any] = choices[0]
    message: Any = choice.get("message")
    if not isinstance(message, Mapping):
        raise invalid_response(provider, "the first choice has no message")
    parts: list[types.Part] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append(types.Part(text=reasoning, thought=True))
    text = message.get("content")
    if isinstance(text, str) and text:
        parts.append(types.Part(text=text))
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        raise invalid_response(provider, f"tool_calls is not a list: {tool_calls!r}")
    for call in tool_calls:
        function: Any = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            raise invalid_response(provider, f"a tool call of unknown shape: {call!r}")
        parts.append(
            function_call_part(
                provider, call.get("id"), function.get("name"), function.get("arguments")
            )
        )
    reason = finish_reason_from_openai(choice.get("finish_reason"))
    error_pair = finish_error(reason, None)
    logprobs = logprobs_from_openai(choice.get("logprobs"))
    return LlmResponse(
        content=types.Content(role="model", parts=parts) if parts else None,
        turn_complete=True,
        finish_reason=reason,
        usage_metadata=usage_from_openai(body.get("usage")),
        model_version=body.get("model") if isinstance(body.get("model"), str) else None,
        error_code=error_pair[0] if error_pair else None,
        error_message=error_pair[1] if error_pair else None,
        citation_metadata=citations_from_openai(message.get("annotations")),
        logprobs_result=logprobs,
        avg_logprobs=average_logprob(logprobs),
    )
