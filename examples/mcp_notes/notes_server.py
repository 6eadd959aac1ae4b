"""A small local MCP server: a notebook kept in memory, spoken to over stdio.

Run by the agent next to it (``agent.py``) as a subprocess; try it alone with
``python notes_server.py`` (it waits for MCP messages on stdin).
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("notes", log_level="ERROR")
notes: list[str] = ["buy coffee", "call the bank"]  # a notebook that is not empty


@server.tool()
def add_note(text: str) -> str:
    """Saves a note.

    Args:
        text: what to remember.
    """
    notes.append(text)
    return f"saved note {len(notes)}"


@server.tool()
def list_notes() -> list[str]:
    """Lists every saved note, oldest first."""
    return notes


@server.tool()
async def index_notes(ctx: Context) -> str:
    """Indexes the notes for search, reporting progress note by note."""
    for number, _ in enumerate(notes, 1):
        await anyio.sleep(0.05)
        await ctx.report_progress(number, len(notes), f"indexed note {number}")
    return f"indexed {len(notes)} notes"


if __name__ == "__main__":
    server.run()
