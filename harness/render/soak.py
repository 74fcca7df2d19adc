"""The soak's chart: OK and failed calls per second and the server's resources over a soak, its faults shaded; drawn
for each server of a soak run (harness.run.soak) from its report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.method.soak_verdict import NEEDS, cpu_shares
from harness.render.vega import Axis, lines, one_above_another, png, shaded
from harness.results.files import read_json, write_bytes_atomic


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
    meta = read_json(run_dir / "run.json")
    title = f"soak {meta['run_id']}, {meta['environment']['cpu_model']}"
    written = []
    for server in meta["servers"]:
        report = run_dir / f"{server}.json"
        if report.exists():
            path = run_dir / f"{server}.png"
            write_bytes_atomic(path, chart(read_json(report), title))
            written.append(path)
    return written
