"""Reading a request body: bounded in bytes, time and shape before it is parsed.

A body costs the server in proportion to what it holds, not to its size: 8 MB of empty
parts is ~700,000 objects for ``json.loads`` and then for pydantic, seconds of CPU on the
event loop that every other request waits behind. So a body is taken in three steps, each
bounded before the next one starts:

1. **read** within ``Limits.body_timeout`` seconds (408 past it: a client trickling one
   byte a second holds nothing but its connection) and ``Limits.max_body_bytes`` (413); a
   client that leaves mid-body is refused as well, not logged as a server error;
2. **measured** by :func:`measure_json`, one regex pass that counts array elements and
   object members and tracks nesting, stopping at ``Limits.max_json_items`` (413) or
   ``Limits.max_json_depth`` (400) - whatever follows is never looked at;
3. **parsed** by ``json.loads`` only once it is known to be small in items and shallow.

Bodies larger than :data:`INLINE_BYTES` are measured and parsed on a worker thread, so the
event loop keeps answering while they are. A smaller one is decoded in place: a typical
body of a few hundred bytes takes ~15 us, less than the ~120 us of the hop, and 16 KiB of
nothing but items at most ~4 ms.

Measured on a loaded 2-core machine (CPU time): refusing an 8 MB body of empty parts,
lists, numbers or strings costs 20-35 ms (the pass stops at the 100,000th item), where
parsing it in full cost 0.1-0.9 s for ``json.loads`` and 7-27 s for pydantic. Taking an
8 MB body within the limits costs 40-120 ms, during which ``/health`` answered within
16-77 ms.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from typing import Any

from starlette.requests import ClientDisconnect, Request

from ..errors import BodyTimeoutError, BodyTooLargeError, RequestRejectedError
from ..limits import Limits

__all__ = ["INLINE_BYTES", "decode_json", "measure_json", "read_json"]

INLINE_BYTES = 16 * 1024

# One match: a run of text that holds no structural character outside a string (strings,
# even an unterminated one, are consumed whole), then the structural character that ends it
# (empty only at the end of the body). Every match is anchored where the previous one ended,
# so the pass is linear and no string's content is ever seen as structure.
_STEP = re.compile(r'(?:[^][{},"]++|"(?:[^"\\]++|\\.)*+"?)*+([][{},]?)', re.DOTALL)
# A \uD800-\uDFFF escape: the only way a lone surrogate gets into a parsed string.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


async def read_json(request: Request, limits: Limits) -> Any:
    """The request's JSON body, checked (an empty body reads as None).

    Raises:
        BodyTimeoutError: the body did not arrive within ``limits.body_timeout``.
        BodyTooLargeError: more than ``limits.max_body_bytes`` bytes or
            ``limits.max_json_items`` items.
        RequestRejectedError: it is not standard JSON in UTF-8, is nested too deep, or
            holds a string that is not valid Unicode.
    """
    raw = await _read_body(request, limits)
    if len(raw) > INLINE_BYTES:
        return await asyncio.to_thread(decode_json, raw, limits)
    return decode_json(raw, limits)


async def _read_body(request: Request, limits: Limits) -> bytes:
    limit = limits.max_body_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(limits.body_timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(chunk)
    except ClientDisconnect as exc:
        # Nobody is left to answer; refused like any bad body, so nothing is logged as a
        # server error.
        raise RequestRejectedError("the client left before its body arrived") from exc
    except TimeoutError as exc:
        raise BodyTimeoutError(
            f"the body did not arrive within {limits.body_timeout:g} seconds "
            f"({size} bytes came); send it faster or raise the server's body timeout"
        ) from exc
    return b"".join(chunks)


def decode_json(raw: str | bytes, limits: Limits) -> Any:
    """Parses a body (or a WebSocket text frame) already read and bounded in size: measured
    first, then ``json.loads`` (an empty one reads as None).

    Raises:
        BodyTooLargeError: more than ``limits.max_json_items`` items.
        RequestRejectedError: not UTF-8, not standard JSON, too deep, or a lone surrogate.
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise RequestRejectedError(f"the body is not UTF-8: {exc}") from exc
    if not text.strip():
        return None
    measure_json(text, limits)
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError as exc:  # not reached after measure_json; kept as a backstop
        raise _too_deep(limits) from exc
    except ValueError as exc:  # JSONDecodeError, the non-finite numbers below
        raise RequestRejectedError(f"the body is not JSON: {exc}") from exc
    if _SURROGATE_ESCAPE.search(text):
        _check_unicode(data)
    return data


def measure_json(text: str, limits: Limits) -> None:
    """Counts the items of a JSON text and its nesting, stopping at the first limit passed.

    An item is an array element or an object member (each comma and each opened array or
    object counts one). Text that is not JSON is measured as far as it goes; ``json.loads``
    refuses it afterwards, having parsed no more than what was measured.

    Raises:
        BodyTooLargeError: more than ``limits.max_json_items`` items.
        RequestRejectedError: nested deeper than ``limits.max_json_depth``.
    """
    items = depth = 0
    for match in _STEP.finditer(text):
        char = match.group(1)
        if char == "[" or char == "{":
            depth += 1
            if depth > limits.max_json_depth:
                raise _too_deep(limits)
        elif char == "]" or char == "}":
            depth -= 1
            continue
        elif char != ",":
            continue  # the empty match at the end
        items += 1
        if items > limits.max_json_items:
            raise BodyTooLargeError(
                f"the body's JSON has more than {limits.max_json_items} items (array "
                "elements and object members, the server's limit)"
            )


def _check_unicode(data: Any) -> None:
    # Encoding is what fails on a lone surrogate (it cannot be written as UTF-8 to a store
    # or a reply); both steps run in C over a body already bounded in items.
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RequestRejectedError(
            "the body holds a string with a lone surrogate (\\ud800-\\udfff escape that is "
            "not part of a pair); it is not valid Unicode"
        ) from exc


def _too_large(limit: int) -> BodyTooLargeError:
    return BodyTooLargeError(f"the body is larger than {limit} bytes (the server's limit)")


def _too_deep(limits: Limits) -> RequestRejectedError:
    return RequestRejectedError(
        f"the body's JSON is nested deeper than {limits.max_json_depth} levels"
    )


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not standard JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value
