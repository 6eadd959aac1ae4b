"""The api-server keeps the cyclic GC from walking what start-up loaded."""

from __future__ import annotations

import gc

from adk_rx.cli.server.app import freeze_startup_heap


def test_the_server_freezes_what_start_up_loaded_out_of_the_gcs_reach() -> None:
    before = gc.get_freeze_count()
    try:
        frozen = freeze_startup_heap()
        assert frozen == gc.get_freeze_count() > before
        assert frozen > 10_000  # the modules loaded so far: a full collection skips them
    finally:
        gc.unfreeze()
