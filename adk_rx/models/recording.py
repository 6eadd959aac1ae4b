"""Record model traffic to JSONL, and replay it offline.

``RecordingLlm(inner, path)`` passes every call through to ``inner`` and, when the call ends,
appends one JSON line: the request's fingerprint, whether it streamed, every response
(partials included) and the error if it failed. A call disposed before it ended is not
recorded: there is nothing complete to replay.

``ReplayLlm(path)`` answers each call with the first unused recorded call whose fingerprint
equals the request's, so a session recorded against a real model runs again offline, in any
order the agents make their calls. The fingerprint is the model-facing part of the request:
the contents (function-call ids left out, since each run may invent its own), the system
instruction and the declared tool names. When no whole request matches, the turn is matched:
the contents from the user's latest message on, with the same tools (the same system
instruction preferred), so a question recorded in a session of its own is answered wherever
it comes in a longer conversation. A request that matches nothing raises
:class:`~adk_rx.errors.ReplayMismatchError` with a diff against the closest candidate.

One line::

    {"model": "gemini-2.5-flash", "stream": false,
     "request": {"systemInstruction": "...", "tools": ["get_weather"], "contents": [...]},
     "responses": [{"content": {...}, "finishReason": "STOP"}]}
"""

from __future__ import annotations

import difflib
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import reactivex as rx
from reactivex import Observable, abc

from adk_rx.errors import ConfigurationError, ModelError, ReplayMismatchError
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse

__all__ = ["RecordingLlm", "ReplayLlm", "request_fingerprint"]

_ID_KEYS = frozenset({"id"})


def request_fingerprint(llm_request: LlmRequest) -> dict[str, Any]:
    """What a replayed request must match: contents, system instruction, tool names."""
    contents = [
        _without_call_ids(c.model_dump(mode="json", exclude_none=True, by_alias=True))
        for c in llm_request.contents
    ]
    return {
        "systemInstruction": llm_request.system_instruction_text(),
        "tools": sorted(d.name or "" for d in llm_request.function_declarations()),
        "contents": contents,
    }


def _without_call_ids(value: Any) -> Any:
    """The JSON value with the ``id`` of every function call and response removed."""
    if isinstance(value, dict):
        return {
            k: (
                {ik: iv for ik, iv in _without_call_ids(v).items() if ik not in _ID_KEYS}
                if k in ("functionCall", "functionResponse") and isinstance(v, dict)
                else _without_call_ids(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_without_call_ids(v) for v in value]
    return value


class RecordingLlm(BaseLlm):
    """Passes calls to ``inner`` and appends each finished call to a JSONL file.

    Args:
        inner: the model that answers.
        path: the JSONL file; created if missing, appended to if present.
    """

    def __init__(self, inner: BaseLlm, path: str | os.PathLike[str]) -> None:
        super().__init__(model=inner.model)
        self.inner = inner
        self.path = Path(path)
        self._lock = threading.Lock()

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Calls ``inner``; the responses pass through unchanged as they arrive."""

        def subscribe(
            observer: abc.ObserverBase[LlmResponse], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            # Taken at subscription: a callback may edit the request after the call.
            fingerprint = request_fingerprint(llm_request)
            responses: list[LlmResponse] = []

            def on_next(response: LlmResponse) -> None:
                responses.append(response)
                observer.on_next(response)

            def on_error(error: Exception) -> None:
                self._write(fingerprint, stream, responses, error)
                observer.on_error(error)

            def on_completed() -> None:
                self._write(fingerprint, stream, responses, None)
                observer.on_completed()

            return self.inner.generate_content(llm_request, stream).subscribe(
                on_next, on_error, on_completed, scheduler=scheduler
            )

        return rx.create(subscribe)

    def _write(
        self,
        fingerprint: dict[str, Any],
        stream: bool,
        responses: list[LlmResponse],
        error: Exception | None,
    ) -> None:
        record: dict[str, Any] = {
            "model": self.model,
            "stream": stream,
            "request": fingerprint,
            "responses": [r.to_dict() for r in responses],
        }
        if error is not None:
            record["error"] = {
                "type": type(error).__name__,
                "message": str(error),
                "status": getattr(error, "status", None),
                "retryable": bool(getattr(error, "retryable", False)),
            }
        line = json.dumps(record, ensure_ascii=False, sort_keys=True)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as file:
                file.write(line + "\n")


class ReplayLlm(BaseLlm):
    """Serves the calls of a :class:`RecordingLlm` file back, offline.

    Each recorded call is served once, unless ``reuse`` is set: then a recorded call answers
    every request that matches it, so one recording serves any number of sessions (a server,
    a demo, a test that runs the same conversation twice). A request is matched whole first,
    then by its turn (the contents from the user's latest message on, with the same tools),
    so a question recorded in a session of its own is answered wherever it comes in a
    conversation. A streamed recording replayed without ``stream`` gives only its complete
    (non-partial) responses; a recorded error is raised again as a ``ModelError`` with the
    recorded message and status. A request that the recording does not cover raises
    ``ReplayMismatchError`` naming the user messages the recording was made with, unless a
    ``fallback`` is given: then the model answers it with that text followed by the recorded
    user messages, and the conversation goes on (an offline demo that never errors).

    Args:
        path: the JSONL file written by ``RecordingLlm``.
        model: the name this model reports (default: the first recorded model's).
        reuse: serve recorded calls again instead of once each.
        fallback: the answer to a request the recording does not cover, instead of an error.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        model: str | None = None,
        *,
        reuse: bool = False,
        fallback: str | None = None,
    ) -> None:
        self.path = Path(path)
        self._records = _load(self.path)
        super().__init__(model=model or str(self._records[0].get("model", "")))
        self.reuse = reuse
        self.fallback = fallback
        self._turns = [_turn(r.get("request", {})) for r in self._records]
        self._used = [False] * len(self._records)
        self._lock = threading.Lock()

    @property
    def recorded_user_messages(self) -> list[str]:
        """The texts of the user messages the recording holds, in order, each once."""
        seen: list[str] = []
        for record in self._records:
            for content in record.get("request", {}).get("contents", []):
                if not _is_user_message(content):
                    continue
                for part in content.get("parts", []):
                    text = part.get("text")
                    if isinstance(text, str) and text and text not in seen:
                        seen.append(text)
        return seen

    @property
    def remaining(self) -> int:
        """How many recorded calls have not been served yet."""
        with self._lock:
            return self._used.count(False)

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Replays the first unused recorded call that matches ``llm_request``."""

        def replay(_: abc.SchedulerBase | None) -> Observable[LlmResponse]:
            # Inside defer: the recorded call is taken at subscription, once per subscription.
            record = self._take(request_fingerprint(llm_request))
            responses = [LlmResponse.from_dict(r) for r in record.get("responses", [])]
            if not stream:
                responses = [r for r in responses if not r.partial]
            error = record.get("error")
            tail: Observable[LlmResponse] = (
                rx.throw(_recorded_error(error)) if isinstance(error, Mapping) else rx.empty()
            )
            return rx.concat(rx.from_iterable(responses), tail)

        return rx.defer(replay)

    def _take(self, fingerprint: dict[str, Any]) -> dict[str, Any]:
        turn = _turn(fingerprint)
        with self._lock:
            if self.reuse:
                open_ = list(range(len(self._records)))
            else:
                open_ = [i for i, used in enumerate(self._used) if not used]
            # Whole request, then the turn, then the turn under another system instruction
            # (one templated from state that an earlier turn of the session changed).
            tiers = (
                lambda i: self._records[i].get("request") == fingerprint,
                lambda i: self._turns[i] == turn,
                lambda i: _same_turn_and_tools(self._turns[i], turn),
            )
            for matches in tiers:
                for index in open_:
                    if matches(index):
                        self._used[index] = True
                        return self._records[index]
            served = self._used.count(True)
        if not open_:
            raise ReplayMismatchError(
                f"{self.path}: all {len(self._records)} recorded calls were already served; "
                "the run made more model calls than the recording (ReplayLlm(..., reuse=True) "
                "serves them again)" + self._coverage()
            )
        if self.fallback is not None:
            return self._fallback_record()
        nearest = self._turns[self._nearest(open_, turn)]
        diff = "\n".join(
            difflib.unified_diff(
                _pretty(nearest).splitlines(),
                _pretty(turn).splitlines(),
                fromfile="recorded (closest turn)",
                tofile="this request's turn",
                lineterm="",
                n=2,
            )
        )
        raise ReplayMismatchError(
            f"{self.path}: no recorded call matches this request ({served} of the "
            f"{len(self._records)} recorded calls served so far).{self._coverage()}\n{diff}"
        )

    def _fallback_record(self) -> dict[str, Any]:
        listed = "\n".join(f"- {m}" for m in self.recorded_user_messages)
        text = f"{self.fallback}\n{listed}" if listed else str(self.fallback)
        content = {"role": "model", "parts": [{"text": text}]}
        return {"responses": [{"content": content, "turn_complete": True}]}

    def _nearest(self, candidates: list[int], turn: dict[str, Any]) -> int:
        """The candidate with the same tools and user message, else the same tools."""

        def closeness(index: int) -> tuple[bool, bool]:
            recorded = self._turns[index]
            return (
                recorded.get("tools") == turn.get("tools"),
                recorded.get("contents", [])[:1] == turn.get("contents", [])[:1],
            )

        return max(candidates, key=closeness)

    def _coverage(self) -> str:
        messages = self.recorded_user_messages
        if not messages:
            return ""
        listed = "\n".join(f"  - {m!r}" for m in messages)
        return (
            "\nThe recording answers these user messages (each turn is matched by its user "
            f"message, wherever it comes in the session):\n{listed}"
        )


def _turn(fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint cut to the current turn: the contents from the latest user message."""
    contents = list(fingerprint.get("contents", []))
    starts = [i for i, content in enumerate(contents) if _is_user_message(content)]
    return {**fingerprint, "contents": contents[starts[-1] if starts else 0 :]}


def _same_turn_and_tools(recorded: Mapping[str, Any], turn: Mapping[str, Any]) -> bool:
    return recorded.get("contents") == turn.get("contents") and recorded.get("tools") == turn.get(
        "tools"
    )


def _is_user_message(content: Any) -> bool:
    """A message the user typed: user role, not a function response nor a context note."""
    if not isinstance(content, Mapping) or content.get("role") != "user":
        return False
    parts = content.get("parts", [])
    if not parts or _is_context_note(parts):
        return False
    return not any(isinstance(p, Mapping) and "functionResponse" in p for p in parts)


def _is_context_note(parts: list[Any]) -> bool:
    # Other agents' turns reach a model as a user-role "For context:" message; not the user's.
    return bool(parts) and isinstance(parts[0], Mapping) and parts[0].get("text") == "For context:"


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False)


def _recorded_error(error: Mapping[str, Any]) -> ModelError:
    status = error.get("status")
    return ModelError(
        f"{error.get('type', 'Error')} (recorded): {error.get('message', '')}",
        status=status if isinstance(status, int | str) else None,
        retryable=bool(error.get("retryable", False)),
    )


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read the model recording {path}: {exc}") from exc
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ConfigurationError(f"{path}:{number} is not a JSON line: {exc}") from exc
        if not isinstance(record, dict) or "request" not in record:
            raise ConfigurationError(f"{path}:{number} is not a recorded model call")
        records.append(record)
    if not records:
        raise ConfigurationError(f"the model recording {path} holds no calls")
    return records
