"""The broker's costs as OpenTelemetry metrics, read with the SDK's InMemoryMetricReader."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import redis as redis_client
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from adk_rx import SqlSessionService
from adk_rx.cli.server import create_app
from adk_rx.cli.server.cluster.broker import Broker
from adk_rx.cli.server.cluster.broker_liveness import Liveness
from tests.cli.server.conftest import BASE
from tests.cli.server.redis_support import key_prefix, redis_url
from tests.cli.server_support import parse_frames, unique_app, user_text, write_agents

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]


def _collected(reader: InMemoryMetricReader) -> dict[str, int]:
    data = reader.get_metrics_data()
    assert data is not None
    return {
        metric.name: sum(point.value for point in metric.data.data_points)  # type: ignore[union-attr]
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name.startswith("adk_rx.broker.")
    }


async def test_writes_batches_events_bytes_and_skipped_events_are_exported(tmp_path: Path):
    app_name = unique_app("metrics")
    root = write_agents(tmp_path / "agents", app_name)
    sessions = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    with key_prefix() as prefix:
        broker = Broker(redis_url(), prefix=prefix, meter_provider=meters)
        other = Broker(redis_url(), prefix=prefix)
        app = create_app(root, session_service=sessions, broker=broker)
        base = f"/apps/{app_name}/users/u1/sessions/s1/invocations"
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
            created = await http.post(
                f"/apps/{app_name}/users/u1/sessions", json={"session_id": "s1"}
            )
            assert created.is_success
            # Read only here: its events are not published.
            unread = (await http.post(base, json={"new_message": user_text("hi")})).json()
            frames = parse_frames((await http.get(f"{base}/{unread['invocation_id']}/events")).text)
            unread_events = len([f for f in frames if f.id is not None])
            # Read elsewhere: the reader's want reaches this server's publisher.
            body = {"new_message": user_text("slow 40 0.01"), "streaming": True}
            started = (await http.post(base, json=body)).json()
            iid = started["invocation_id"]
            await other.want(iid)
            await Liveness(broker, app.state.server.registry, sessions, None).apply_stored_wants()
            frames = parse_frames((await http.get(f"{base}/{iid}/events")).text)
            assert json.loads(frames[-1].data or "{}")["status"] == "completed"
        await broker.close()  # the publishers write their ends first
        await other.close()
        with redis_client.Redis.from_url(redis_url(), decode_responses=True) as client:
            published = [f for _, f in client.xrange(f"{prefix}:inv:{iid}:events") if "e" in f]
    sessions.close()

    counted = _collected(reader)
    assert unread_events >= 1 and len(published) > 40  # the partial events and the final one
    assert counted == {
        "adk_rx.broker.writes": 4 + counted["adk_rx.broker.batches"],  # 2 announcements, 2 ends
        "adk_rx.broker.batches": counted["adk_rx.broker.batches"],
        "adk_rx.broker.events": len(published),
        "adk_rx.broker.bytes": sum(len(f["e"].encode()) for f in published),
        "adk_rx.broker.events_skipped": unread_events,
    }
    assert 1 <= counted["adk_rx.broker.batches"] <= len(published)
    assert broker.counts.events == len(published)


RESUMABLE_APP = """
from adk_rx import App, LlmAgent, ResumabilityConfig
from adk_rx.testing import ScriptedLlm

app = App(
    name=__name__.split(".")[0],
    root_agent=LlmAgent(name="a", model=ScriptedLlm([["one ", "two"]] * 10)),
    resumability_config=ResumabilityConfig(is_resumable=True),
)
"""


async def test_a_resumable_app_s_run_is_published_though_nobody_reads_it_elsewhere(
    tmp_path: Path,
):
    # A server that resumes it after its owner died goes on with this stream and cursors.
    app_name = unique_app("resumable")
    (tmp_path / "agents" / app_name).mkdir(parents=True)
    (tmp_path / "agents" / app_name / "agent.py").write_text(RESUMABLE_APP)
    sessions = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    with key_prefix() as prefix:
        broker = Broker(redis_url(), prefix=prefix)
        app = create_app(tmp_path / "agents", session_service=sessions, broker=broker)
        base = f"/apps/{app_name}/users/u1/sessions/s1/invocations"
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
            created = await http.post(
                f"/apps/{app_name}/users/u1/sessions", json={"session_id": "s1"}
            )
            assert created.is_success
            body = {"new_message": user_text("hi"), "streaming": True}
            iid = (await http.post(base, json=body)).json()["invocation_id"]
            frames = parse_frames((await http.get(f"{base}/{iid}/events")).text)
        await broker.close()
        with redis_client.Redis.from_url(redis_url(), decode_responses=True) as client:
            entries = client.xrange(f"{prefix}:inv:{iid}:events")
    sessions.close()
    local = [(f.id, json.loads(f.data or "")["id"]) for f in frames if f.id is not None]
    published = [(int(i.partition("-")[2]), f["i"]) for i, f in entries if "e" in f]
    assert len(local) >= 3 and published == local  # the chunks too, with their cursors
    assert "end" in entries[-1][1]
    assert broker.counts.events_skipped == 0
