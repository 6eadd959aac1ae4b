"""Record model traffic to JSONL, and replay it offline.

``RecordingLlm(inner, path)`` passes every call through to ``inner`` and, when the call ends,
appends one JSON line: the request's fingerprint, whether it streamed, every response
(partials included) and the error if it failed. A call disposed before it ended is not
recorded: there is nothing complete to replay.

``ReplayLlm(path)`` answers each call with the first unused recorded call whose fingerprint
equals the request's, so a session recorded against a real model runs again offline, in any
order the agents make their calls. The fingerprint is the model-facing part of the request:
the contents (function-call ids left out, since each run may invent its own), the system
instruction and the declared tool names. A request that matches nothing raises
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
    a demo, a test that runs the same conversation twice). A streamed recording replayed
    without ``stream`` gives only its complete (non-partial) responses; a recorded error is
    raised again as a ``ModelError`` with the recorded message and status. A request that
    the recording does not cover raises ``ReplayMismatchError`` naming the user messages the
    recording was made with.

    Args:
        path: the JSONL file written by ``RecordingLlm``.
        model: the name this model reports (default: the first recorded model's).
        reuse: serve recorded calls again instead of once each.
    """

    def __init__(
        self, path: str | os.PathLike[str], model: str | None = None, *, reuse: bool = False
    ) -> None:
        self.path = Path(path)
        self._records = _load(self.path)
        super().__init__(model=model or str(self._records[0].get("model", "")))
        self.reuse = reuse
        self._used = [False] * len(self._records)
        self._lock = threading.Lock()

    @property
    def recorded_user_messages(self) -> list[str]:
        """The texts of the user messages the recording holds, in order, each once."""
        seen: list[str] = []
        for record in self._records:
            for content in record.get("request", {}).get("contents", []):
                parts = content.get("parts", [])
                if content.get("role") != "user" or _is_context_note(parts):
                    continue
                for part in parts:
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
        with self._lock:
            if self.reuse:
                unused = list(range(len(self._records)))
            else:
                unused = [i for i, used in enumerate(self._used) if not used]
            for index in unused:
                if self._records[index].get("request") == fingerprint:
                    self._used[index] = True
                    return self._records[index]
        if not unused:
            raise ReplayMismatchError(
                f"{self.path}: all {len(self._records)} recorded calls were already served; "
                "the run made more model calls than the recording (ReplayLlm(..., reuse=True) "
                "serves them again)" + self._coverage()
            )
        nearest = self._records[unused[0]].get("request", {})
        diff = "\n".join(
            difflib.unified_diff(
                _pretty(nearest).splitlines(),
                _pretty(fingerprint).splitlines(),
                fromfile="recorded (next unused call)",
                tofile="this request",
                lineterm="",
                n=2,
            )
        )
        raise ReplayMismatchError(
            f"{self.path}: no recorded call matches this request "
            f"({len(unused)} unused of {len(self._records)}).{self._coverage()}\n{diff}"
        )

    def _coverage(self) -> str:
        messages = self.recorded_user_messages
        if not messages:
            return ""
        listed = "\n".join(f"  - {m!r}" for m in messages)
        return f"\nThe recording answers these user messages (ask them, in this order):\n{listed}"


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
