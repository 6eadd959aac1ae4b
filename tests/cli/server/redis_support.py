"""Redis for tests: the server ``ADK_RX_TEST_REDIS_URL`` names, and a key prefix per cluster.

Unset variable: the Redis tests skip and say why. Set but unreachable: they fail, so a CI job
that is meant to test Redis cannot pass without it. Every cluster of test servers gets its own
key prefix, and its keys are deleted afterwards, so parallel runs never see each other.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis

ENV = "ADK_RX_TEST_REDIS_URL"


def redis_url() -> str:
    """The server's URL from the environment, or a skip with the reason."""
    url = os.environ.get(ENV, "").strip()
    if not url:
        pytest.skip(f"{ENV} is not set; set it (e.g. redis://127.0.0.1:6379/0) to run these")
    try:
        with redis.Redis.from_url(url, socket_connect_timeout=5) as client:
            client.ping()
    except redis.RedisError as exc:
        pytest.fail(f"{ENV} is set but Redis is unreachable: {exc}")
    return url


@contextmanager
def key_prefix() -> Iterator[str]:
    """A fresh key prefix; every key under it is deleted afterwards."""
    prefix = f"adk_rx_test_{uuid.uuid4().hex[:12]}"
    try:
        yield prefix
    finally:
        with redis.Redis.from_url(redis_url()) as client:
            keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
            if keys:
                client.delete(*keys)


def kill_connections(prefix: str) -> int:
    """Drops every Redis connection of the servers using ``prefix`` (``CLIENT KILL``);
    returns how many were dropped. The Redis server itself keeps running."""
    killed = 0
    with redis.Redis.from_url(redis_url(), decode_responses=True) as client:
        for info in client.client_list():
            if info.get("name", "").startswith(f"adk-rx:{prefix}:"):
                killed += int(client.execute_command("CLIENT", "KILL", "ID", info["id"]))
    return killed
