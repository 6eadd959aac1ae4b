"""An MCP server for the extras tests: it tells the headers each call came with, has a
tool worth confirming, and serves resources (text and binary).

    python extras_server.py sse|streamable-http PORT
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("extras", log_level="CRITICAL")
deleted: list[str] = []


@app.tool()
def whoami(ctx: Context) -> dict[str, str]:
    """The headers this call came with."""
    headers = {k.lower(): v for k, v in (ctx.headers or {}).items()}
    return {
        "authorization": headers.get("authorization", ""),
        "tenant": headers.get("x-tenant", ""),
    }


@app.tool()
def delete(item: str) -> str:
    """Deletes an item."""
    deleted.append(item)
    return f"deleted {item}; {len(deleted)} so far"


@app.resource("notes://welcome", mime_type="text/plain")
def welcome() -> str:
    """The welcome note."""
    return "Welcome to the notes server."


@app.resource("notes://logo", mime_type="image/png")
def logo() -> bytes:
    """A tiny logo."""
    return b"\x89PNG\r\n\x1a\n-logo-"


if __name__ == "__main__":
    app.run(sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]))  # type: ignore[arg-type]
