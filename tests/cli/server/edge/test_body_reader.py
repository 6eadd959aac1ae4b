"""Reading request bodies: measured before parsing, refused in milliseconds, cut off in time.

The measuring pass is tested as a function; what it protects (other requests never wait
behind a hostile body, a trickling body holds nothing) against a real server process.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from adk_rx.cli.server import Limits
from adk_rx.cli.server.edge.bodies import parse_run_body
from adk_rx.cli.server.edge.body_reader import decode_json, measure_json
from adk_rx.cli.server.errors import BodyTooLargeError, RequestRejectedError
from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import user_text, write_agents

pytestmark = pytest.mark.timeout(180)

EIGHT_MB = 8 * 1024 * 1024


# -- the measuring pass ---------------------------------------------------------------------
def test_items_are_counted_up_to_the_limit_and_one_more_is_refused():
    limits = Limits(max_json_items=4)
    measure_json('{"a": [1, 2], "b": 3}', limits)  # {, [, two commas: 4
    with pytest.raises(BodyTooLargeError, match="more than 4 items"):
        measure_json('{"a": [1, 2, 3], "b": 3}', limits)


def test_structure_inside_strings_is_not_counted():
    limits = Limits(max_json_items=1, max_json_depth=1)
    text = json.dumps({"t": 'a "quoted" [[[{{{,,,]]] \\ and \\" more'})
    measure_json(text, limits)
    assert decode_json(text.encode(), limits) == json.loads(text)


def test_nesting_is_tracked_to_the_depth_limit():
    limits = Limits(max_json_depth=64)
    measure_json("[" * 64 + "]" * 64, limits)
    with pytest.raises(RequestRejectedError, match="nested deeper than 64"):
        measure_json("[" * 65 + "]" * 65, limits)


def test_the_pass_stops_at_the_limit_without_reading_the_rest():
    # 2M items would take seconds to parse; the pass stops at the 100,001st.
    text = "[" + "[]," * 2_000_000 + "[]]"
    started = time.process_time()
    with pytest.raises(BodyTooLargeError):
        measure_json(text, Limits())
    assert time.process_time() - started < 2.0  # about 30 ms; a full parse takes seconds


def test_an_unterminated_string_is_measured_in_linear_time():
    text = '{"t": "' + "a" * 4_000_000  # a pass that retried at every position: 10**13 steps
    with pytest.raises(RequestRejectedError, match="not JSON"):
        decode_json(text.encode(), Limits())


@pytest.mark.parametrize(
    ("escaped", "taken"),
    [
        ('"\\ud800"', False),  # a lone high surrogate
        ('"x\\udc00"', False),  # a lone low one
        ('"\\ud83d\\ude00"', True),  # a pair: one emoji
        ('"\\\\ud800"', True),  # a backslash, then the letters ud800
    ],
)
def test_only_lone_surrogates_are_refused(escaped: str, taken: bool):
    raw = f'{{"t": {escaped}}}'.encode()
    if taken:
        assert decode_json(raw, Limits()) == json.loads(raw)
    else:
        with pytest.raises(RequestRejectedError, match="lone surrogate"):
            decode_json(raw, Limits())


def test_a_body_not_in_utf8_is_refused():
    # json.loads would guess UTF-16 from the zero bytes; the pass reads UTF-8 only.
    with pytest.raises(RequestRejectedError, match="not UTF-8"):
        decode_json('{"t": "x"}'.encode("utf-16"), Limits())


def test_the_part_count_is_checked_before_the_parts_are_built():
    # 50,000 parts are within the item limit; building each as a Part took 0.5 s.
    message = {"role": "user", "parts": [{"text": ""}] * 50_000}
    body = {"app_name": "a", "user_id": "u", "session_id": "s", "new_message": message}
    started = time.process_time()
    with pytest.raises(RequestRejectedError, match="50000 parts"):
        parse_run_body(body, Limits())
    assert time.process_time() - started < 0.1


# -- against a real server ------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("bodies")
    agents = write_agents(root / "agents", "chat")
    with api_server_process(agents, root, "--body-timeout", "1") as process:
        with httpx.Client(base_url=process.url, timeout=30) as http:
            for sid in ("big", "slow"):
                created = http.post("/apps/chat/users/u1/sessions", json={"session_id": sid})
                assert created.status_code == 200
        yield process


@dataclass
class HealthProbe:
    """Polls ``/health`` from a thread of its own and keeps the slowest answer's time."""

    url: str
    slowest: float = 0.0
    answered: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    answers: threading.Condition = field(default_factory=threading.Condition)

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as http:
            while not self.stop.is_set():
                started = time.perf_counter()
                assert http.get("/health").status_code == 200
                with self.answers:
                    self.slowest = max(self.slowest, time.perf_counter() - started)
                    self.answered += 1
                    self.answers.notify_all()
                self.stop.wait(0.02)  # pacing, so the probe does not compete for the CPU

    def wait_past(self, count: int) -> None:
        """Waits until the probe has answered more than ``count`` times."""
        with self.answers:
            assert self.answers.wait_for(lambda: self.answered > count, timeout=60)


@contextlib.contextmanager
def probing(server: ServerProcess) -> Iterator[HealthProbe]:
    probe = HealthProbe(server.url)
    thread = threading.Thread(target=probe.run, name="health-probe", daemon=True)
    thread.start()
    probe.wait_past(0)  # the probe is answering before the hostile request goes out
    try:
        yield probe
        probe.wait_past(probe.answered)  # and one more answer covers the time after it
    finally:
        probe.stop.set()
        thread.join(60)


def hostile_body(shape: str) -> bytes:
    """About 8 MB of the cheapest items to send and the dearest to parse."""
    unit, where = {
        "empty parts": ('{"text":""}', "parts"),
        "empty lists": ("[]", "state"),
        "numbers": ("0", "state"),
    }[shape]
    items = ",".join([unit] * ((EIGHT_MB - 300) // (len(unit) + 1)))
    parts = items if where == "parts" else '{"text":"hi"}'
    message = f'{{"role":"user","parts":[{parts}]}}'
    delta = f',"state_delta":{{"k":[{items}]}}' if where == "state" else ""
    head = '{"app_name":"chat","user_id":"u1","session_id":"big"'
    return f'{head},"new_message":{message}{delta}}}'.encode()


@pytest.mark.parametrize("shape", ["empty parts", "empty lists", "numbers"])
def test_an_8mb_body_of_tiny_items_is_refused_at_once_and_health_keeps_answering(
    server: ServerProcess, shape: str
):
    body = hostile_body(shape)
    assert len(body) <= EIGHT_MB
    with probing(server) as probe, httpx.Client(base_url=server.url, timeout=120) as http:
        started = time.perf_counter()
        refused = http.post("/run", content=body)
        took = time.perf_counter() - started
    # Before the body was measured, on a loaded 2-core machine, /health waited 16 s (empty
    # parts), 3.2 s (lists), 2.3 s (numbers); now 10-30 ms, and the refusal takes 0.1-0.3 s
    # with the upload.
    assert probe.answered > 0 and probe.slowest < 1.0, f"/health waited {probe.slowest:.1f} s"
    assert took < 3.0, f"the refusal took {took:.1f} s"
    assert refused.status_code in (413, 422), refused.text
    assert "items" in refused.json()["detail"]
    with httpx.Client(base_url=server.url, timeout=30) as http:
        events = http.get("/apps/chat/users/u1/sessions/big").json()["events"]
    assert events == []  # nothing stored


def test_a_large_body_of_few_items_is_taken(server: ServerProcess):
    # 6 MB in one base64 string: large but cheap to parse, read on a worker thread.
    data = "QUJD" * (6 * 1024 * 1024 // 4)
    blob = {"inline_data": {"mime_type": "text/plain", "data": data}}
    message = {"role": "user", "parts": [blob, {"text": "hello"}]}
    body = {"app_name": "chat", "user_id": "u1", "session_id": "big", "new_message": message}
    with httpx.Client(base_url=server.url, timeout=120) as http:
        ran = http.post("/run", json=body)
    assert ran.status_code == 200, ran.text[:300]
    assert ran.json()[-1]["content"]["parts"][0]["text"] == "echo: hello"


def test_a_body_that_trickles_in_answers_408_and_holds_nothing(server: ServerProcess):
    body = json.dumps(
        {"app_name": "chat", "user_id": "u1", "session_id": "slow", "new_message": user_text("x")}
    ).encode()
    head = (
        f"POST /run HTTP/1.1\r\nHost: {server.host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head + body[:10])
        # While the body trickles in, the session is free: nothing was started for it.
        with httpx.Client(base_url=server.url, timeout=30) as http:
            meanwhile = http.post(
                "/run",
                json={
                    "app_name": "chat",
                    "user_id": "u1",
                    "session_id": "slow",
                    "new_message": user_text("meanwhile"),
                },
            )
        assert meanwhile.status_code == 200, meanwhile.text
        started = time.perf_counter()
        answer = trickle(sock, body[10:], deadline=started + 15)
        took = time.perf_counter() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"did not arrive within 1 seconds" in answer
    assert took < 10.0  # the deadline is 1 s from the first read of the body
    with httpx.Client(base_url=server.url, timeout=30) as http:
        events = http.get("/apps/chat/users/u1/sessions/slow").json()["events"]
        invocations = http.get("/apps/chat/users/u1/sessions/slow/invocations").json()
    texts = [e["content"]["parts"][0]["text"] for e in events if e["author"] == "user"]
    assert texts == ["meanwhile"]
    assert len(invocations) == 1


def trickle(sock: socket.socket, rest: bytes, deadline: float) -> bytes:
    """Sends ``rest`` a byte at a time, 5 a second, until the server answers and closes.

    A byte is sent only while no answer is waiting: a byte sent after the server closed makes
    it reset the connection, and a reset may drop the answer before the client reads it.
    """
    for byte in rest:
        if time.perf_counter() > deadline:
            break
        readable, _, _ = select.select([sock], [], [], 0.2)
        if readable:
            break
        try:
            sock.sendall(bytes([byte]))
        except OSError:  # the server closed the connection after answering
            break
    answer = b""
    sock.settimeout(5)
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            answer += chunk
    return answer
