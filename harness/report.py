"""Markdown tables, charts and the summary, rendered from a run's files only."""

from __future__ import annotations

import io
import shutil
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.bounds import Bounds, cell_bounds
from harness.ghz import PERCENTILES
from harness.matrix import SCENARIOS
from harness.results import CellResult, load_cells, read_json, write_bytes_atomic, write_text_atomic
from harness.runner import NOISE_THRESHOLD, spread

CPU_BOUND_PERCENT = 90.0
TIE = 0.05  # throughputs this close are not called a win
MIB = 1024 * 1024


@dataclass(frozen=True)
class CellSummary:
    """A cell's repeats reduced to what the tables show: medians, with the spread of OK req/s."""

    result: CellResult
    meta: dict[str, Any]

    @cached_property
    def bounds(self) -> Bounds | None:
        return cell_bounds(self.result, self.meta)

    @property
    def failed(self) -> bool:
        return self.result.record.status != "ok" or not self.result.reports

    def _median(self, values: Sequence[float]) -> float:
        return statistics.median(values) if values else 0.0

    @property
    def ok_rps(self) -> float:
        return self._median([report.ok_rps for report in self.result.reports])

    @property
    def spread(self) -> float:
        return spread([report.ok_rps for report in self.result.reports])

    @property
    def noisy(self) -> bool:
        return self.spread > NOISE_THRESHOLD

    def percentile(self, p: int) -> float:
        return self._median([report.percentiles.get(p, 0.0) for report in self.result.reports])

    @property
    def cpu_average(self) -> float:
        return self._median([repeat.resources.average_cpu_percent for repeat in self.result.record.repeats])

    @property
    def cpu_peak(self) -> float:
        return max((repeat.resources.peak_cpu_percent for repeat in self.result.record.repeats), default=0.0)

    @property
    def rss_peak(self) -> int:
        return max((repeat.resources.peak_rss_bytes for repeat in self.result.record.repeats), default=0)

    def status_counts(self) -> Counter[str]:
        """Responses by status code, added up over the runs."""
        return sum((Counter(report.status_codes) for report in self.result.reports), Counter())


def _seconds(value: float) -> str:
    return f"{value:.2f} s"


def _ms(value: float) -> str:
    return f"{value * 1000:.2f} ms"


def _rate(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def latency_label(records: Sequence[CellSummary]) -> str:
    """ "S3 +100 ms, MongoDB +5 ms (jitter 10 ms)" for the latencies the cells ran with, or ""."""
    record = records[0].result.record if records else None
    if record is None or not (record.s3_latency_ms or record.mongo_latency_ms):
        return ""
    parts = [
        f"{name} +{ms} ms" for name, ms in (("S3", record.s3_latency_ms), ("MongoDB", record.mongo_latency_ms)) if ms
    ]
    jitter = f" (jitter {record.jitter_ms} ms)" if record.jitter_ms else ""
    return ", ".join(parts) + jitter


def _bound(value: float) -> str:
    return "unbounded" if value == float("inf") else f"{_rate(value)}/s"


def _row(label: str, cells: Sequence[str]) -> str:
    return f"| {label} | " + " | ".join(cells) + " |"


def cell_table(scenario: str, concurrency: int, summaries: dict[str, CellSummary], meta: dict[str, Any]) -> str:
    """The original study's per-concurrency table: one column per server variant."""
    servers = list(summaries)
    codes = sorted({code for s in summaries.values() for code in s.status_counts() if code != "OK"})
    description = next((each.description for each in SCENARIOS if each.name == scenario), scenario)
    repeats = meta["matrix"]["repeats"]

    def column(render: Any) -> list[str]:
        return [("—" if summaries[name].failed else render(summaries[name])) for name in servers]

    def bound_column(render: Any) -> list[str]:
        return [("—" if (b := summaries[name].bounds) is None else render(b)) for name in servers]

    latency = latency_label(list(summaries.values()))
    lines = [
        f"# {scenario}, concurrency {concurrency}" + (f" ({latency})" if latency else ""),
        "",
        f"{description}. Run `{meta['run_id']}`: a discarded warm-up, then {repeats} measured ghz runs per cell "
        "in count mode. Count, OK and status rows add up all runs; times and percentiles are medians of the "
        "runs. **Requests/sec counts OK responses only**: median (lowest–highest run).",
        "",
        _row("", servers),
        "|---|" + "---|" * len(servers),
        _row("Count", column(lambda s: f"{sum(r.count for r in s.result.reports):,}")),
        _row("OK", column(lambda s: f"{s.status_counts().get('OK', 0):,}")),
        *[_row(code, column(lambda s, code=code: f"{s.status_counts().get(code, 0):,}")) for code in codes],
        _row("Total", column(lambda s: _seconds(statistics.median(r.total for r in s.result.reports)))),
        _row("Slowest", column(lambda s: _ms(statistics.median(r.slowest for r in s.result.reports)))),
        _row("Fastest", column(lambda s: _ms(statistics.median(r.fastest for r in s.result.reports)))),
        _row("Average", column(lambda s: _ms(statistics.median(r.average for r in s.result.reports)))),
        _row(
            "Requests/sec (OK only)",
            column(
                lambda s: (
                    f"{_rate(s.ok_rps)} ({_rate(min(r.ok_rps for r in s.result.reports))}–"
                    f"{_rate(max(r.ok_rps for r in s.result.reports))})"
                )
            ),
        ),
        *[_row(f"p{p}", column(lambda s, p=p: _ms(s.percentile(p)))) for p in PERCENTILES],
        _row("Server CPU, average", column(lambda s: f"{s.cpu_average:.0f}%")),
        _row("Server CPU, peak", column(lambda s: f"{s.cpu_peak:.0f}%")),
        _row("Server RSS, peak", column(lambda s: f"{s.rss_peak / MIB:.0f} MiB")),
        _row("Noise", column(lambda s: f"**noisy** ({s.spread:.0%})" if s.noisy else f"ok ({s.spread:.0%})")),
    ]
    if any(summary.bounds for summary in summaries.values()):
        lines += [
            _row("Call alone (c=1, average)", column(lambda s: _ms(s.result.probe.average) if s.result.probe else "—")),
            _row("Wait bound, min(c, slots) / latency", bound_column(lambda b: _bound(b.wait))),
            _row("CPU bound, CPUs / CPU s per call", bound_column(lambda b: _bound(b.cpu))),
            _row("Bound that binds", bound_column(lambda b: f"{b.binding}, {_bound(b.bound)}")),
            _row("**Efficiency**, OK req/s / bound", bound_column(lambda b: f"**{b.efficiency:.0%}**")),
        ]
    failures = [
        f"- {name}: {s.result.record.status}: {s.result.record.reason}" for name, s in summaries.items() if s.failed
    ]
    if failures:
        lines += ["", *failures]
    return "\n".join(lines) + "\n"


def _by_scenario(results: list[CellResult], meta: dict[str, Any]) -> dict[str, dict[int, dict[str, CellSummary]]]:
    grouped: dict[str, dict[int, dict[str, CellSummary]]] = {}
    for result in results:
        record = result.record
        grouped.setdefault(record.scenario, {}).setdefault(record.concurrency, {})[record.server] = CellSummary(
            result, meta
        )
    return grouped


def _ordered(meta: dict[str, Any], key: str, present: Sequence[Any]) -> list[Any]:
    order = list(meta["matrix"][key])
    return [item for item in order if item in present] + [item for item in present if item not in order]


def _servers_in(meta: dict[str, Any], levels: dict[int, dict[str, CellSummary]]) -> list[str]:
    """The servers of a scenario's cells, in the run's matrix order."""
    return _ordered(meta, "servers", sorted({name for level in levels.values() for name in level}))


def reading(scenario: str, levels: dict[int, dict[str, CellSummary]], cpus: int) -> list[str]:
    """A short, factual reading of one scenario: who wins where, and whether the server was CPU-bound."""
    lines = []
    for level in sorted(levels):
        ranked = sorted(((s.ok_rps, name) for name, s in levels[level].items() if not s.failed), reverse=True)
        if not ranked:
            continue
        best_rps = ranked[0][0]
        leaders = [name for rps, name in ranked if rps >= best_rps * (1 - TIE)]
        if len(leaders) == 1:
            runner_up = f", {ranked[1][1]} next at {_rate(ranked[1][0])}" if len(ranked) > 1 else ""
            lines.append(f"- c={level}: **{leaders[0]}** serves the most, {_rate(best_rps)} OK req/s{runner_up}.")
        else:
            lines.append(
                f"- c={level}: {', '.join(leaders)} within {TIE:.0%} of each other, a tie "
                f"(highest {_rate(best_rps)} OK req/s)."
            )
    top = max(levels)
    bound = []
    for name, summary in levels[top].items():
        if summary.failed:
            continue
        share = summary.cpu_average / cpus
        kind = "CPU-bound" if share >= CPU_BOUND_PERCENT else "not CPU-bound"
        bound.append(f"{name} {summary.cpu_average:.0f}% ({kind})")
    if bound:
        lines.append(f"- Server CPU at c={top} (100% = one core, {cpus} given): " + "; ".join(bound) + ".")
    limits = [
        f"{name} {b.binding}-bound at {_bound(b.bound)}, {b.efficiency:.0%} of it"
        + (" (its CPU was busy only that share of the time)" if b.binding == "CPU" and b.efficiency < 0.9 else "")
        for name, summary in levels[top].items()
        if (b := summary.bounds) is not None
    ]
    if limits:
        lines.append(f"- What limits each stack at c={top}: " + "; ".join(limits) + ".")
    return lines


def chart(scenario: str, levels: dict[int, dict[str, CellSummary]], servers: list[str]) -> bytes:
    """OK requests/sec and p99 latency against concurrency, one line per server variant, as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (throughput, latency) = plt.subplots(1, 2, figsize=(11, 4))
    for name in servers:
        points = [(level, levels[level][name]) for level in sorted(levels) if name in levels[level]]
        points = [(level, s) for level, s in points if not s.failed]
        if not points:
            continue
        xs = [level for level, _ in points]
        throughput.plot(xs, [s.ok_rps for _, s in points], marker="o", label=name)
        latency.plot(xs, [s.percentile(99) * 1000 for _, s in points], marker="o", label=name)
    throughput.set(title=f"{scenario}: OK requests/sec", xlabel="concurrency", ylabel="OK requests/sec")
    latency.set(title=f"{scenario}: p99 latency", xlabel="concurrency", ylabel="p99 (ms)")
    for axes in (throughput, latency):
        axes.set_xticks(sorted(levels))
        axes.grid(alpha=0.3)
        axes.set_ylim(bottom=0)
    throughput.legend(fontsize="small")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def _targets(meta: dict[str, Any]) -> list[str]:
    targets = meta.get("targets") or {}
    if not targets:
        return []
    wall = targets["wall_time"]
    zero = targets["zero_non_ok"]
    hello = targets["hello_repeats_within_10_percent"]
    mark = {True: "met", False: "**not met**"}
    worst = max(hello["spread_by_cell"].items(), key=lambda item: item[1], default=None)
    return [
        "## Benchmark targets",
        "",
        f"- Full default matrix within {wall['target_seconds'] // 60} minutes: "
        f"{wall['measured_seconds'] / 60:.1f} min, "
        + (mark[wall["met"]] if wall["applies"] else "not a full default run"),
        f"- Zero non-OK responses in every cell: {mark[zero['met']]}"
        + (f" (cells: {', '.join(zero['cells_with_non_ok_or_failed'])})" if not zero["met"] else ""),
        f"- hello repeats within 10% of their median: {mark[hello['met']]}"
        + (f" (widest: {worst[0]} at {worst[1]:.1%})" if worst else " (no hello cell with repeats)"),
        *[
            f"- {key}: every variant at {target['least']:.0%} or more of its bound: {mark[target['met']]} ("
            + ", ".join(f"{name} {value:.0%}" for name, value in target["by_server"].items())
            + ")"
            for key, target in targets.get("efficiency", {}).items()
        ],
        "",
    ]


def _summary_cell(summary: CellSummary) -> str:
    bounds = summary.bounds
    efficiency = f" ({bounds.efficiency:.0%})" if bounds else ""
    return _rate(summary.ok_rps) + efficiency + (" **noisy**" if summary.noisy else "")


def _cpus(cpus: list[int]) -> str:
    return ", ".join(map(str, cpus)) if cpus else "any (not pinned)"


def summary(results: list[CellResult], meta: dict[str, Any]) -> str:
    """results/README.md: per scenario, OK req/s by server x concurrency, links, charts and a reading."""
    grouped = _by_scenario(results, meta)
    env = meta["environment"]
    pinning = meta["pinning"]
    backends = meta.get("backends", {})
    cpus = max(1, len(pinning["server_cpus"]) or (env["cpu_count"] or 1))
    lines = [
        "# Results",
        "",
        f"Run `{meta['run_id']}` ({meta['date']}, commit `{env['git_commit'][:12]}`, status {meta['status']}, "
        f"{meta.get('wall_seconds', 0) / 60:.1f} min): {env['cpu_model']}, {env['cpu_count']} CPUs; the server "
        f"pinned to CPU {_cpus(pinning['server_cpus'])}, ghz and the backends to CPU "
        f"{_cpus(pinning['ghz_and_backend_cpus'])}. Python {env['python']}, "
        + ", ".join(f"{name} {version}" for name, version in env["packages"].items())
        + f", {env['ghz']}. S3: {backends.get('s3', '?')}; MongoDB: {backends.get('mongo', '?')}. "
        "Buckets: " + ", ".join(f"`{name}` ({n} objects)" for name, n in meta["matrix"]["buckets"].items()) + ".",
        "",
        "How to read: each cell is a fresh server, a warm-up that is thrown away, then "
        f"{meta['matrix']['repeats']} ghz runs in count mode sized to last a few seconds. Figures are OK "
        "responses per second (failed calls never count), the median of the runs; **noisy** marks a cell whose "
        "runs stray more than 10% from their median. Where a scenario waits (emulated latency, a sleep), "
        "its cells also show an **efficiency**: OK req/s over the lower of two bounds, the wait bound "
        "min(concurrency, serving slots) / (one call's latency alone) and the CPU bound "
        "(server CPUs / CPU seconds per call). Raw ghz reports and run metadata are in "
        f"[`runs/{meta['run_id']}`](runs/{meta['run_id']}).",
        "",
        *_targets(meta),
    ]
    for scenario in _ordered(meta, "scenarios", list(grouped)):
        levels = grouped[scenario]
        servers = _servers_in(meta, levels)
        description = next((each.description for each in SCENARIOS if each.name == scenario), scenario)
        latency = latency_label([summary for level in levels.values() for summary in level.values()])
        bounded = any(summary.bounds for level in levels.values() for summary in level.values())
        lines += [f"## {scenario}", "", f"{description}" + (f"; emulated latency: {latency}" if latency else "") + "."]
        lines += ["", f"![{scenario}](charts/{scenario}.png)", ""]
        header = "OK req/s (efficiency)" if bounded else "OK req/s"
        lines.append(_row(header, [f"c={level}" for level in sorted(levels)]))
        lines.append("|---|" + "---|" * len(levels))
        for name in servers:
            row = []
            for level in sorted(levels):
                s = levels[level].get(name)
                row.append("—" if s is None else s.result.record.status if s.failed else _summary_cell(s))
            lines.append(_row(name, row))
        links = ", ".join(f"[c={level}]({scenario}/concurrency-{level}.md)" for level in sorted(levels))
        lines += ["", f"Full tables: {links}.", "", *reading(scenario, levels, cpus), ""]
    return "\n".join(lines)


def write_report(run_dir: Path, out_dir: Path) -> list[Path]:
    """Render every table, chart and the summary of run_dir into out_dir; returns the files written."""
    meta = read_json(run_dir / "run.json")
    results = load_cells(run_dir)
    grouped = _by_scenario(results, meta)
    for stale in [out_dir / "charts", *(out_dir / each.name for each in SCENARIOS)]:
        if stale.is_dir():
            shutil.rmtree(stale)
    written = []
    for scenario, levels in grouped.items():
        servers = _servers_in(meta, levels)
        for level, by_server in levels.items():
            ordered = {name: by_server[name] for name in servers if name in by_server}
            path = out_dir / scenario / f"concurrency-{level}.md"
            write_text_atomic(path, cell_table(scenario, level, ordered, meta))
            written.append(path)
        path = out_dir / "charts" / f"{scenario}.png"
        write_bytes_atomic(path, chart(scenario, levels, servers))
        written.append(path)
    path = out_dir / "README.md"
    write_text_atomic(path, summary(results, meta))
    written.append(path)
    return written
