"""Waiting in a test on a condition, never on the clock: poll it until it holds, with a deadline generous enough
that only a defect misses it (a loaded 2-vCPU machine included). The only sleep is the poll's pace."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
POLL_SECONDS = 0.02


def until(condition: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    """condition()'s first truthy value, asked every POLL_SECONDS; AssertionError naming `what` past timeout."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(POLL_SECONDS)  # the poll's pace: how often the condition is asked, not how long a test waits
