"""A run's machine as its record says it: the class that makes runs comparable, and its speed index in words."""

from __future__ import annotations

from typing import Any


def machine_class(found: dict[str, Any]) -> str:
    """What makes runs comparable: the CPU (vendor, family, model, stepping) and the cores seen, e.g.
    "AuthenticAMD 25/1/1, 2 cores"; "" for a run that recorded no fingerprint."""
    if not found:
        return ""
    cpu = f"{found['vendor']} {found['family']}/{found['model']}/{found['stepping']}"
    return f"{cpu}, {found['cores_seen']} cores"


def speed_text(recorded: dict[str, Any]) -> str:
    """A run's speed index in a phrase: "Python loop 0.21 s, native 0.05 s (start); 0.22 s, 0.05 s (end)"."""
    parts = []
    for when in ("start", "end"):
        if found := recorded.get(when):
            python, native = found["python_seconds"], found["native_seconds"]
            parts.append(f"Python loop {python:.2f} s, native {native:.2f} s ({when})")
    return "; ".join(parts)
