"""The soak's verdict and summary, read from a soak report alone (no server, backend or tool): what the
criteria are, whether each was met, and the figures the summary shows. `harness/run/soak.py` runs the soak."""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

SOAK_OBJECTS = 100  # a StreamObjects of batch 10 sends 10 messages
RECOVERY_SECONDS = 2.0
BASELINE = (5.0, 20.0)  # seconds into the load: its file descriptors and threads before any fault
FINAL_SECONDS = 10.0  # the last seconds of the load: where they must be back
RSS_FROM_SECONDS = 120.0
RSS_GROWTH = 0.10
ALLOWED = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED"})

# The RPCs of the mix, and the backends each needs.
NEEDS: dict[str, frozenset[str]] = {
    "hello": frozenset(),
    "s3-unary": frozenset({"s3"}),
    "s3-stream": frozenset({"s3"}),
    "s3-mongo": frozenset({"s3", "mongodb"}),
}


def cpu_shares(samples: Sequence[dict[str, float]]) -> list[tuple[float, float, float]]:
    """(from, to, the server's CPU as a share of one core) between each pair of consecutive samples."""
    return [
        (earlier["second"], later["second"], (later["cpu_seconds"] - earlier["cpu_seconds"]) / span)
        for earlier, later in itertools.pairwise(samples)
        if (span := later["second"] - earlier["second"]) > 0
    ]


def load_summary(report: dict[str, Any]) -> dict[str, Any]:
    """How hard the load drove the server away from the faults: its median CPU (share of a core) and the
    median OK calls per second of each RPC, over the seconds outside every fault window and its recovery."""
    windows = [(f["start"], f["end"] + RECOVERY_SECONDS) for f in report["schedule"]]

    def calm(second: float) -> bool:
        return not any(start - 1 <= second <= end for start, end in windows)

    cpu = [share for first, last, share in cpu_shares(report["server_samples"]) if calm(first) and calm(last)]
    seconds = [rpcs for second, rpcs in report["per_second"].items() if calm(float(second))]
    return {
        "server_cpu_share": round(_median(cpu), 3),
        "ok_calls_per_second": {rpc: _median([rpcs.get(rpc, {}).get("OK", 0) for rpcs in seconds]) for rpc in NEEDS},
    }


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def verdict(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each pass criterion, checked from the report alone, by its key (CHECKS): whether it passed and the figures it
    was judged by (render.soak words them)."""
    windows = [(f["start"], f["end"] + RECOVERY_SECONDS, f["backend"]) for f in report["schedule"]]
    failures = report["failures"]

    def during(failure: dict[str, Any]) -> set[str]:
        """The backends down while the failed call was in flight."""
        return {backend for start, end, backend in windows if failure["started"] <= end and failure["ended"] >= start}

    outside = [f for f in failures if not during(f)]
    wrong = [f for f in failures if during(f) and (f["code"] not in ALLOWED or not during(f) & NEEDS[f["rpc"]])]
    hello = [f for f in failures if f["rpc"] == "hello"]
    samples = report["server_samples"]
    seconds = report["seconds"]

    def window(first: float, last: float, key: str) -> list[float]:
        return [sample[key] for sample in samples if first <= sample["second"] < last]

    rss_from = min(RSS_FROM_SECONDS, seconds / 5)
    rss_start = _median(window(rss_from, rss_from + FINAL_SECONDS, "rss_bytes"))
    rss_end = _median(window(seconds - FINAL_SECONDS, seconds + 1, "rss_bytes"))
    growth = rss_end / rss_start - 1 if rss_start else 0.0
    first_fault = min((f["start"] for f in report["schedule"]), default=BASELINE[1])
    archive = report["archive"]
    checks: dict[str, dict[str, Any]] = {
        "server_alive": {"passed": report["server_alive_at_end"]},
        "hello_never_failed": {"passed": not hello, "failed": len(hello)},
        "failures_in_windows": {
            "passed": not outside,
            "outside": len(outside),
            "failed": len(failures),
            "recovery_seconds": RECOVERY_SECONDS,
        },
        "failures_of_needing_calls": {
            "passed": not wrong,
            "otherwise": len(wrong),
            "codes": dict(sorted(Counter(f["code"] for f in failures).items())),
        },
        "rss_growth": {
            "passed": growth <= RSS_GROWTH,
            "bound": RSS_GROWTH,
            "from_seconds": rss_from,
            "start_bytes": rss_start,
            "end_bytes": rss_end,
            "growth": growth,
        },
    }
    for key in ("fds", "threads"):
        before = max(window(BASELINE[0], min(BASELINE[1], first_fault), key), default=0)
        after = _median(window(seconds - FINAL_SECONDS, seconds + 1, key))
        grown = _threads_grown(report) if key == "threads" and after > before else None
        explained = grown["explained"] if grown else 0
        checks[f"{key}_back"] = {"passed": after <= before + explained, "before": before, "after": after}
        if grown:
            checks[f"{key}_back"]["grown"] = grown
    checks["archive_per_object"] = {
        "passed": archive["documents"] == archive["distinct_keys"] == archive["objects"],
        "documents": archive["documents"],
        "distinct_keys": archive["distinct_keys"],
        "objects": archive["objects"],
    }
    return checks


def _threads_grown(report: dict[str, Any]) -> dict[str, Any] | None:
    """Which threads grew from the last sample before the first fault to the last one: Python's by name, each with
    its change and, where a thread pool started it within its bound, that bound (a pool keeps its workers: growth,
    not a leak); the rest (started by C libraries: grpc core, libuv) as `native`; and `explained`, how many of them
    a pool's bound accounts for. None where the report did not name its threads."""
    moments = report.get("python_threads", {})
    samples = report["server_samples"]
    first_fault = min((f["start"] for f in report["schedule"]), default=0.0)
    before_samples = [sample for sample in samples if sample["second"] < first_fault]
    if "before_first_fault" not in moments or not before_samples:
        return None
    before, after = Counter(moments["before_first_fault"]["names"]), Counter(moments["end"]["names"])
    bounds = moments["end"]["pools"]
    changed: list[dict[str, Any]] = []
    explained = 0
    for name in sorted(after | before):
        change = after[name] - before[name]
        if not change:
            continue
        within = name in bounds and change > 0 and after[name] <= bounds[name]
        explained += change if within else 0
        changed.append({"name": name, "change": change, "pool": bounds[name] if within else None})
    last, first = samples[-1], before_samples[-1]
    native = (last["threads"] - last["python_threads"]) - (first["threads"] - first["python_threads"])
    return {"python": changed, "native": native, "explained": explained}


def passed(report: dict[str, Any]) -> bool:
    return all(check["passed"] for check in report["verdict"].values())
