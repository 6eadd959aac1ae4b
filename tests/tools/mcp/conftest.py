"""Real MCP servers for the tests: the demo server as a stdio subprocess or on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from adk_rx.tools.mcp import McpToolset, StdioConnectionParams, StreamableHTTPConnectionParams

SERVER = str(Path(__file__).with_name("demo_server.py"))

MakeToolset = Callable[..., McpToolset]


@pytest.fixture(scope="module")
def mark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file the demo servers of this module write what they saw into (tagged lines)."""
    path = tmp_path_factory.mktemp("mcp") / "mark.txt"
    path.touch()
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen[bytes], limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert process.poll() is None, "the MCP server exited early"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the MCP server did not listen in time")


@pytest.fixture(scope="module")
def http_url(mark: Path) -> Iterator[str]:
    """The demo server on streamable HTTP, in its own process, shared by the module."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, SERVER, "http", str(mark), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def stdio_params(mark: Path, timeout: float = 10.0) -> StdioConnectionParams:
    return StdioConnectionParams(
        server_params=StdioServerParameters(
            command=sys.executable, args=[SERVER, "stdio", str(mark)]
        ),
        timeout=timeout,
    )


@pytest.fixture(params=["stdio", "http"])
def make_toolset(request: pytest.FixtureRequest, mark: Path) -> Iterator[MakeToolset]:
    """Builds toolsets on one transport; closes them after the test."""
    made: list[McpToolset] = []

    def make(timeout: float = 10.0, **kwargs: object) -> McpToolset:
        if request.param == "stdio":
            params: object = stdio_params(mark, timeout)
        else:
            url = request.getfixturevalue("http_url")
            params = StreamableHTTPConnectionParams(url=url, timeout=timeout)
        toolset = McpToolset(connection_params=params, **kwargs)  # type: ignore[arg-type]
        made.append(toolset)
        return toolset

    yield make
    for toolset in made:
        toolset.close()
