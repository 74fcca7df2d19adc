"""The soak's chart: OK and failed calls per second and the server's resources over a soak, its faults shaded; drawn
for each server of a soak run (harness.run.soak) from its report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.method.soak_verdict import NEEDS, SOAK_OBJECTS, cpu_shares
from harness.render.vega import Axis, lines, one_above_another, png, shaded
from harness.results.files import read_json, write_bytes_atomic
from harness.results.soak_meta import read_soak_meta

# The soak's load and faults (harness.run.soak), as its page says them.
SOAK_DOC = (
    "five calls at once each of hello, ListObjects, StreamObjects (batch 10) and ArchiveObjects on a bucket of "
    f"{SOAK_OBJECTS} objects; faults of 5 s each: S3 connections reset, S3 timing out, 2 s of added S3 latency, "
    "MongoDB unreachable, and the S3 server stopped and restarted; each caller pauses 20 ms between calls, a call has "
    "a 10 s deadline, and the servers' backend timeouts are 2 s to read and 5 s to connect (BACKEND_READ_TIMEOUT, "
    "BACKEND_CONNECT_TIMEOUT)"
)


def load_line(load: dict[str, Any]) -> str:
    """The load summary in words."""
    calls = ", ".join(f"{rpc} {rate:g}" for rpc, rate in load["ok_calls_per_second"].items())
    return f"away from the faults the server used {load['server_cpu_share']:.0%} of a core; OK calls/s: {calls}"


def _grown(grown: dict[str, Any] | None) -> str:
    if not grown:
        return ""
    changed = [
        f"{each['name']} {each['change']:+d}" + (f" (a pool of at most {each['pool']})" if each["pool"] else "")
        for each in grown["python"]
    ]
    return f"; Python threads changed: {', '.join(changed) or 'none'}; native threads {grown['native']:+d}"


def _back(check: dict[str, Any]) -> str:
    return (
        f"at most {check['before']:g} before the first fault, {check['after']:g} at the end{_grown(check.get('grown'))}"
    )


# Each criterion of the soak's verdict (harness.method.soak_verdict): its name, and its figures in words.
CHECKS: dict[str, tuple[Callable[[dict[str, Any]], str], Callable[[dict[str, Any]], str]]] = {
    "server_alive": (lambda _: "server kept serving", lambda _: "the server process was alive at the end"),
    "hello_never_failed": (lambda _: "hello never failed", lambda check: f"{check['failed']} failed hello calls"),
    "failures_in_windows": (
        lambda _: "failures only in fault windows",
        lambda check: (
            f"{check['outside']} of {check['failed']} failed calls outside every fault window "
            f"+ {check['recovery_seconds']:g} s"
        ),
    ),
    "failures_of_needing_calls": (
        lambda _: "failures only of calls needing the failed backend, with UNAVAILABLE or DEADLINE_EXCEEDED",
        lambda check: (
            f"{check['otherwise']} failed calls otherwise; codes seen: "
            + ", ".join(f"{code} {count}" for code, count in check["codes"].items())
        ),
    ),
    "rss_growth": (
        lambda check: f"RSS grew at most {check['bound']:.0%}",
        lambda check: (
            f"{check['start_bytes'] / 2**20:.1f} MiB at {check['from_seconds']:g} s, "
            f"{check['end_bytes'] / 2**20:.1f} MiB at the end ({check['growth']:+.1%})"
        ),
    ),
    "fds_back": (lambda _: "file descriptors back to their starting level", _back),
    "threads_back": (lambda _: "threads back to their starting level", _back),
    "archive_per_object": (
        lambda _: "one archive document per object",
        lambda check: (
            f"{check['documents']} documents, {check['distinct_keys']} distinct keys, {check['objects']} objects"
        ),
    ),
}


def checks_text(verdict: dict[str, dict[str, Any]]) -> list[tuple[str, bool, str]]:
    """Each criterion of a soak's verdict as (its name, whether it passed, its figures in words), in CHECKS' order."""
    return [
        (name(verdict[key]), bool(verdict[key]["passed"]), detail(verdict[key]))
        for key, (name, detail) in CHECKS.items()
        if key in verdict
    ]


def chart(report: dict[str, Any], title: str) -> bytes:
    """OK calls per second per RPC, failed calls per second by code, and the server's RSS, fds, threads and CPU;
    fault windows shaded."""
    per_second = {int(second): rpcs for second, rpcs in report["per_second"].items()}
    span = range(int(report["seconds"]) + 1)
    ok = [
        {"second": s, "rpc": rpc, "calls": per_second.get(s, {}).get(rpc, {}).get("OK", 0)}
        for rpc in NEEDS
        for s in span
    ]
    codes = sorted({code for rpcs in per_second.values() for each in rpcs.values() for code in each if code != "OK"})
    failed = [
        {"second": s, "code": code, "calls": sum(each.get(code, 0) for each in per_second.get(s, {}).values())}
        for code in codes
        for s in span
    ]
    samples = report["server_samples"]
    server = [
        {"second": sample["second"], "what": what, "value": value}
        for sample in samples
        for what, value in (
            ("RSS (MiB)", sample["rss_bytes"] / 2**20),
            ("open file descriptors", sample["fds"]),
            ("threads", sample["threads"]),
        )
    ] + [{"second": last, "what": "CPU (% of a core)", "value": 100 * share} for _, last, share in cpu_shares(samples)]
    second = Axis("second", "seconds")
    panels = [
        shaded(report["schedule"], second, named=not index)
        + lines(rows, second, Axis(field, label), series, title=heading, points=False, width=720, height=170)
        for index, (rows, field, label, series, heading) in enumerate(
            (
                (ok, "calls", "OK calls/s", "rpc", f"{report['server']}: soak under faults (shaded)"),
                (failed, "calls", "failed calls/s", "code", ""),
                (server, "value", "server", "what", ""),
            )
        )
        if rows
    ]
    return png(one_above_another(*panels), title)


def draw_soak(run_dir: Path) -> list[Path]:
    """Each server's chart beside its report in a soak run's folder (<server>.png); the paths written."""
    meta = read_soak_meta(run_dir)
    title = f"soak {meta.run_id}, {meta.environment.cpu_model}"
    written = []
    for server in meta.servers:
        report = run_dir / f"{server}.json"
        if report.exists():
            path = run_dir / f"{server}.png"
            write_bytes_atomic(path, chart(read_json(report), title))
            written.append(path)
    return written
