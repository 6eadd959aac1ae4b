"""A small MCP server for the tests, written with the mcp package's server API.

    python demo_server.py stdio MARK_FILE
    python demo_server.py http MARK_FILE PORT

MARK_FILE collects one line per event the tests look for ("cancelled slow", "started ...").
Files next to it switch on failures: ``MARK_FILE.die-on-list`` makes the next ``tools/list``
kill the process (the file is removed first, so a restarted server lists normally), and
``MARK_FILE.refuse-start`` makes the server exit at start (a server that cannot be restarted).
"""

from __future__ import annotations

import os
import sys
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Tool

MARK = sys.argv[2] if len(sys.argv) > 2 else os.devnull


class DemoServer(MCPServer):
    async def list_tools(self) -> list[Tool]:
        try:
            os.remove(f"{MARK}.die-on-list")
        except FileNotFoundError:
            return await super().list_tools()
        os._exit(4)


app = DemoServer("demo", log_level="CRITICAL")


def mark(line: str) -> None:
    with open(MARK, "a") as f:
        f.write(f"{line} {time.time()}\n")


@app.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@app.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@app.tool()
async def slow(seconds: float, tag: str = "") -> str:
    """Sleeps, then answers."""
    mark(f"started {tag}")
    try:
        await anyio.sleep(seconds)
    except BaseException:
        mark(f"cancelled {tag}")
        raise
    return "slept"


@app.tool()
async def steps(n: int, ctx: Context) -> str:
    """Works in n steps, reporting each."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return f"{n} steps done"


@app.tool()
def refuse(reason: str) -> str:
    """Always fails."""
    raise ValueError(reason)


@app.tool()
def crash() -> str:
    """Kills the server process."""
    os._exit(3)


if __name__ == "__main__":
    if os.path.exists(f"{MARK}.refuse-start"):
        sys.exit("the demo server refuses to start")
    if sys.argv[1] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[3]))
    else:
        app.run()
