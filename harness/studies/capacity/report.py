"""The capacity study's report: capacity at the SLO per stack and scenario, where the SLO gave way and why,
every step of every search, and the closed loop against the open loop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from math import inf
from typing import Any

from harness.method.bounds import server_cpus
from harness.plan.matrix import scenario
from harness.render.summaries import driver_share, figure, header, ms, not_ok_mark, or_dash, png, rate, row
from harness.results.records import CellRecord, CellResult, Repeat, StudyRun
from harness.results.run_meta import Target, thresholds_of
from harness.run.drivers.histogram import Latencies
from harness.run.drivers.report import LoadReport
from harness.studies.base import Decision, StudyReport
from harness.studies.capacity import (
    AGREEING,
    JITTER,
    JITTER_MS,
    KEPT_UP,
    LOW_LOAD_SHARE,
    NAME,
    PRECISION,
    QUESTION,
    SEARCHED,
    STEP_SECONDS,
    WORKERS,
    held,
    kept_up,
    p99,
    settled,
)

TARGET_SCENARIOS = ("hello", "s3-unary-100ms")
# The values this report judges by, recorded in every run.
SETTINGS = {
    "slo_seconds": {name: slo for name, (slo, _) in SEARCHED.items()},
    "step_calls": None,  # no cap on a step's calls (runs before repeated steps: 2,000)
    "step_seconds": STEP_SECONDS,
    "agreeing": AGREEING,
    "kept_up": KEPT_UP,
    "precision": PRECISION,
    "low_load_share": LOW_LOAD_SHARE,
    "target_share": 0.80,  # capacity at SLO against the saturation throughput, on TARGET_SCENARIOS
    "convoy": 1.10,  # open loop (or jitter) this far above the closed loop: the closed loop was held back
    "wait_bound_share": 0.80,  # capacity this close to the wait bound: the workers, not the core, set it
    "saturated": 0.90,  # server CPU at this share of its cores or more: the knee is the CPU
    "hand_offs": 1.5,  # context switches per call this many times their low-load count: thread hand-offs grew
}


@dataclass(frozen=True)
class Pressure:
    """What the server went through in one run: its CPU and the counters it kept about itself."""

    offered: float
    cpu_share: float  # of the server's cores
    cpu_ms_per_call: float
    gc_ms_per_second: float | None  # None: the server kept no counters
    lag_ms: float | None  # mean lateness of the loop's wake-ups; None for a thread pool
    late_50ms_share: float | None  # share of wake-ups 50 ms or more late
    switches_per_call: float | None

    @classmethod
    def of(cls, repeat: Repeat, report: LoadReport, cpus: int) -> Pressure | None:
        usage, counters = repeat.resources, repeat.server_counters or {}
        if not usage.sampled or usage.wall_seconds <= 0 or report.ok == 0:
            return None
        checks = counters.get("lag_checks", 0)
        switches = counters.get("voluntary_switches", 0) + counters.get("involuntary_switches", 0)
        return cls(
            offered=report.offered_rps or 0.0,
            cpu_share=usage.cpu_seconds / (usage.wall_seconds * cpus),
            cpu_ms_per_call=1000 * usage.cpu_seconds / report.ok,
            gc_ms_per_second=1000 * counters["gc_seconds"] / usage.wall_seconds if counters else None,
            lag_ms=1000 * counters["lag_seconds"] / checks if checks else None,
            late_50ms_share=counters["late_50ms"] / checks if checks else None,
            switches_per_call=switches / report.ok if counters else None,
        )


@dataclass(frozen=True)
class CapacityCell:
    """One stack on one scenario, read back from its runs."""

    result: CellResult
    meta: dict[str, Any]
    settings: dict[str, Any]  # the values the run judges by (SETTINGS, as the run recorded them)
    slots: int | None = None  # calls the server serves at once: thread-pool workers; None for an event loop

    def _runs(self, role: str) -> list[tuple[Repeat, LoadReport]]:
        pairs = zip(self.result.record.repeats, self.result.reports, strict=True)
        return [(repeat, report) for repeat, report in pairs if repeat.role == role]

    @property
    def name(self) -> str:
        return self.result.record.server

    @property
    def failed(self) -> bool:
        return self.result.record.status != "ok"

    @property
    def slo(self) -> float | None:
        slo = self.settings["slo_seconds"].get(self.result.record.scenario)
        return float(slo) if slo is not None else None

    @property
    def steps(self) -> list[tuple[Repeat, LoadReport]]:
        """The SLO search's steps, in the order tried."""
        return self._runs("step")

    @property
    def saturation_steps(self) -> list[tuple[Repeat, LoadReport]]:
        """The saturation search's steps (none in runs before it)."""
        return self._runs("saturation")

    def holds(self, report: LoadReport) -> bool:
        slo = self.slo
        return slo is not None and held(report, slo)

    @cached_property
    def verdicts(self) -> dict[float, bool]:
        """Each offered rate of the SLO search, held or failed, as its steps settled it."""
        outcomes: dict[float, list[bool]] = {}
        for _, report in self.steps:
            outcomes.setdefault(report.offered_rps or 0.0, []).append(self.holds(report))
        return {offered: settled(found) for offered, found in outcomes.items()}

    @cached_property
    def capacity(self) -> float:
        """The highest rate held (0 when none was)."""
        return max((offered for offered, ok in self.verdicts.items() if ok), default=0.0)

    @cached_property
    def failed_at(self) -> float:
        """The lowest rate failed above the capacity (inf when none was): capacity lies below it."""
        capacity = self.capacity
        return min((offered for offered, ok in self.verdicts.items() if not ok and offered > capacity), default=inf)

    @property
    def at_capacity(self) -> tuple[Repeat, LoadReport] | None:
        """The held step at the capacity with the highest p99."""
        capacity = self.capacity
        found = [pair for pair in self.steps if pair[1].offered_rps == capacity and self.holds(pair[1])]
        return max(found, key=lambda pair: p99(pair[1]) or 0.0, default=None)

    @property
    def knee(self) -> tuple[Repeat, LoadReport] | None:
        """The first failing step at the lowest rate failed above the capacity: where the SLO gave way."""
        failed_at = self.failed_at
        found = [pair for pair in self.steps if pair[1].offered_rps == failed_at and not self.holds(pair[1])]
        return found[0] if found else None

    @property
    def saturation(self) -> float:
        """The highest OK rate any open-loop step delivered, at any latency."""
        return max((report.ok_rps for _, report in self.steps + self.saturation_steps), default=0.0)

    @property
    def capacity_text(self) -> str:
        """The capacity as the interval its steps settled: "2,100 to 2,200" (held to failed)."""
        if not self.capacity:
            low = min((report.offered_rps or 0.0 for _, report in self.steps), default=0.0)
            return f"below {rate(low)}"
        return rate(self.capacity) + ("" if self.failed_at == inf else f" to {rate(self.failed_at)}")

    @property
    def low_load(self) -> tuple[Repeat, LoadReport] | None:
        runs = self._runs("low-load")
        return runs[0] if runs and runs[0][1].ok else None

    def pressure(self, pair: tuple[Repeat, LoadReport] | None) -> Pressure | None:
        return Pressure.of(*pair, server_cpus(self.meta)) if pair else None

    def reason(self) -> str:
        """Why the SLO gave way below the CPU bound, from the knee against low load, in one clause."""
        knee, low = self.pressure(self.knee), self.pressure(self.low_load)
        if knee is None or low is None:
            return "no step failed above the capacity, so there is no knee to read"
        wait_bound = self.wait_bound
        if wait_bound is not None and self.capacity >= self.settings["wait_bound_share"] * wait_bound:
            return (
                f"its {self.slots} worker thread{'s each' if self.slots != 1 else ''} held a call for "
                f"{ms(self.low_load_latency)} at low load, so it finishes at most {rate(wait_bound)} calls/s "
                "(the wait bound) "
                f"whatever its core does: at {rate(knee.offered)} calls/s the core was {knee.cpu_share:.0%} busy"
            )
        cost = knee.cpu_ms_per_call / low.cpu_ms_per_call if low.cpu_ms_per_call else 0.0
        parts = [f"at {rate(knee.offered)} calls/s the server used {knee.cpu_share:.0%} of its core"]
        if knee.cpu_share >= self.settings["saturated"]:
            parts.append(f"and a call cost {cost:.2f}x its low-load CPU")
            switches, usual = knee.switches_per_call, low.switches_per_call
            if switches and usual and switches >= self.settings["hand_offs"] * usual:
                parts.append(
                    f"with {switches:.1f} context switches per call against {usual:.1f} at low load (thread hand-offs)"
                )
        else:
            parts.append("so something other than the CPU held the tail")
        if knee.lag_ms is not None and knee.late_50ms_share is not None:
            parts.append(
                f"the loop woke {knee.lag_ms:.1f} ms late on average, "
                f"{knee.late_50ms_share:.0%} of wake-ups by 50 ms or more"
            )
        if knee.gc_ms_per_second is not None:
            parts.append(f"GC took {knee.gc_ms_per_second:.1f} ms per second")
        return ", ".join(parts)

    @property
    def low_load_latency(self) -> float | None:
        """One call's median latency at low load, in seconds."""
        low = self.low_load
        return Latencies([low[1].histogram]).percentile(50) if low and low[1].histogram else None

    @property
    def wait_bound(self) -> float | None:
        """A thread pool's workers over one call's median latency at low load; None for an event loop."""
        alone = self.low_load_latency
        return self.slots / alone if self.slots is not None and alone else None

    @property
    def cpu_bound(self) -> float | None:
        """One server CPU's worth of calls at the CPU cost per call measured at low load."""
        low = self.low_load
        if low is None or low[0].resources.cpu_seconds <= 0:
            return None
        repeat, report = low
        return server_cpus(self.meta) / (repeat.resources.cpu_seconds / report.ok)

    @property
    def closed(self) -> tuple[Repeat, LoadReport] | None:
        runs = self._runs("closed-loop")
        return runs[0] if runs else None

    @property
    def driver_busy(self) -> bool:
        busy = thresholds_of(self.meta).driver_busy
        return any((driver_share(repeat, self.meta) or 0.0) > busy for repeat in self.result.record.repeats)


def by_scenario(run: StudyRun) -> dict[str, list[CapacityCell]]:
    """scenario -> its stacks, in the run's matrix order."""
    grouped: dict[str, list[CapacityCell]] = {}
    for cell in run.cells:
        slots = run.matrix.get("server_slots", {}).get(cell.record.server)
        grouped.setdefault(cell.record.scenario, []).append(CapacityCell(cell, run.meta, run.settings, slots))
    order = list(run.matrix["servers"])
    for stacks in grouped.values():
        stacks.sort(key=lambda each: order.index(each.name) if each.name in order else len(order))
    return grouped


def _steps_text(settings: dict[str, Any]) -> str:
    """How long a step lasted and how many had to agree, as the run recorded it."""
    if settings.get("step_calls"):  # runs before steps were repeated
        return f"each step {settings['step_calls']:,} calls or {settings['step_seconds']:g} s of them, taken once."
    return (
        f"each step at least {settings['step_seconds']:g} s of calls; a rate counts as held, or failed, once "
        f"{settings['agreeing']} steps at it agree, so a capacity is the interval from the highest rate held to the "
        "lowest failed."
    )


def _share(value: float, bound: float | None) -> str:
    return "—" if not bound else f"{value / bound:.0%}"


def _closed_text(cell: CapacityCell) -> str:
    closed = cell.closed
    return "—" if closed is None else f"{rate(closed[1].ok_rps)} (p99 {ms(p99(closed[1]))}){not_ok_mark([closed[1]])}"


def capacity_table(scenario_name: str, stacks: list[CapacityCell]) -> list[str]:
    """One row per stack: capacity at SLO (held to failed), the worst p99 held there, the saturation throughput,
    their ratio, the closed loop, and the steps each search took."""
    measured = [each for each in stacks if not each.failed]
    slo = stacks[0].slo if stacks else None
    lines = header(
        [
            f"capacity at p99 ≤ {ms(slo)}: held to failed (calls/s)",
            "p99 there",
            "saturation (OK calls/s, any latency)",
            "capacity / saturation",
            f"closed loop c={WORKERS}: OK calls/s",
            "steps: SLO, saturation",
        ],
        "stack",
    )
    for each in measured:
        best = each.at_capacity
        lines.append(
            row(
                each.name + (" **driver-busy**" if each.driver_busy else ""),
                [
                    each.capacity_text,
                    ms(p99(best[1])) if best else "—",
                    rate(each.saturation) if each.saturation else "—",
                    _share(each.capacity, each.saturation),
                    _closed_text(each),
                    f"{len(each.steps)}, {len(each.saturation_steps)}",
                ],
            )
        )
    lines += [
        f"- {each.name}: {each.result.record.status}: {each.result.record.reason}" for each in stacks if each.failed
    ]
    return lines


def knee_table(stacks: list[CapacityCell]) -> list[str]:
    """Per stack, the first failing rate against low load: CPU, CPU per call, GC, loop lag, context switches."""
    lines = header(
        [
            "knee (calls/s)",
            "server CPU",
            "CPU ms per call (low load)",
            "context switches per call (low load)",
            "GC ms per s",
            "loop lag, mean",
            "wake-ups ≥ 50 ms late",
        ],
        "stack",
    )
    for each in stacks:
        knee, low = each.pressure(each.knee), each.pressure(each.low_load)
        if knee is None:
            continue
        lines.append(
            row(
                each.name,
                [
                    rate(knee.offered),
                    f"{knee.cpu_share:.0%}",
                    f"{knee.cpu_ms_per_call:.2f} ({or_dash(low.cpu_ms_per_call if low else None, '.2f')})",
                    f"{or_dash(knee.switches_per_call, '.1f')} "
                    f"({or_dash(low.switches_per_call if low else None, '.1f')})",
                    or_dash(knee.gc_ms_per_second, ".1f"),
                    "—" if knee.lag_ms is None else f"{knee.lag_ms:.1f} ms",
                    or_dash(knee.late_50ms_share, ".0%"),
                ],
            )
        )
    return lines


KNEE_NOTE = (
    "Where the SLO gave way: the first failing rate above the capacity, against the low-load run in brackets. "
    "Server CPU is of its cores; GC is time in Python's cyclic collector; loop lag is how late a 50 ms sleep "
    "on an event loop woke (a thread pool has none); context switches count every thread of the server."
)


def steps_table(stacks: list[CapacityCell]) -> list[str]:
    """Every step of every stack, in the order tried: the SLO search's, then the saturation search's."""
    labels = ["search", "offered calls/s", "OK calls/s", "non-OK", "p50", "p99", "server CPU", "held"]
    lines = header(labels, "stack")
    for each in stacks:
        searched = [("SLO", pair, each.holds(pair[1])) for pair in each.steps]
        searched += [("saturation", pair, kept_up(pair[1])) for pair in each.saturation_steps]
        for search, (repeat, report), ok in searched:
            lines.append(
                row(
                    each.name,
                    [
                        search,
                        rate(report.offered_rps or 0.0),
                        rate(report.ok_rps),
                        str(report.non_ok),
                        ms(Latencies([report.histogram]).percentile(50) if report.histogram else None),
                        ms(p99(report)),
                        f"{repeat.resources.average_cpu_percent:.0f}%" if repeat.resources.sampled else "not sampled",
                        "yes" if ok else "no",
                    ],
                )
            )
    return lines


def chart(scenario_name: str, stacks: list[CapacityCell], title: str) -> bytes:
    """p50 and p99 against the offered rate, one line per stack, the SLO drawn."""
    drawing, (median, tail) = figure(1, 2, figsize=(11, 4.4))
    for each in stacks:
        points = sorted(
            (
                (report.offered_rps or 0.0, Latencies([report.histogram]))
                for _, report in each.steps
                if report.histogram and report.ok
            ),
            key=lambda point: point[0],
        )
        if not points:
            continue
        rates = [offered for offered, _ in points]
        median.plot(rates, [lat.percentile(50) * 1000 for _, lat in points], marker="o", label=each.name)
        tail.plot(rates, [lat.percentile(99) * 1000 for _, lat in points], marker="o", label=each.name)
    slo = stacks[0].slo if stacks else None
    for axes, label in ((median, "p50"), (tail, "p99")):
        if slo is not None:
            axes.axhline(slo * 1000, color="red", linestyle="--", linewidth=1, label=f"SLO {slo * 1000:g} ms")
        axes.set(
            title=f"{scenario_name}: {label} against offered rate", xlabel="offered calls/s", ylabel=f"{label} (ms)"
        )
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.grid(alpha=0.3)
    tail.legend(fontsize="small")
    return png(drawing, title)


def convoy_rows(run: StudyRun) -> list[tuple[str, float, float | None, float, float | None]]:
    """Per async stack on s3-unary-100ms: closed loop, closed loop with jitter, open-loop capacity, CPU bound."""
    grouped = by_scenario(run)
    plain = {each.name: each for each in grouped.get("s3-unary-100ms", []) if not each.failed}
    jittered = {each.name: each for each in grouped.get(JITTER.name, []) if not each.failed}
    found = []
    for name, each in plain.items():
        closed = each.closed
        if name not in jittered or closed is None:
            continue
        with_jitter = jittered[name].closed
        found.append(
            (name, closed[1].ok_rps, with_jitter[1].ok_rps if with_jitter else None, each.capacity, each.cpu_bound)
        )
    return found


def convoy_table(run: StudyRun) -> list[str]:
    lines = header(
        [
            f"closed loop c={WORKERS}",
            f"closed loop c={WORKERS}, {JITTER_MS} ms jitter",
            "open loop, capacity at SLO",
            "CPU bound at low load",
        ],
        "s3-unary-100ms, OK calls/s",
    )
    for name, closed, jittered, capacity, bound in convoy_rows(run):
        lines.append(
            row(
                name,
                [
                    rate(closed),
                    "—" if jittered is None else rate(jittered),
                    rate(capacity),
                    rate(bound) if bound else "—",
                ],
            )
        )
    return lines


def render(run: StudyRun) -> dict[str, bytes]:
    """results/capacity/<scenario>.md with every step, and results/capacity/charts/<scenario>.png."""
    files: dict[str, bytes] = {}
    settings = run.settings
    for scenario_name, stacks in by_scenario(run).items():
        if scenario_name not in settings["slo_seconds"]:
            continue
        lines = [
            f"# Capacity, {scenario_name}: {run.title}",
            "",
            f"{scenario(scenario_name).description}. Open loop (ghz --async --rps, {WORKERS} workers taking the "
            f"ticks), {_steps_text(settings)} A step of the SLO search holds when no call fails and p99 is at or "
            "under the SLO; a step of the saturation search when the OK calls/s reach "
            f"{settings.get('kept_up', KEPT_UP):.0%} of the offered rate. Percentiles are of each step's OK calls.",
            "",
            *capacity_table(scenario_name, stacks),
            "",
            KNEE_NOTE,
            "",
            *knee_table(stacks),
            "",
            "## Every step",
            "",
            *steps_table(stacks),
        ]
        files[f"{scenario_name}.md"] = ("\n".join(lines) + "\n").encode()
        files[f"charts/{scenario_name}.png"] = chart(scenario_name, stacks, run.title.replace("`", ""))
    return files


def section(runs: Sequence[StudyRun]) -> str:
    newest = runs[0]
    settings = newest.settings
    lines = [
        f"Newest run: {newest.title}; {newest.info.get('wall_seconds', 0) / 60:.1f} min. Open loop: calls start "
        f"at a fixed rate whether or not earlier ones finished; the search brackets the highest rate with no "
        f"failed call and p99 within the SLO (doubling, then bisection to {settings['precision']:.0%}); "
        f"{_steps_text(settings)} The saturation throughput is the highest OK rate any step delivered, at any "
        "latency, from the same search without the SLO. ghz spaces the calls evenly; real "
        "arrivals are burstier, so read each capacity as an upper bound for your traffic. Raw reports: "
        f"[`runs/{newest.run_id}`](runs/{newest.run_id}).",
        "",
    ]
    for scenario_name, stacks in by_scenario(newest).items():
        if scenario_name not in settings["slo_seconds"]:
            continue
        lines += [f"### {scenario_name}", "", f"![{scenario_name}]({NAME}/charts/{scenario_name}.png)", ""]
        lines += [f"*{scenario_name}: {newest.title}.*", "", *capacity_table(scenario_name, stacks), ""]
        lines += [KNEE_NOTE, "", *knee_table(stacks), ""]
        lines += [f"Every step: [{scenario_name}]({NAME}/{scenario_name}.md).", ""]
    if convoy_rows(newest):
        lines += ["### Closed loop against open loop", "", f"*{newest.title}.*", "", *convoy_table(newest), ""]
    return "\n".join(lines)


def _convoy_verdict(run: StudyRun) -> str:
    parts = []
    convoy = run.settings["convoy"]
    for name, closed, jittered, capacity, _ in convoy_rows(run):
        lifted = capacity >= closed * convoy or (jittered is not None and jittered >= closed * convoy)
        parts.append(
            f"{name} {rate(closed)} closed, {rate(jittered) if jittered is not None else '—'} with jitter, "
            f"{rate(capacity)} open ({'held back' if lifted else 'not held back'})"
        )
    return "; ".join(parts)


def answer(runs: Sequence[StudyRun]) -> str:
    """Capacity at SLO per scenario, its share of the CPU bound, and whether the closed loop hid capacity."""
    newest = runs[0]
    settings = newest.settings
    share = settings["target_share"]
    parts = [f"On {newest.cpu_model} (run `{newest.run_id}`), one server core, open loop:"]
    for scenario_name, stacks in by_scenario(newest).items():
        if scenario_name not in settings["slo_seconds"]:
            continue
        ranked = sorted((each for each in stacks if not each.failed), key=lambda each: -each.capacity)
        if not ranked:
            continue
        slo = settings["slo_seconds"][scenario_name]
        listing = ", ".join(
            f"{each.name} {each.capacity_text}"
            + (f" ({_share(each.capacity, each.saturation)} of its saturation)" if each.saturation else "")
            for each in ranked
        )
        parts.append(f"{scenario_name} within p99 ≤ {slo * 1000:g} ms: {listing} calls/s.")
        if scenario_name in TARGET_SCENARIOS:
            short = [each for each in ranked if each.saturation and each.capacity < share * each.saturation]
            parts += [
                f"{each.name} held the SLO below {share:.0%} of its saturation on {scenario_name}: {each.reason()}."
                for each in short
            ]
    verdict = _convoy_verdict(newest)
    if verdict:
        parts.append(
            f"On s3-unary-100ms the closed loop at c={WORKERS} against {JITTER_MS} ms of jitter and the open loop: "
            f"{verdict}. Where the open loop or jitter lifts throughput by {settings['convoy'] - 1:.0%} or more, "
            "the closed "
            "loop's convoy, not the stack, held it back."
        )
    return " ".join(parts)


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Target]:
    """Capacity at SLO at least the target share of the saturation throughput on TARGET_SCENARIOS, per stack
    (reported)."""
    grouped = by_scenario(run)
    share = run.settings["target_share"]
    shares: dict[str, float] = {}
    for scenario_name in TARGET_SCENARIOS:
        for each in grouped.get(scenario_name, []):
            if not each.failed and each.saturation:
                shares[f"{scenario_name}/{each.name}"] = round(each.capacity / each.saturation, 3)
    met = all(v >= share for v in shares.values())
    return {f"capacity_at_{share:.0%}_of_saturation".replace("%", "_percent"): Target(met, {"by_cell": shares})}


def decisions(runs: Sequence[StudyRun]) -> list[Decision]:
    """A row per SLO scenario of the newest run: the stack with the highest capacity at the SLO. A capacity is the
    interval between the highest rate held and the lowest failed; the pick is ahead only where its interval lies
    wholly above the runner-up's, and the row says so."""
    newest = runs[0]
    found = []
    for scenario_name in TARGET_SCENARIOS:
        stacks = sorted(
            (each for each in by_scenario(newest).get(scenario_name, []) if not each.failed and each.capacity),
            key=lambda each: -each.capacity,
        )
        if len(stacks) < 2:
            continue
        top, runner, last = stacks[0], stacks[1], stacks[-1]
        slo = newest.settings["slo_seconds"][scenario_name]
        found.append(
            Decision(
                question="The load one core takes within its p99 SLO: which stack?",
                workload=f"{scenario_name}/p99 ≤ {slo * 1000:g} ms",
                pick=top.name,
                runner_up=runner.name,
                over_runner_up=f"{top.capacity / runner.capacity:.2f} ({top.capacity_text} against "
                f"{runner.capacity_text} calls/s, open loop)",
                over_reference="—",
                verdict="ahead (the capacities do not overlap)"
                if top.capacity >= runner.failed_at
                else "unresolved (the capacities overlap)",
                avoid=f"{last.name} ({last.capacity / top.capacity:.2f} of the pick)",
                study=NAME,
                run_id=newest.run_id,
                machine=newest.cpu_model,
            )
        )
    return found


def search_steps(record: CellRecord, repeat: Repeat) -> bool:
    """A search step above the capacity fails calls when the server falls behind: that is how the knee shows."""
    return repeat.role in ("step", "saturation")


REPORT = StudyReport(
    name=NAME,
    question=QUESTION,
    follows="open-loop capacity testing (constant arrival rate, as ghz --async --rps offers it), against the closed "
    "loop of the 2020 study",
    render=render,
    section=section,
    answer=answer,
    targets=targets,
    settings=SETTINGS,
    default=False,  # 5 to 6 minutes per stack and scenario on a 2-core machine: run it with --study capacity
    expected_non_ok=search_steps,
    decisions=decisions,
)
