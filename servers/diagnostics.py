"""Counters that say why a server falls short of its CPU bound (GC pauses, event-loop lag, context switches),
and how many calls each process of a server took.

Off unless the environment names a directory in `STATS_DIR_VARIABLE` (the harness sets it for studies
that read them). Then each server process keeps cumulative counters and rewrites `<dir>/<pid>.json`
every `WRITE_SECONDS` (write to a temporary name, then rename: a reader never sees half a file):

- calls: the calls this process took (every stack counts each call its handlers begin, health checks
  aside), so that the processes of a `-p N` server show how SO_REUSEPORT spread the calls;
- gc_seconds, gc_collections: time spent in the cyclic garbage collector, and how often it ran
  (`gc.callbacks`; every stack, since every stack runs Python handlers);
- lag_checks, lag_seconds, late_5ms, late_50ms: an event-loop server's loop, checked every
  `LAG_INTERVAL` s: how late a sleep woke (the time every callback waits its turn), summed, and how many
  wake-ups were 5 ms or 50 ms late;
- voluntary_switches, involuntary_switches: context switches of all the process's threads
  (`getrusage(RUSAGE_SELF)`): a thread pool hands each call between threads, an event loop should not;
- python_threads: the process's Python threads by name, a pool's workers under the pool's name, and
  thread_pools: for each concurrent.futures pool among them, the most workers it may start (not
  counters: they say which threads a process holds; the others are native, started by C libraries).

The harness reads the files before and after a measured run and keeps the difference.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import resource
import threading
import time
import weakref
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

STATS_DIR_VARIABLE = "BENCH_STATS_DIR"
WRITE_SECONDS = 0.25
LAG_INTERVAL = 0.05
# "ThreadPoolExecutor-0_3" is worker 3 of pool 0, "Thread-5 (run)" the fifth unnamed thread.
_WORKER_NUMBER = re.compile(r"_\d+$|(?<=^Thread)-\d+")


_counting = False  # whether this process keeps its counters (start_diagnostics): else count_call does nothing
_own = threading.local()  # each thread's own cell of the `calls` counter
_cells: list[list[int]] = []  # every thread's cell, summed when the counters are written
_cells_lock = threading.Lock()  # taken once per thread, when it first counts


def count_call() -> None:
    """Count one call this process's handlers began (the `calls` counter). Nothing but a global's test when the
    counters are off; when on, one thread's own cell, with no lock a pool's workers (or, free-threaded, threads
    truly in parallel) would contend for: each thread writes only its own, and calls() sums them."""
    if not _counting:
        return
    try:
        _own.cell[0] += 1
    except AttributeError:
        _own.cell = [1]
        with _cells_lock:
            _cells.append(_own.cell)


def calls() -> int:
    """The calls this process's handlers began, over every thread."""
    with _cells_lock:
        return sum(cell[0] for cell in _cells)


def thread_groups() -> dict[str, int]:
    """This process's Python threads, counted by name with a worker's or thread's number left out."""
    return dict(Counter(_WORKER_NUMBER.sub("", thread.name) for thread in threading.enumerate()))


def thread_pool_bounds() -> dict[str, int]:
    """For each ThreadPoolExecutor with a live worker, by its name in thread_groups(): the most workers it
    may start. Such a pool starts workers as calls queue and keeps them until shut down, so it grows
    within this bound and does not shrink. (A worker thread's arguments start with a weak reference to its
    pool, concurrent/futures/thread.py; a thread not made so is skipped.)"""
    bounds: dict[str, int] = {}
    for thread in threading.enumerate():
        arguments = getattr(thread, "_args", ())
        owner = arguments[0]() if arguments and isinstance(arguments[0], weakref.ref) else None
        if isinstance(owner, ThreadPoolExecutor):
            bounds[_WORKER_NUMBER.sub("", thread.name)] = owner._max_workers
    return bounds


class Diagnostics:
    """One process's counters and the thread that writes them."""

    def __init__(self, directory: Path) -> None:
        self._path = directory / f"{os.getpid()}.json"
        self._counters: dict[str, float] = {
            "gc_seconds": 0.0,
            "gc_collections": 0,
            "lag_checks": 0,
            "lag_seconds": 0.0,
            "late_5ms": 0,
            "late_50ms": 0,
        }
        self._gc_started = 0.0
        self._stopped = threading.Event()
        gc.callbacks.append(self._on_gc)
        self.write()  # before the server serves: a reader finds a starting point at once
        self._writer = threading.Thread(target=self._write_until_stopped, name="diagnostics", daemon=True)
        self._writer.start()

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        # The collector holds the GIL from start to stop: no other thread runs between the two calls.
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self._counters["gc_seconds"] += time.perf_counter() - self._gc_started
            self._counters["gc_collections"] += 1

    async def watch_loop(self) -> None:
        """Sleep LAG_INTERVAL at a time on the running loop and count how late each wake-up comes."""
        while True:
            begun = time.perf_counter()
            await asyncio.sleep(LAG_INTERVAL)
            late = max(0.0, time.perf_counter() - begun - LAG_INTERVAL)
            self._counters["lag_checks"] += 1
            self._counters["lag_seconds"] += late
            self._counters["late_5ms"] += late >= 0.005
            self._counters["late_50ms"] += late >= 0.050

    def snapshot(self) -> dict[str, Any]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return {
            **self._counters,
            "calls": calls(),
            "voluntary_switches": usage.ru_nvcsw,
            "involuntary_switches": usage.ru_nivcsw,
            "python_threads": thread_groups(),
            "thread_pools": thread_pool_bounds(),
            "written_at": time.time(),
        }

    def write(self) -> None:
        temporary = self._path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.snapshot()))
        os.replace(temporary, self._path)

    def _write_until_stopped(self) -> None:
        while not self._stopped.wait(WRITE_SECONDS):
            try:
                self.write()
            except OSError:
                return  # the reader removed its directory: nobody is reading any more

    def close(self) -> None:
        self._stopped.set()
        gc.callbacks.remove(self._on_gc)


def start_diagnostics() -> Diagnostics | None:
    """Counters for this process when the environment asks for them, else None."""
    global _counting
    directory = os.environ.get(STATS_DIR_VARIABLE)
    _counting = bool(directory)
    return Diagnostics(Path(directory)) if directory else None


@contextmanager
def diagnosed() -> Iterator[None]:
    """A thread-pool server's counters (GC and context switches) while it serves, if asked for."""
    diagnostics = start_diagnostics()
    try:
        yield
    finally:
        if diagnostics is not None:
            diagnostics.close()


@asynccontextmanager
async def diagnosed_loop() -> AsyncIterator[None]:
    """An event-loop server's counters, its loop's lag among them, while it serves, if asked for."""
    diagnostics = start_diagnostics()
    watcher = asyncio.create_task(diagnostics.watch_loop()) if diagnostics is not None else None
    try:
        yield
    finally:
        if watcher is not None and diagnostics is not None:
            watcher.cancel()
            diagnostics.close()
