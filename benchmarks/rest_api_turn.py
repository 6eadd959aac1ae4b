"""A turn whose tool calls a REST API on loopback: RestApiTool vs a hand-written tool.

The API is adk_rx's local OAuth2 server and Notes API (``adk_rx.testing.oauth_server``) in a
thread; its ``GET /api/me`` needs a bearer token, fetched once with the client-credentials
grant. Three turns, each on a new in-memory session, the model answering at once (a call,
then text):

* ``RestApiTool``: an OpenAPIToolset over the server's document, OAuth2 client credentials
  (the token comes from the credential service after the first call);
* ``FunctionTool``: a plain function doing the same GET with httpx and the same token (a
  connection per call, as RestApiTool makes; one TLS context built once, as it does);
* ``no tool``: the model answers text at once (the turn's own cost).

Reported: p50 / p90 per turn and what RestApiTool adds over the hand-written tool.

    .venv/bin/python benchmarks/rest_api_turn.py [--turns 300]
"""

from __future__ import annotations

import argparse
import os
import ssl
import statistics
import time

import httpx
from google.genai import types
from reactivex import operators as ops
from report import print_table, progress

from adk_rx import FunctionTool, InMemoryRunner, LlmAgent, LlmResponse, Runner
from adk_rx.auth import AuthCredential, AuthCredentialTypes, InMemoryCredentialService, OAuth2Auth
from adk_rx.testing import ScriptedLlm
from adk_rx.testing.oauth_server import LocalOAuthServer, serve
from adk_rx.tools.openapi import OpenAPIToolset

WARMUP = 30


def _model(turns: int, with_call: bool) -> ScriptedLlm:
    call = types.Part(function_call=types.FunctionCall(name="get_me", args={}))
    script: list[object] = []
    for _ in range(turns):
        if with_call:
            script.append(LlmResponse(content=types.Content(role="model", parts=[call])))
        script.append("done")
    return ScriptedLlm(script)  # pyright: ignore[reportArgumentType]


def latencies(runner: Runner, turns: int) -> list[float]:
    out: list[float] = []
    service = runner.session_service
    for n in range(WARMUP + turns):
        sid = service.create_session(app_name=runner.app_name, user_id="u").run().id
        started = time.perf_counter()
        runner.run_async(user_id="u", session_id=sid, new_message="who?").pipe(ops.to_list()).run()
        if n >= WARMUP:
            out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    total = WARMUP + args.turns
    rows: dict[str, list[float]] = {}
    with serve() as server:
        spec = server.openapi_spec()
        scheme = {
            "type": "oauth2",
            "flows": {"clientCredentials": {"tokenUrl": server.url + "/token", "scopes": {}}},
        }
        client = AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(client_id=server.client_id, client_secret=server.client_secret),
        )
        toolset = OpenAPIToolset(
            spec_dict=spec, auth_scheme=scheme, auth_credential=client, tool_filter=["get_me"]
        )
        progress(f"RestApiTool: {args.turns} turns")
        runner = InMemoryRunner(
            agent=LlmAgent(name="bench", model=_model(total, True), tools=[toolset]),
            app_name="bench",
            credential_service=InMemoryCredentialService(),
        )
        rows["RestApiTool (OpenAPIToolset, client credentials)"] = latencies(runner, args.turns)
        token = httpx.post(
            server.url + "/token",
            data={"grant_type": "client_credentials"},
            auth=(server.client_id, server.client_secret),
        ).json()["access_token"]
        tls = ssl.create_default_context()

        def get_me() -> dict:
            """Who is signed in (a connection per call, as RestApiTool makes)."""
            headers = {"Authorization": f"Bearer {token}"}
            return httpx.get(server.url + "/api/me", headers=headers, verify=tls).json()

        progress(f"FunctionTool with httpx: {args.turns} turns")
        runner = InMemoryRunner(
            agent=LlmAgent(name="bench", model=_model(total, True), tools=[FunctionTool(get_me)]),
            app_name="bench",
        )
        rows["FunctionTool doing the same GET"] = latencies(runner, args.turns)
        progress(f"no tool: {args.turns} turns")
        runner = InMemoryRunner(
            agent=LlmAgent(name="bench", model=_model(total, False)), app_name="bench"
        )
        rows["no tool"] = latencies(runner, args.turns)
        # One token for the toolset (then kept in the credential service), one by hand.
        assert isinstance(server, LocalOAuthServer) and server.client_grants == 2
    print_table(
        ["turn", "p50 ms", "p90 ms"],
        [
            [name, f"{statistics.median(v):.2f}", f"{statistics.quantiles(v, n=10)[-1]:.2f}"]
            for name, v in rows.items()
        ],
    )
    names = list(rows)
    added = statistics.median(rows[names[0]]) - statistics.median(rows[names[1]])
    print(f"RestApiTool adds {added:.2f} ms p50 over the hand-written tool")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at the end: {load} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
