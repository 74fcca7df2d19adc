"""The thread census a server writes with its counters: Python threads by name, and its pools' bounds."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from servers.diagnostics import thread_groups, thread_pool_bounds


def test_a_pools_workers_count_under_the_pools_name_with_its_bound() -> None:
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="census") as pool:
        started = threading.Barrier(3)
        for _ in range(3):  # three calls that wait for each other hold three workers at once
            pool.submit(started.wait, 5)
        started_workers = thread_groups()
        bounds = thread_pool_bounds()
    assert started_workers["census"] == 3
    assert bounds["census"] == 3
    assert started_workers["MainThread"] == 1


def test_a_plain_thread_counts_under_its_name_and_is_no_pool() -> None:
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name="watcher")
    thread.start()
    try:
        assert thread_groups()["watcher"] == 1
        assert "watcher" not in thread_pool_bounds()
    finally:
        release.set()
        thread.join()
