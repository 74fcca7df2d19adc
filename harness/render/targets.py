"""A study's targets in words, for the end of run-all: only those it missed, each one line ("stacks: hello's repeats
spread up to 40% (aio-asyncio/c50), above the 10% the study expects"), never the recorded figures as a dict."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.results.run_meta import RunMeta, Target


def _worst(by: Mapping[str, Any]) -> tuple[str, float]:
    """The largest figure of a mapping of names to numbers, with its name."""
    name = max(by, key=lambda key: abs(float(by[key])))
    return name, float(by[name])


def _cells(details: Mapping[str, Any], key: str) -> str:
    found = list(details.get(key) or [])
    shown = ", ".join(map(str, found[:3])) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return shown or "none named"


def _spread(details: Mapping[str, Any]) -> str:
    name, worst = _worst(details["spread_by_cell"])
    return f"hello's repeats spread up to {worst:.0%} ({name}), above the 10% the study expects"


def _driver(details: Mapping[str, Any]) -> str:
    return f"the load generator reached {float(details['highest']):.0%} of its CPU in a slice: it may have set rates"


def _wall(details: Mapping[str, Any]) -> str:
    took, limit = float(details["measured_seconds"]) / 60, float(details.get("target_seconds", 0)) / 60
    return f"took {took:.0f} min, past its {limit:.0f} min"


def _efficiency(details: Mapping[str, Any]) -> str:
    missed = [cell for cell, each in details["cells"].items() if not each["met"]]
    return f"below its efficiency target at {', '.join(missed)}"


def _capacity(details: Mapping[str, Any]) -> str:
    name, worst = min(details["by_cell"].items(), key=lambda pair: float(pair[1]))
    return f"capacity at its SLO was {float(worst):.0%} of saturation at {name}, below the share it expects"


def _cross_check(details: Mapping[str, Any]) -> str:
    name, worst = _worst(details["by_server"])
    return f"our driver and its cross-check differ by {worst:+.0%} on {name}, past the tolerance"


WORDS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "no_failed_cell": lambda details: f"cells failed: {_cells(details, 'cells')}",
    "no_unexpected_non_ok": lambda details: f"calls not OK where none were expected: {_cells(details, 'cells')}",
    "zero_non_ok": lambda details: f"cells with calls not OK: {_cells(details, 'cells_with_non_ok_or_failed')}",
    "hello_repeats_within_10_percent": _spread,
    "driver_not_busy": _driver,
    "wall_time": _wall,
    "efficiency": _efficiency,
    "streams_end_clean": lambda details: f"streams did not end clean: {_cells(details, 'cells')}",
    "memory_bounded": lambda details: f"memory grew past its bound: {_cells(details, 'bytes_a_stream')}",
}


def target_text(name: str, target: Target) -> str:
    """What a missed target found, in words; its name spelled out where it has no words of its own or its
    figures are not what they were."""
    words = WORDS.get(name)
    if words is None and name.startswith("capacity_at_"):
        words = _capacity
    if words is None and name.startswith("driver_within_"):
        words = _cross_check
    try:
        return words(target.details) if words else f"{name.replace('_', ' ')}: not met"
    except (KeyError, TypeError, ValueError):
        return f"{name.replace('_', ' ')}: not met"


def missed_targets(meta: RunMeta) -> list[str]:
    """Each target a run's studies missed, one line each, gates first ("stacks (fails the run): ...")."""
    missed = [
        (not target.gate, f"{study}{' (fails the run)' if target.gate else ''}: {target_text(name, target)}")
        for study, entry in meta.studies.items()
        for name, target in entry.targets.items()
        if not target.met and (name != "wall_time" or target.details.get("applies", True))
    ]
    return [line for _, line in sorted(missed, key=lambda pair: pair[0])]
