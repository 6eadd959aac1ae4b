"""A local Gemini protocol server: generateContent, streamGenerateContent and cachedContents.

Enough of the Gemini API for google-genai's client, with Gemini's rules for cached contents:
a request naming ``cachedContent`` may not also carry a system instruction, tools or a tool
config, the cache must be for the same model, and an unknown or deleted cache is a 403
("CachedContent not found"). It counts what it serves (requests, request bytes, cache hits)
and reports prompt tokens (four characters a token) with ``cachedContentTokenCount`` for the
part served from a cache. Answers are scripted (``push``) or, by default, ``Answer N.``.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


@dataclass
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def _tokens(*values: Any) -> int:
    """Four characters a token of the text and tool declarations in ``values``."""
    chars = 0
    for value in values:
        if value is None:
            continue
        if isinstance(value, dict) and "parts" in value:
            chars += sum(len(p.get("text", "")) for p in value["parts"])
        elif isinstance(value, list):
            chars += sum(_tokens(item) * 4 for item in value)
        else:
            chars += len(json.dumps(value))
    return chars // 4


@dataclass
class GeminiProtocolServer:
    """The server; serve it with ``tests.models._fakes.serving``."""

    url: str = ""
    requests: list[Request] = field(default_factory=list)
    caches: dict[str, dict[str, Any]] = field(default_factory=dict)
    replies: deque[list[dict[str, Any]]] = field(default_factory=deque)
    cache_hits: int = 0
    caches_created: int = 0
    caches_deleted: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def push(self, *parts: dict[str, Any]) -> None:
        """The model's parts for the next generate request."""
        self.replies.append(list(parts))

    def drop(self, name: str) -> None:
        """Forgets a cache, as Gemini does when it expires."""
        self.caches.pop(name, None)

    def generate_requests(self) -> list[Request]:
        return [r for r in self.requests if "generatecontent" in r.path.lower()]

    @property
    def bytes_sent(self) -> int:
        """Request bytes received, cache creations included."""
        return sum(len(r.body) for r in self.requests)

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = Request(scope["method"], scope["path"], body)
        with self._lock:
            self.requests.append(request)
            status, answer, stream = self._answer(request)
        if stream and status == 200:
            data = f"data: {json.dumps(answer)}\n\n".encode()
            await send(_start(200, "text/event-stream"))
        else:
            data = json.dumps(answer).encode()
            await send(_start(status, "application/json"))
        await send({"type": "http.response.body", "body": data})

    def _answer(self, request: Request) -> tuple[int, Any, bool]:
        path = request.path.removeprefix("/v1beta/")
        if path == "cachedContents" and request.method == "POST":
            return self._create(request.json())
        if path.startswith("cachedContents/") and request.method == "DELETE":
            self.caches_deleted += 1 if self.caches.pop(path, None) is not None else 0
            return 200, {}, False
        if path.startswith("models/") and ":" in path:
            model, method = path.removeprefix("models/").split(":", 1)
            if method in ("generateContent", "streamGenerateContent"):
                status, answer = self._generate(model, request.json())
                return status, answer, method == "streamGenerateContent"
        return 404, _error(404, f"no route {request.method} {request.path}"), False

    def _create(self, body: dict[str, Any]) -> tuple[int, Any, bool]:
        self.caches_created += 1
        name = f"cachedContents/c{self.caches_created}"
        tokens = _tokens(body.get("systemInstruction"), body.get("tools"), body.get("contents"))
        self.caches[name] = {**body, "tokens": tokens}
        answer = {
            "name": name,
            "model": body["model"],
            "expireTime": "2099-01-01T00:00:00Z",
            "usageMetadata": {"totalTokenCount": tokens},
        }
        return 200, answer, False

    def _generate(self, model: str, body: dict[str, Any]) -> tuple[int, Any]:
        cached_tokens = 0
        name = body.get("cachedContent")
        if name is not None:
            cache = self.caches.get(name)
            if cache is None:
                return 403, _error(403, "CachedContent not found (or permission denied)")
            if cache["model"].removeprefix("models/") != model:
                return 400, _error(400, "Model used by GenerateContent and CachedContent differ")
            if any(k in body for k in ("systemInstruction", "tools", "toolConfig")):
                return 400, _error(
                    400,
                    "CachedContent can not be used with GenerateContent request setting "
                    "system_instruction, tools or tool_config.",
                )
            self.cache_hits += 1
            cached_tokens = cache["tokens"]
        prompt = cached_tokens + _tokens(
            body.get("systemInstruction"), body.get("tools"), body.get("contents")
        )
        turn = len(self.generate_requests())
        parts = self.replies.popleft() if self.replies else [{"text": f"Answer {turn}."}]
        usage: dict[str, Any] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": 3,
            "totalTokenCount": prompt + 3,
        }
        if cached_tokens:
            usage["cachedContentTokenCount"] = cached_tokens
        answer = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
            "usageMetadata": usage,
            "modelVersion": model,
        }
        return 200, answer


def _error(code: int, message: str) -> dict[str, Any]:
    status = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"}[code]
    return {"error": {"code": code, "message": message, "status": status}}


def _start(status: int, content_type: str) -> dict[str, Any]:
    return {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", content_type.encode())],
    }
