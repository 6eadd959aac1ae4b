"""LiveRequestQueue: order, the blob overflow policy, close, one subscriber, any thread."""

from __future__ import annotations

import threading

import pytest
from google.genai import types
from reactivex.scheduler import ImmediateScheduler

from adk_rx import LiveRequestQueue
from adk_rx.errors import ConfigurationError
from adk_rx.live.queue import LiveRequest


def text(t: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=t)])


def blob(n: int) -> types.Blob:
    return types.Blob(mime_type="audio/pcm;rate=16000", data=bytes([n]))


def collect(queue: LiveRequestQueue) -> tuple[list[LiveRequest], threading.Event]:
    got: list[LiveRequest] = []
    done = threading.Event()
    queue.requests().subscribe(on_next=got.append, on_completed=done.set)
    return got, done


def test_requests_sent_before_the_subscriber_wait_for_it_in_order() -> None:
    queue = LiveRequestQueue(scheduler=ImmediateScheduler())
    queue.send_content(text("a"))
    queue.send_realtime(blob(1))
    queue.send_activity_start()
    queue.send_activity_end()
    queue.close()

    got, done = collect(queue)

    assert done.is_set()
    assert [r.content is not None for r in got] == [True, False, False, False, False]
    assert got[1].blob == blob(1)
    assert (got[2].activity_start, got[3].activity_end, got[4].close) == (True, True, True)


def test_a_full_blob_buffer_drops_the_oldest_blob_and_never_a_content() -> None:
    queue = LiveRequestQueue(max_blobs=2, scheduler=ImmediateScheduler())
    queue.send_realtime(blob(1))
    queue.send_content(text("keep me"))
    queue.send_realtime(blob(2))
    queue.send_realtime(blob(3))  # the buffer holds 2 blobs: blob 1 goes
    queue.close()

    got, _ = collect(queue)

    assert [r.blob.data if r.blob else r.content is not None for r in got[:-1]] == [
        True,
        b"\x02",
        b"\x03",
    ]
    assert queue.dropped_blobs == 1


def test_the_producer_never_waits_for_a_slow_consumer() -> None:
    queue = LiveRequestQueue(max_blobs=8)  # delivery on adk_rx's I/O pool
    release = threading.Event()
    first = threading.Event()
    got: list[LiveRequest] = []
    done = threading.Event()

    def slow(request: LiveRequest) -> None:
        got.append(request)
        first.set()
        release.wait(10)

    queue.requests().subscribe(on_next=slow, on_completed=done.set)
    queue.send_realtime(blob(0))
    assert first.wait(10)
    for n in range(1, 1001):  # 20 s of 20 ms frames while the consumer is stuck
        queue.send_realtime(blob(n % 256))
    queue.send_content(text("still here"))
    queue.close()  # returns at once too
    release.set()

    assert done.wait(10)
    assert queue.dropped_blobs == 1000 - 8
    assert got[-1].close and got[-2].content is not None
    assert len([r for r in got if r.blob is not None]) == 1 + 8


def test_sending_after_close_is_an_error_and_close_is_idempotent() -> None:
    queue = LiveRequestQueue(scheduler=ImmediateScheduler())
    queue.close()
    queue.close()

    with pytest.raises(ConfigurationError, match="closed"):
        queue.send_content(text("late"))
    assert queue.is_closed


def test_one_subscriber_at_a_time_and_wrong_types_are_refused() -> None:
    queue = LiveRequestQueue(scheduler=ImmediateScheduler())
    queue.requests().subscribe()

    with pytest.raises(ConfigurationError, match="one live session"):
        queue.requests().subscribe()
    with pytest.raises(ConfigurationError, match=r"types\.Blob"):
        queue.send_realtime(b"raw bytes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"types\.Content"):
        queue.send_content("hi")  # type: ignore[arg-type]


def test_many_threads_feed_one_queue_without_loss() -> None:
    queue = LiveRequestQueue(scheduler=ImmediateScheduler())
    got, done = collect(queue)

    def feed(prefix: str) -> None:
        for n in range(200):
            queue.send_content(text(f"{prefix}{n}"))

    threads = [threading.Thread(target=feed, args=(p,)) for p in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.close()

    assert done.is_set()
    texts = [r.content.parts[0].text for r in got if r.content]  # type: ignore[index,union-attr]
    assert len(texts) == 800
    for p in "abcd":
        assert [t for t in texts if t.startswith(p)] == [f"{p}{n}" for n in range(200)]


def test_live_requests_parse_google_adk_json_frames() -> None:
    content = LiveRequest.from_json('{"content": {"role": "user", "parts": [{"text": "hi"}]}}')
    start = LiveRequest.from_json('{"activity_start": {}}')
    audio = LiveRequest.from_json('{"blob": {"mime_type": "audio/pcm", "data": "AAE="}}')

    assert content.content is not None and content.content.parts[0].text == "hi"  # type: ignore[index]
    assert start.activity_start
    assert audio.blob is not None and audio.blob.data == b"\x00\x01"
    assert LiveRequest.from_json(LiveRequest(close=True).to_json()).close
    with pytest.raises(ConfigurationError, match="not a live request"):
        LiveRequest.from_json('{"content": 5}')


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        ("{}", "sets none of"),
        ('{"contents": {"parts": [{"text": "hi"}]}}', "sets none of"),
        ("[1, 2]", "a JSON object is expected"),
        ('{"close": "maybe"}', "close: Input should be a valid boolean"),
        ("hello?", "Invalid JSON"),
    ],
)
def test_a_frame_that_asks_for_nothing_or_is_not_an_object_is_not_a_live_request(
    frame: str, says: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"not a live request: .*{says}"):
        LiveRequest.from_json(frame)
