"""Cancelling an invocation: concurrent ``:cancel`` requests never answer "had ended" (200)
while the run is still going, and the session is free once any of them says so."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.cli.server_support import live_server, user_text

pytestmark = pytest.mark.asyncio


async def test_concurrent_cancels_answer_200_only_once_the_run_has_ended(
    make_app: Callable[..., Any], app_name: str
):
    with live_server(make_app()) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            for round_ in range(5):
                sid = f"s{round_}"
                base = f"/apps/{app_name}/users/u1/sessions/{sid}"
                await http.post(f"/apps/{app_name}/users/u1/sessions", json={"session_id": sid})
                started = await http.post(
                    f"{base}/invocations",
                    json={"new_message": user_text("slow 400 0.005"), "streaming": True},
                )
                url = f"{base}/invocations/{started.json()['invocation_id']}"

                async def cancel_then_check(url: str, base: str) -> tuple[int, str, list[dict]]:
                    answer = await http.post(f"{url}:cancel")
                    events = (await http.get(base)).json()["events"]
                    return answer.status_code, answer.json()["status"], events

                results = await asyncio.gather(*(cancel_then_check(url, base) for _ in range(8)))
                assert any(code == 202 for code, _, _ in results)
                for code, status, events in results:
                    if code == 200:  # "had ended": the end is stored, the session is free
                        assert status == "cancelled"
                        assert events[-1].get("errorCode") == "CANCELLED"
                    else:
                        assert code == 202
                await http.get(f"{url}/events")  # until it ends
                assert (await http.get(url)).json()["status"] == "cancelled"
                again = await http.post(
                    f"{base}/invocations", json={"new_message": user_text("hi")}
                )
                assert again.status_code == 202, again.text  # not 409
