"""A minimal HTTP/1.1 client for the server benchmarks: keep-alive connections over asyncio
streams, JSON bodies out, ``Content-Length`` or chunked bodies in, read as bytes.

httpx costs the benchmark's client process about as much CPU per turn as adk-rx's server
spends serving it (parsing headers, decoding lines, building objects per line); on a
2-core machine the client then takes the CPU the server would use, and the figures measure
the client. This one does the least a client must: one write per request, the status line,
the headers it needs and the body's bytes, which the caller scans for SSE frames.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Connection", "HttpError", "count_frames"]


class HttpError(Exception):
    """A status other than the one expected, or a malformed answer."""


def count_frames(chunk: bytes, field: bytes = b"data:") -> int:
    """How many SSE lines in ``chunk`` start with ``field`` (frames never split across the
    server's writes: each write holds whole frames)."""
    return chunk.startswith(field) + chunk.count(b"\n" + field)


class Connection:
    """One keep-alive connection to ``url`` (``http://host:port``); one request at a time."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(
                self.host, self.port, limit=1 << 20
            )
        return self._reader, self._writer

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._reader = self._writer = None

    async def stream(self, method: str, path: str, body: Any = None) -> AsyncIterator[bytes]:
        """The answer's body in the pieces the server wrote; HttpError unless 200."""
        reader, writer = await self._open()
        payload = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        writer.write(head.encode() + payload)
        status_line = await reader.readline()
        raw_headers = await reader.readuntil(b"\r\n\r\n")
        status = int(status_line.split(b" ", 2)[1])
        headers = raw_headers.lower()
        if b"transfer-encoding: chunked" in headers:
            async for chunk in _chunks(reader):
                if status != 200:
                    continue  # read to the end, so the connection stays usable
                yield chunk
        else:
            length = int(headers.split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
            data = await reader.readexactly(length)
            if status == 200:
                yield data
        if b"connection: close" in headers:
            await self.close()
        if status != 200:
            raise HttpError(f"{method} {path}: {status}")

    async def json(self, method: str, path: str, body: Any = None) -> Any:
        """The answer's JSON; HttpError unless 200."""
        data = b"".join([piece async for piece in self.stream(method, path, body)])
        return json.loads(data)


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        size = int((await reader.readline()).split(b";", 1)[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers are sent
            return
        chunk = await reader.readexactly(size + 2)
        yield chunk[:-2]
