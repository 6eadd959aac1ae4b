"""MCP tool-turn benchmark: adk_rx's cost per turn beyond the MCP round trips themselves.

One turn: the model (a ScriptedLlm) calls the MCP tool ``list_notes`` of the example server
(``examples/mcp_notes/notes_server.py``, over stdio), then answers with text. adk_rx lists the
server's tools at each of the two model steps, so a turn makes three MCP requests
(``tools/list``, ``tools/call``, ``tools/list``). The bare ``mcp`` client makes the same three
requests to another process of the same server, in the same run. The difference is what
adk_rx adds per turn (Runner, session store, events, the hop onto the runtime loop). Sessions
are connected and warm before the clock starts. Prints medians over 5 runs.

    .venv/bin/python benchmarks/mcp_tool_turn.py [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from google.genai import types
from mcp import ClientSession, StdioServerParameters, stdio_client
from reactivex import operators as ops

from adk_rx import InMemorySessionService, LlmAgent, Runner
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm
from adk_rx.tools.mcp import McpToolset, StdioConnectionParams

RUNS = 5
SERVER = Path(__file__).resolve().parents[1] / "examples" / "mcp_notes" / "notes_server.py"
PARAMS = StdioServerParameters(command=sys.executable, args=[str(SERVER)])


def _script(turns: int) -> list[object]:
    call = types.FunctionCall(name="list_notes", args={})
    content = types.Content(role="model", parts=[types.Part(function_call=call)])
    return [item for _ in range(turns) for item in (LlmResponse(content=content), "noted")]


def adk_rx_runs(turns: int) -> list[tuple[float, float]]:
    """(wall, CPU) microseconds per turn through Runner.run_async, one pair per run."""
    toolset = McpToolset(connection_params=StdioConnectionParams(server_params=PARAMS))
    llm = ScriptedLlm(_script(turns * (RUNS + 1)))
    agent = LlmAgent(name="notes", model=llm, tools=[toolset])
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    message = types.Content(role="user", parts=[types.Part(text="my notes?")])

    def turn(session_id: str) -> None:
        events = (
            runner.run_async(user_id="u", session_id=session_id, new_message=message)
            .pipe(ops.to_list())
            .run()
        )
        if len(events) != 3:
            raise SystemExit(f"expected 3 events per turn, got {events}")

    results: list[tuple[float, float]] = []
    try:
        for run in range(RUNS + 1):  # the first run connects and warms up; not counted
            for n in range(turns):
                service.create_session(app_name="bench", user_id="u", session_id=f"{run}-{n}").run()
            start, cpu = time.perf_counter(), time.process_time()
            for n in range(turns):
                turn(f"{run}-{n}")
            if run:
                wall = (time.perf_counter() - start) / turns * 1e6
                results.append((wall, (time.process_time() - cpu) / turns * 1e6))
    finally:
        runner.close()
    return results


async def _bare(turns: int) -> list[tuple[float, float]]:
    results: list[tuple[float, float]] = []
    async with stdio_client(PARAMS) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for run in range(RUNS + 1):
            start, cpu = time.perf_counter(), time.process_time()
            for _ in range(turns):
                await session.list_tools()
                await session.call_tool("list_notes", {})
                await session.list_tools()
            if run:
                wall = (time.perf_counter() - start) / turns * 1e6
                results.append((wall, (time.process_time() - cpu) / turns * 1e6))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    turns = parser.parse_args().turns
    bare = asyncio.run(_bare(turns))
    ours = adk_rx_runs(turns)
    bare_wall, bare_cpu = (statistics.median(r[i] for r in bare) for i in (0, 1))
    wall, cpu = (statistics.median(r[i] for r in ours) for i in (0, 1))
    print(f"MCP tool turn over stdio, {turns} turns per run, median of {RUNS} runs")
    print("                                     wall us/turn   client CPU us/turn")
    print(f"  bare mcp client, same 3 requests   {bare_wall:12.0f}   {bare_cpu:18.0f}")
    print(f"  adk_rx Runner turn                 {wall:12.0f}   {cpu:18.0f}")
    print(f"  adk_rx beyond the MCP round trips  {wall - bare_wall:12.0f}   {cpu - bare_cpu:18.0f}")


if __name__ == "__main__":
    main()
