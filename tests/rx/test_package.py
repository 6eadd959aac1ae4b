import adk_rx.rx

EXPECTED = {
    "BufferOverflow",
    "Bulkhead",
    "Emitter",
    "Outcome",
    "Overflow",
    "SerializedSubject",
    "Watcher",
    "completable",
    "from_async",
    "from_emitter",
    "from_blocking",
    "from_blocking_iterable",
    "io_scheduler",
    "maybe",
    "observe_on_bounded",
    "on_backpressure_buffer",
    "on_backpressure_drop",
    "on_backpressure_latest",
    "runtime_loop",
    "serialize",
    "set_io_scheduler",
    "single",
    "subscribe_on_eager",
    "timer_scheduler",
    "to_async_iterable",
    "to_iterable",
    "watched",
    "with_sink",
    "expand",
}


def test_all_lists_exactly_the_public_names_and_each_resolves() -> None:
    assert set(adk_rx.rx.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(adk_rx.rx, name) is not None
