"""What machine a run ran on, and how fast it was: a fingerprint (the CPU as /proc/cpuinfo names it, its microcode,
caches and flags, the kernel, the clock source, the cores seen) and a speed index (a fixed pure-Python loop and a
fixed native one, timed at the run's start and end), with the CPU time the hypervisor stole meanwhile. Runs of
one machine class (harness.results.machines.machine_class) can be set side by side; a run's speed tells a slow
host from a slow stack."""

from __future__ import annotations

import hashlib
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PYTHON_LOOP = 10_000_000  # additions in the pure-Python loop
NATIVE_BYTES = 128 * 2**20  # bytes hashed by SHA-256 in the native loop
TRIES = 3  # each loop's best of this many


def cpuinfo(text: str) -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        found[key.strip()] = value.strip()
    return found


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def fingerprint() -> dict[str, Any]:
    """The machine as a run records it."""
    cpu = cpuinfo(_read("/proc/cpuinfo"))
    flags = cpu.get("flags", "").split()
    return {
        "vendor": cpu.get("vendor_id", platform.processor() or "unknown"),
        "model_name": cpu.get("model name", "unknown"),
        "family": cpu.get("cpu family", ""),
        "model": cpu.get("model", ""),
        "stepping": cpu.get("stepping", ""),
        "microcode": cpu.get("microcode", ""),
        "cache": cpu.get("cache size", ""),
        "flags": len(flags),
        "flags_sha256": hashlib.sha256(" ".join(sorted(flags)).encode()).hexdigest()[:12],
        "kernel": platform.release(),
        "clocksource": _read("/sys/devices/system/clocksource/clocksource0/current_clocksource").strip(),
        "cores_seen": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
    }


def _best(work: Callable[[], object]) -> float:
    times = []
    for _ in range(TRIES):
        begun = time.perf_counter()
        work()
        times.append(time.perf_counter() - begun)
    return min(times)


def _python_loop() -> int:
    total = 0
    for each in range(PYTHON_LOOP):
        total += each
    return total


def _native_loop() -> bytes:
    return hashlib.sha256(bytes(NATIVE_BYTES)).digest()


def speed() -> dict[str, float]:
    """The speed index now: seconds for the fixed pure-Python loop and the fixed native loop (best of TRIES each,
    on whatever CPU the caller is pinned to)."""
    return {"python_seconds": round(_best(_python_loop), 4), "native_seconds": round(_best(_native_loop), 4)}


def steal_ticks(stat: str | None = None) -> tuple[int, int]:
    """(steal, total) clock ticks of all CPUs so far, from /proc/stat's first line."""
    lines = (_read("/proc/stat") if stat is None else stat).splitlines()
    values = [int(each) for each in lines[0].split()[1:9]] if lines else []
    return (values[7] if len(values) > 7 else 0, sum(values))


def steal_share(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """The share of the CPUs' time the hypervisor stole between two readings (None when no time passed)."""
    total = after[1] - before[1]
    return None if total <= 0 else round((after[0] - before[0]) / total, 4)
