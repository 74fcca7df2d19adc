"""CPU and memory of the server under test, sampled from its process tree while ghz runs, and the
counters the server keeps about itself (GC, loop lag, context switches) when asked to."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

from harness.results.records import ResourceUsage

INTERVAL = 0.1


def process_tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _cpu_by_process(processes: list[psutil.Process]) -> dict[int, float]:
    found = {}
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        found[process.pid] = times.user + times.system
    return found


def _cpu_and_rss(processes: list[psutil.Process]) -> tuple[float, int]:
    cpu, rss = 0.0, 0
    for process in processes:
        try:
            times = process.cpu_times()
            cpu += times.user + times.system
            rss += process.memory_info().rss
        except psutil.Error:
            continue
    return cpu, rss


def tree_cpu_seconds(pids: Sequence[int]) -> float:
    """The CPU seconds the process trees of pids have spent so far (a process gone counts nothing)."""
    total = 0.0
    for pid in pids:
        try:
            total += _cpu_and_rss(process_tree(psutil.Process(pid)))[0]
        except psutil.Error:
            continue
    return total


SNMP = Path("/proc/net/snmp")


def tcp_segments(snmp: Path = SNMP) -> int | None:
    """The TCP segments this machine has sent so far (OutSegs, every connection, loopback's both ways); None where
    the kernel does not say. A run's difference, per call, says how many calls went in one segment."""
    try:
        lines = [line.split() for line in snmp.read_text().splitlines() if line.startswith("Tcp:")]
        names, values = lines[0], lines[1]
        return int(values[names.index("OutSegs")])
    except (OSError, IndexError, ValueError):
        return None


class ResourceSampler:
    """`with ResourceSampler(pid) as sampler:` ... then `sampler.usage`; pid None samples nothing but the time."""

    def __init__(self, pid: int | None, interval: float = INTERVAL) -> None:
        self._root = psutil.Process(pid) if pid is not None else None
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="resource-sampler", daemon=True)
        self._peak_cpu = 0.0
        self._peak_rss = 0
        self.usage: ResourceUsage | None = None

    def __enter__(self) -> ResourceSampler:
        self._start_wall = time.monotonic()
        if self._root is not None:
            tree = process_tree(self._root)
            self._start_cpu, self._start_rss = _cpu_and_rss(tree)
            self._peak_rss = self._start_rss
            self._start_each = _cpu_by_process(tree)
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._root is None:
            self.usage = ResourceUsage(time.monotonic() - self._start_wall, 0.0, 0.0, 0, sampled=False)
            return
        self._stop.set()
        self._thread.join()
        tree = process_tree(self._root)
        cpu, rss = _cpu_and_rss(tree)
        each = {pid: used - self._start_each.get(pid, 0.0) for pid, used in _cpu_by_process(tree).items()}
        self.usage = ResourceUsage(
            wall_seconds=time.monotonic() - self._start_wall,
            cpu_seconds=max(0.0, cpu - self._start_cpu),
            peak_cpu_percent=self._peak_cpu,
            peak_rss_bytes=max(self._peak_rss, rss),
            start_rss_bytes=self._start_rss,
            process_cpu_seconds=sorted((round(used, 3) for used in each.values()), reverse=True)
            if len(each) > 1
            else [],
        )

    def _sample(self) -> None:
        assert self._root is not None
        last_wall, last_cpu = self._start_wall, self._start_cpu
        while not self._stop.wait(self._interval):
            cpu, rss = _cpu_and_rss(process_tree(self._root))
            now = time.monotonic()
            if now > last_wall:
                self._peak_cpu = max(self._peak_cpu, 100.0 * (cpu - last_cpu) / (now - last_wall))
            self._peak_rss = max(self._peak_rss, rss)
            last_wall, last_cpu = now, cpu


# How long a run waits for each server process to write its counters once more, before it begins and after it
# ended (they write every diagnostics.WRITE_SECONDS).
FRESH_WAIT_SECONDS = 1.0


def read_counters(directory: Path, pids: set[int]) -> dict[int, dict[str, Any]]:
    """pid -> the counters it last wrote, for the given processes (a file half-renamed is skipped)."""
    found: dict[int, dict[str, Any]] = {}
    for pid in pids:
        try:
            found[pid] = json.loads((directory / f"{pid}.json").read_text())
        except (OSError, ValueError):
            continue
    return found


def fresh_counters(directory: Path, pids: set[int], since: float) -> dict[int, dict[str, Any]]:
    """The processes' counters once each has written them at `since` (a time.time()) or later, waiting at most
    FRESH_WAIT_SECONDS: a file written before then misses what happened since."""
    deadline = time.monotonic() + FRESH_WAIT_SECONDS
    found = read_counters(directory, pids)
    while time.monotonic() < deadline and not all(each["written_at"] >= since for each in found.values()):
        time.sleep(0.05)
        found = read_counters(directory, pids)
    return found


class ServerCounters:
    """`with ServerCounters(directory, pid) as counters:` ... then `counters.delta`: what the server's
    processes counted during the block, summed over them (None when they wrote nothing), and
    `counters.process_calls`: the calls each took, most first, where more than one process counted."""

    def __init__(self, directory: Path, pid: int) -> None:
        self._directory = directory
        self._pids = {process.pid for process in process_tree(psutil.Process(pid))} or {pid}
        self.delta: dict[str, float] | None = None
        self.process_calls: list[int] = []

    def __enter__(self) -> ServerCounters:
        # Fresh, so that calls just before the block (a warm-up's) are not counted as the block's.
        self._before = fresh_counters(self._directory, self._pids, time.time())
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        after = fresh_counters(self._directory, self._pids, time.time())
        common = [pid for pid in after if pid in self._before]
        if not common:
            return
        numbers = {key: value for key, value in after[common[0]].items() if isinstance(value, int | float)}
        keys = [key for key in numbers if key != "written_at"]
        self.delta = {key: round(sum(after[pid][key] - self._before[pid][key] for pid in common), 6) for key in keys}
        if len(common) > 1:
            taken = (after[pid].get("calls", 0) - self._before[pid].get("calls", 0) for pid in common)
            self.process_calls = sorted(taken, reverse=True)
