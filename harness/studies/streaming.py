"""The streaming study: when does streaming beat paging, and how to stream well?

Four parts, all driven by our Go driver (loadgen), so the client's cost is one and the same:
- fetch all: the 10,000 objects of a bucket in 10 top-level prefixes, with S3 0 and 20 ms away: paging
  (the client follows ListObjectsPage's tokens, 1,000 a page), one stream (StreamObjects, batch 1,000),
  and the server listing 4 or 10 prefixes at once (parallelism). With one client: the time to fetch
  everything (median of FETCHES_ALONE); with FETCH_CLIENTS clients: fetch-alls per second;
- stream for a unary reply: SayHello against SayHelloStream at concurrency 10 and 50; at 50, SayHello is
  also driven by ghz, to cross-check loadgen against it;
- batch size: StreamObjects of the 893-object bucket with 1, 10, 100 and 1,000 objects a message, at 10;
- watch: 10, 100 and 1,000 Sensor.Watch streams at once, each watching one of WATCH_SENSORS sensors.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.drivers import DriverError, LoadReport
from harness.drivers.loadgen import FetchCounts, WatchOutcome, is_fetch, is_watch
from harness.matrix import (
    BENCH_BUCKET,
    BENCH_OBJECTS,
    SCENARIOS,
    WIDE_BUCKET,
    WIDE_OBJECTS,
    WIDE_PREFIXES,
    Cell,
    Scenario,
    server_variant,
)
from harness.measure import (
    RUN_TIMEOUT,
    CellContext,
    measure_against,
    measure_closed_loop,
    new_record,
    sampled_run,
)
from harness.options import RunOptions
from harness.processes import Child, ProcessError
from harness.results import CellRecord, Repeat, StudyRun, read_json, save_report
from harness.studies.base import Axis, Study
from harness.studies.reading import (
    Measured,
    busiest_driver,
    cross_check_pairs,
    cross_check_sentence,
    cross_checked_targets,
    driver_cross_check_table,
    failed_cells,
    failures,
    measured,
    newest_run_section,
    or_dash,
    study_readme,
)
from harness.summaries import MIB, header, png, row

NAME = "streaming"
SERVERS = ("sync-w10", "grpclib-uvloop", "aio-uvloop")  # one variant per stack unless --servers says otherwise

# Fetch all.
FETCH_LATENCIES_MS = (0, 20)
PAGE_SIZE = 1000
FETCH_PATTERNS: dict[str, tuple[str, dict[str, int]]] = {
    "paging": ("bench.v1.ObjectStore.ListObjectsPage", {"page_size": PAGE_SIZE}),
    "stream": ("bench.v1.ObjectStore.StreamObjects", {"batch_size": PAGE_SIZE, "parallelism": 1}),
    "parallel-4": ("bench.v1.ObjectStore.StreamObjects", {"batch_size": PAGE_SIZE, "parallelism": 4}),
    "parallel-10": ("bench.v1.ObjectStore.StreamObjects", {"batch_size": PAGE_SIZE, "parallelism": 10}),
}
FETCH_CLIENTS = (1, 4)
WARMUP = "warmup"  # a fetch-all cell's warm-up report: <cell>-warmup.json
FETCHES_ALONE = 5  # fetch-alls by one client: its time is their median
FETCHES_EACH = 2  # fetch-alls per client when several fetch at once
CPU_BOUND_SHARE = 0.80  # a fetch-all that kept the server's core this busy is bound by its CPU

# Stream for a unary reply, and the cross-check against ghz.
UNARY_LEVELS = (10, 50)
CROSS_CHECK_LEVEL = 50
TIE = 0.05  # a stream within this share of unary calls/s is neither faster nor slower

# Batch size.
BATCH_SIZES = (1, 10, 100, 1000)
BATCH_LEVEL = 10

# Watch.
WATCH_STREAMS = (10, 100, 1000)
WATCH_SENSORS = 100  # stream i watches sensor s<i mod 100>: at 1,000 streams, ten watchers a sensor
WATCH_SECONDS = 10
WATCH_INTERVAL_MS = 100  # the servers' default --sensor-interval-ms
ESTABLISHED_SHARE = 0.99  # a stack "holds" a watch level when this share of streams was created within 1 s

# The Go studies this one follows, as they reported (the summary of them).
GO_PAGING_SPEEDUP = (2.7, 4.8)  # parallel server-side fetch over paging, 18K and 1.04M MySQL rows
GO_BATCH_SPEEDUP = 1.75  # a listing with 10 items a message against 1 a message


def fetch_scenario(pattern: str, latency_ms: int) -> Scenario:
    call, extra = FETCH_PATTERNS[pattern]
    kind = "paging" if pattern == "paging" else "stream"
    return Scenario(
        f"fetch-{pattern}-{latency_ms}ms",
        call,
        {"pattern": kind, "bucket": WIDE_BUCKET, "objects": WIDE_OBJECTS, **extra},
        f"fetch all {WIDE_OBJECTS:,} objects ({WIDE_PREFIXES} prefixes) by {pattern}, S3 {latency_ms} ms away",
        1,
        bucket=WIDE_BUCKET,
        s3_latency_ms=latency_ms,
    )


FETCH_SCENARIOS = tuple(fetch_scenario(p, ms) for ms in FETCH_LATENCIES_MS for p in FETCH_PATTERNS)
HELLO = next(each for each in SCENARIOS if each.name == "hello")
HELLO_STREAM = replace(
    HELLO, name="hello-stream", call="bench.v1.Greeter.SayHelloStream", description="SayHelloStream: one message"
)
BATCH_SCENARIOS = tuple(
    Scenario(
        f"batch-{size}",
        "bench.v1.ObjectStore.StreamObjects",
        {"bucket": BENCH_BUCKET, "batch_size": size},
        f"StreamObjects of the {BENCH_OBJECTS}-object bucket, {size} a message",
        20,
        bucket=BENCH_BUCKET,
    )
    for size in BATCH_SIZES
)
WATCH = Scenario(
    "watch",
    "bench.v1.Sensor.Watch",
    {"sensors": WATCH_SENSORS, "seconds": WATCH_SECONDS, "interval_ms": WATCH_INTERVAL_MS},
    f"Sensor.Watch streams, one sensor each, {WATCH_SECONDS} s counted",
    0,
)


def cells(options: RunOptions) -> list[Cell]:
    """Each server on every part; a part's cells of one scenario in a row (one server start serves them)."""
    servers = options.servers or tuple(server_variant(name) for name in SERVERS)
    plan = [
        *[(each, FETCH_CLIENTS) for each in FETCH_SCENARIOS],
        (HELLO, UNARY_LEVELS),
        (HELLO_STREAM, UNARY_LEVELS),
        *[(each, (BATCH_LEVEL,)) for each in BATCH_SCENARIOS],
        (WATCH, WATCH_STREAMS),
    ]
    return [Cell(server, each, level) for each, levels in plan for server in servers for level in levels]


def _failed(record: CellRecord, error: Exception) -> CellRecord:
    return replace(record, status="failed", reason=str(error).strip().splitlines()[0][:500])


def measure(cell: Cell, target: str, child: Child | None, context: CellContext, probe_file: str) -> CellRecord:
    """A fetch-all, watch or closed-loop cell, by its scenario; hello at the cross-check level also by ghz."""
    if is_fetch(cell):
        return measure_fetch(cell, target, child, context)
    if is_watch(cell):
        return measure_watch(cell, target, child, context)
    requests = context.options.requests
    if requests and requests < cell.concurrency:  # a smoke run (--requests): at least a call per worker
        context = replace(context, options=replace(context.options, requests=cell.concurrency))
    if cell.scenario.name == HELLO.name and cell.concurrency == CROSS_CHECK_LEVEL:
        return measure_against("ghz", cell, target, child, context, probe_file)
    return measure_closed_loop(cell, target, child, context, probe_file)


def measure_fetch(cell: Cell, target: str, child: Child | None, context: CellContext) -> CellRecord:
    """One fetch-all per client thrown away, then FETCHES_ALONE fetch-alls by one client, or FETCHES_EACH
    per client by several. The warm-up's report is kept: its failed calls are told with the run's."""
    begun = time.monotonic()
    record = new_record(cell, context.options)
    driver, clients = context.driver, cell.concurrency
    repeats: list[Repeat] = []
    try:
        warmup = driver.run(driver.argv(context.tool, cell, target, clients), RUN_TIMEOUT)
        save_report(context.study_dir, f"{record.stem}-{WARMUP}.json", warmup.raw)
        if warmup.report.ok == 0:
            raise DriverError(f"no warm-up fetch-all was OK: {warmup.report.status_codes} {warmup.report.errors}")
        total = clients if context.options.requests else (FETCHES_ALONE if clients == 1 else FETCHES_EACH * clients)
        argv = driver.argv(context.tool, cell, target, total)
        repeats.append(sampled_run(argv, child, context, f"{record.stem}-r1.json", total)[0])
    except (ProcessError, DriverError, OSError) as error:
        record = _failed(record, error)
    return replace(record, repeats=repeats, seconds=round(time.monotonic() - begun, 3))


def measure_watch(cell: Cell, target: str, child: Child | None, context: CellContext) -> CellRecord:
    """cell.concurrency streams at once, for the scenario's window (shortened to 2 s by --requests)."""
    begun = time.monotonic()
    record = new_record(cell, context.options)
    if context.options.requests:
        cell = replace(cell, scenario=replace(cell.scenario, data={**cell.scenario.data, "seconds": 2}))
    repeats: list[Repeat] = []
    try:
        argv = context.driver.argv(context.tool, cell, target, cell.concurrency)
        repeats.append(sampled_run(argv, child, context, f"{record.stem}-r1.json", cell.concurrency)[0])
    except (ProcessError, DriverError, OSError) as error:
        record = _failed(record, error)
    return replace(record, repeats=repeats, seconds=round(time.monotonic() - begun, 3))


# --- reading a run -------------------------------------------------------------------------------------


def servers_of(run: StudyRun) -> list[str]:
    return list(run.matrix.get("servers", SERVERS))


def _errors(report: LoadReport) -> str:
    return "; ".join(f"{count} × {error}" for error, count in sorted(report.errors.items())) or str(report.status_codes)


def failed_calls(run: StudyRun) -> list[str]:
    """Cells that finished with calls that were not OK, in a fetch-all's warm-up or in a run: which and why."""
    found = []
    for result in run.cells:
        record = result.record
        runs = [(f"{repeat.role} run", report) for repeat, report in zip(record.repeats, result.reports, strict=True)]
        warmup = run.run_dir / NAME / f"{record.stem}-{WARMUP}.json"
        if warmup.is_file():
            runs.insert(0, ("warm-up", LoadReport.from_json(read_json(warmup))))
        found += [
            f"{record.key}, {label}: {report.non_ok} of {report.count} failed: {_errors(report)}"
            for label, report in runs
            if report.non_ok
        ]
    return found


# --- fetch all -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchCell:
    """One stack and pattern at one S3 latency: alone and with several clients."""

    server: str
    pattern: str
    latency_ms: int
    alone: Measured | None
    together: Measured | None

    @property
    def seconds(self) -> float | None:
        """The time to fetch everything with one client: the median fetch-all."""
        if self.alone is None or self.alone.report.ok == 0:
            return None
        return self.alone.report.percentiles.get(50) or self.alone.report.average

    @property
    def cpu_per_fetch(self) -> float | None:
        """Server CPU seconds per fetch-all, with one client."""
        if self.alone is None or self.alone.report.ok == 0:
            return None
        return self.alone.repeat.resources.cpu_seconds / self.alone.report.ok

    @property
    def busy(self) -> float | None:
        """The share of a lone fetch-all's time the server's core was busy with it."""
        cpu, seconds = self.cpu_per_fetch, self.seconds
        return cpu / seconds if cpu is not None and seconds else None

    @property
    def rate(self) -> float | None:
        """Fetch-alls per second with several clients."""
        return self.together.report.ok_rps if self.together is not None else None

    @property
    def of_cpu_bound(self) -> float | None:
        """Fetch-alls/s with several clients against one core's worth of fetch-alls (1 / CPU per fetch-all)."""
        rate, cpu = self.rate, self.cpu_per_fetch
        return rate * cpu if rate is not None and cpu is not None else None

    @property
    def bound(self) -> str:
        """What bounds a lone fetch-all, and how close it came."""
        busy = self.busy
        if busy is None:
            return "—"
        if busy >= CPU_BOUND_SHARE:
            return f"server CPU ({busy:.0%} busy)"
        return f"waits on S3 and round trips (CPU {busy:.0%} busy)"

    @property
    def messages(self) -> tuple[float, float] | None:
        """RPCs and messages per fetch-all."""
        if self.alone is None or self.alone.report.count == 0:
            return None
        counts = FetchCounts.from_json(self.alone.raw)
        return counts.rpcs / self.alone.report.count, counts.messages / self.alone.report.count


def fetch_cells(run: StudyRun) -> list[FetchCell]:
    found = measured(run)
    return [
        FetchCell(
            server,
            pattern,
            ms,
            found.get((fetch_scenario(pattern, ms).name, server, 1)),
            found.get((fetch_scenario(pattern, ms).name, server, FETCH_CLIENTS[-1])),
        )
        for ms in FETCH_LATENCIES_MS
        for server in servers_of(run)
        for pattern in FETCH_PATTERNS
    ]


def fetch_table(run: StudyRun, latency_ms: int) -> list[str]:
    labels = [
        "time to fetch all, 1 client",
        f"fetch-alls/s, {FETCH_CLIENTS[-1]} clients (of CPU bound)",
        "RPCs / messages per fetch-all",
        "server CPU per fetch-all",
        "bound (1 client)",
        f"server CPU, {FETCH_CLIENTS[-1]} clients",
        "driver CPU",
    ]
    lines = header(labels, "stack / pattern")
    for each in fetch_cells(run):
        if each.latency_ms != latency_ms:
            continue
        messages = each.messages
        lines.append(
            row(
                f"{each.server} / {each.pattern}",
                [
                    or_dash(each.seconds, ".2f") + (" s" if each.seconds is not None else ""),
                    or_dash(each.rate, ".2f") + ("" if each.of_cpu_bound is None else f" ({each.of_cpu_bound:.0%})"),
                    "—" if messages is None else f"{messages[0]:g} / {messages[1]:g}",
                    or_dash(each.cpu_per_fetch, ".2f") + (" s" if each.cpu_per_fetch is not None else ""),
                    each.bound,
                    "—" if each.together is None else f"{each.together.server_cpu:.0%}",
                    busiest_driver(run, [each.alone, each.together]),
                ],
            )
        )
    return lines


# --- stream for a unary reply, cross-check, batch size ---------------------------------------------------


def unary_table(run: StudyRun) -> list[str]:
    found = measured(run)
    labels = [f"c={level}: {name}" for level in UNARY_LEVELS for name in ("SayHello", "SayHelloStream", "stream/unary")]
    lines = header([*labels, "driver CPU"], "stack (OK calls/s)")
    for server in servers_of(run):
        values = []
        driven = [found.get((each.name, server, level)) for each in (HELLO, HELLO_STREAM) for level in UNARY_LEVELS]
        for level in UNARY_LEVELS:
            unary, stream = found.get((HELLO.name, server, level)), found.get((HELLO_STREAM.name, server, level))
            values += [
                "—" if unary is None else f"{unary.report.ok_rps:,.0f}",
                "—" if stream is None else f"{stream.report.ok_rps:,.0f}",
                "—" if unary is None or stream is None else f"{stream.report.ok_rps / unary.report.ok_rps:.2f}",
            ]
        lines.append(row(server, [*values, busiest_driver(run, driven)]))
    return lines


def cross_check_runs(run: StudyRun) -> dict[str, tuple[Measured, Measured]]:
    """server -> (loadgen's, ghz's) median run of SayHello at the cross-check level."""
    return cross_check_pairs(run, HELLO.name, CROSS_CHECK_LEVEL, servers_of(run))


def cross_check_table(run: StudyRun) -> list[str]:
    return driver_cross_check_table(run, cross_check_runs(run))


def batch_rates(run: StudyRun) -> dict[str, dict[int, float]]:
    """server -> batch size -> OK calls/s."""
    found = measured(run)
    return {
        server: {
            size: found[key].report.ok_rps
            for size in BATCH_SIZES
            if (key := (f"batch-{size}", server, BATCH_LEVEL)) in found
        }
        for server in servers_of(run)
    }


def batch_table(run: StudyRun) -> list[str]:
    found = measured(run)
    lines = header([f"batch {size}" for size in BATCH_SIZES] + ["10 over 1", "driver CPU"], "stack (OK calls/s)")
    for server, rates in batch_rates(run).items():
        gain = rates[10] / rates[1] if rates.get(1) and 10 in rates else None
        driven = [found.get((f"batch-{size}", server, BATCH_LEVEL)) for size in BATCH_SIZES]
        cells = [or_dash(rates.get(size), ",.1f") for size in BATCH_SIZES]
        lines.append(row(server, [*cells, or_dash(gain, ".2f"), busiest_driver(run, driven)]))
    return lines


def batch_chart(run: StudyRun) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for server, rates in batch_rates(run).items():
        sizes = sorted(rates)
        axes.plot(sizes, [rates[size] for size in sizes], marker="o", label=server)
    axes.set(
        xscale="log",
        xlabel="objects per message (batch size)",
        ylabel="OK calls/s",
        title=f"StreamObjects of {BENCH_OBJECTS} objects at c={BATCH_LEVEL}",
    )
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    return png(figure, run.title.replace("`", ""))


# --- watch ---------------------------------------------------------------------------------------------


def watch_table(run: StudyRun) -> list[str]:
    found = measured(run)
    labels = [
        "created within 1 s",
        "later / never",
        "readings/s (expected)",
        "reading latency p50",
        "p99",
        "server CPU",
        "server RSS",
        "driver CPU",
    ]
    lines = header(labels, "stack / streams")
    for server in servers_of(run):
        for streams in WATCH_STREAMS:
            each = found.get((WATCH.name, server, streams))
            if each is None:
                lines.append(row(f"{server} / {streams:,}", ["failed"] + [""] * (len(labels) - 1)))
                continue
            outcome = WatchOutcome.from_json(each.raw)
            window = each.report.total
            lines.append(
                row(
                    f"{server} / {streams:,}",
                    [
                        f"{outcome.established:,}",
                        f"{outcome.established_late:,} / {outcome.not_established:,}",
                        f"{each.report.ok_rps:,.0f} ({outcome.expected_readings / window:,.0f})",
                        _ms(each.report.percentiles.get(50)),
                        _ms(each.report.percentiles.get(99)),
                        f"{each.server_cpu:.0%}",
                        f"{each.repeat.resources.peak_rss_bytes / MIB:,.0f} MiB",
                        or_dash(each.driver_cpu(run.meta), ".0%"),
                    ],
                )
            )
    return lines


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:.1f} ms"


def watch_limits(run: StudyRun) -> dict[str, int]:
    """server -> the most streams at which it created ESTABLISHED_SHARE of them within 1 s (0: none)."""
    found = measured(run)
    limits = {}
    for server in servers_of(run):
        held = [
            streams
            for streams in WATCH_STREAMS
            if (each := found.get((WATCH.name, server, streams))) is not None
            and WatchOutcome.from_json(each.raw).established >= ESTABLISHED_SHARE * streams
        ]
        limits[server] = max(held, default=0)
    return limits


# --- the study's files, section and answer ---------------------------------------------------------------


def tables(run: StudyRun) -> list[str]:
    lines: list[str] = []
    for latency_ms in FETCH_LATENCIES_MS:
        lines += [
            f"### Fetch all {WIDE_OBJECTS:,} objects, S3 {latency_ms} ms away",
            "",
            f"Paging follows ListObjectsPage's tokens ({PAGE_SIZE:,} a page); stream is one StreamObjects "
            f"(batch {PAGE_SIZE:,}); parallel-N lists N of the {WIDE_PREFIXES} prefixes at once on the server. Time: "
            f"median of the fetch-alls by one client ({FETCHES_ALONE} in a full run). Bound: server CPU when its "
            f"core was busy {CPU_BOUND_SHARE:.0%} or more of a lone fetch-all, else waits on S3 and round trips.",
            "",
            *fetch_table(run, latency_ms),
            "",
        ]
    lines += [
        "### A stream for a unary reply",
        "",
        "Driver CPU, here and below: the highest share of the CPUs the driver had, over the row's runs.",
        "",
        *unary_table(run),
        "",
    ]
    lines += [
        f"Cross-check of our driver: SayHello at c={CROSS_CHECK_LEVEL} by loadgen and by ghz on the same server "
        f"(driver CPU as a share of the CPUs the driver had).",
        "",
        *cross_check_table(run),
        "",
    ]
    lines += [
        "### Batch size",
        "",
        f"![batch size]({NAME}/charts/batch-size.png)",
        "",
        *batch_table(run),
        "",
    ]
    lines += [
        "### Watch",
        "",
        f"Streams opened at once, each watching one of {WATCH_SENSORS} sensors (a reading every "
        f"{WATCH_INTERVAL_MS} ms), readings counted for {WATCH_SECONDS} s after 2 s to settle. Latency: receipt "
        "time minus the reading's timestamp, same host clock.",
        "",
        *watch_table(run),
        "",
    ]
    lines += failed_cells(run)
    calls = failed_calls(run)
    if calls:
        lines += ["Calls that were not OK (the throughput above counts OK calls only):", ""]
        lines += [*[f"- {each}" for each in calls], ""]
    return lines


def render(run: StudyRun) -> dict[str, bytes]:
    """results/streaming/README.md with every table, and the batch-size chart."""
    return {
        "README.md": study_readme(NAME, f"# Streaming: {run.title}", tables(run)),
        "charts/batch-size.png": batch_chart(run),
    }


def section(runs: Sequence[StudyRun]) -> str:
    return newest_run_section(runs, tables, "our Go driver (`loadgen/`)")


def _fetch_answer(run: StudyRun) -> list[str]:
    cells = fetch_cells(run)
    parts = []
    for latency_ms in FETCH_LATENCIES_MS:
        phrases = []
        for server in servers_of(run):
            by = {c.pattern: c for c in cells if c.server == server and c.latency_ms == latency_ms}
            times = {pattern: c.seconds for pattern, c in by.items()}
            if any(seconds is None for seconds in times.values()):
                continue
            paging, stream = times["paging"] or 0.0, times["stream"] or 0.0
            best = min(by.values(), key=lambda c: c.seconds or 0.0)
            best_seconds = best.seconds or 0.0
            phrases.append(
                f"{server} paging {paging:.2f} s, one stream {stream:.2f} s ({paging / stream:.2f}x), best "
                f"{best.pattern} {best_seconds:.2f} s ({paging / best_seconds:.2f}x, bound by {best.bound})"
            )
        if phrases:
            parts.append(f"with S3 {latency_ms} ms away: " + "; ".join(phrases))
    if not parts:
        return []
    measured_cells = [c for c in cells if c.busy is not None and c.cpu_per_fetch is not None]
    busy = [c.busy or 0.0 for c in measured_cells]
    cpu = [c.cpu_per_fetch or 0.0 for c in measured_cells]
    return [
        f"**Fetch all {WIDE_OBJECTS:,} objects** (one client; speed-up over paging): "
        + ". ".join(parts)
        + f". The Go study found plain streaming no faster than paging on localhost and a server fetching pages "
        f"in parallel {GO_PAGING_SPEEDUP[0]:g}x to {GO_PAGING_SPEEDUP[1]:g}x faster. Here the server's core was busy "
        f"{min(busy):.0%} to {max(busy):.0%} of every lone fetch-all ({min(cpu):.2f} to {max(cpu):.2f} s of CPU for "
        f"{WIDE_OBJECTS:,} objects, most of it parsing S3's pages), so no pattern can be much more than "
        f"{1 / min(busy):.1f}x faster than another: on one core, the pattern matters little."
    ]


def _watch_answer(run: StudyRun) -> list[str]:
    limits = watch_limits(run)
    if not limits:
        return []
    found, slots = measured(run), run.matrix.get("server_slots", {})
    pools = []
    for server, workers in slots.items():
        beyond = [streams for streams in WATCH_STREAMS if workers is not None and streams > workers]
        each = found.get((WATCH.name, server, beyond[-1])) if beyond else None
        if each is not None:
            outcome = WatchOutcome.from_json(each.raw)
            pools.append(
                f"{server} has {workers} workers, each held by an open stream: of {beyond[-1]:,} streams it created "
                f"{outcome.established:,} within 1 s and the others only as earlier streams closed "
                f"({outcome.established_late:,} late, {outcome.not_established:,} never)"
            )
    return [
        f"**Watch streams**: each stack created at least {ESTABLISHED_SHARE:.0%} of them within 1 s up to "
        + ", ".join(
            f"{server} {limit:,}" if limit else f"{server} not even {WATCH_STREAMS[0]}"
            for server, limit in limits.items()
        )
        + " streams."
        + (" " + "; ".join(pools) + "." if pools else "")
    ]


def answer(runs: Sequence[StudyRun]) -> str:
    run = runs[0]
    parts = _fetch_answer(run)
    found = measured(run)
    ratios: dict[str, float] = {}
    for server in servers_of(run):
        unary, stream = (found.get((each.name, server, CROSS_CHECK_LEVEL)) for each in (HELLO, HELLO_STREAM))
        if unary is not None and stream is not None and unary.report.ok_rps:
            ratios[server] = stream.report.ok_rps / unary.report.ok_rps
    if ratios:
        verdicts = {
            "slower": [name for name, ratio in ratios.items() if ratio < 1 - TIE],
            "within 5% of it": [name for name, ratio in ratios.items() if abs(ratio - 1) <= TIE],
            "faster": [name for name, ratio in ratios.items() if ratio > 1 + TIE],
        }
        parts.append(
            f"**A stream for a one-message reply** runs at this share of SayHello's calls/s at c={CROSS_CHECK_LEVEL}: "
            + ", ".join(f"{server} {ratio:.2f}" for server, ratio in ratios.items())
            + ": the stream was "
            + "; ".join(f"{verdict} on {', '.join(names)}" for verdict, names in verdicts.items() if names)
            + " (the Go study: a stream only adds cost)."
        )
    gains = [
        f"{server} {rates[10] / rates[1]:.2f}x (batch 100: {rates[100] / rates[1]:.2f}x)"
        for server, rates in batch_rates(run).items()
        if all(size in rates for size in (1, 10, 100)) and rates[1]
    ]
    if gains:
        parts.append(
            f"**Batching** 10 objects a message against 1 lifts StreamObjects' calls/s: {', '.join(gains)} "
            f"(the Go study: {GO_BATCH_SPEEDUP:g}x)."
        )
    parts += _watch_answer(run)
    failed = failures(run)
    if failed:
        parts.append(f"{len(failed)} cells failed (listed under the tables): " + "; ".join(failed) + ".")
    calls = failed_calls(run)
    if calls:
        parts.append(f"{len(calls)} runs or warm-ups had calls that were not OK (listed under the tables).")
    checked = cross_check_sentence(run, cross_check_runs(run), f"SayHello at c={CROSS_CHECK_LEVEL}")
    if checked:
        parts.append(checked)
    return " ".join(parts) if parts else "No cell of this study finished in the newest run."


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Any]:
    """Our driver within 10% of ghz on SayHello; no failed cell."""
    return cross_checked_targets(run, {"ghz": cross_check_runs(run)}, wall_seconds, full_matrix)


STREAMING = Study(
    name=NAME,
    question="When does streaming beat paging, and how should we stream?",
    follows="two public Go studies: paging against streaming against a server fetching in parallel (MySQL rows), "
    "and stream-for-unary, batch sizes and a bidirectional watch",
    # Fetch patterns, S3 latency, batch sizes and watch streams are fixed: the issue's own values.
    axes=(Axis("server", SERVERS, "--servers"),),
    driver="loadgen",
    # Closed-loop cells; the cross-check makes measure.CROSS_CHECK_REPEATS runs by each driver. A fetch-all cell makes
    # FETCHES_ALONE fetch-alls (or FETCHES_EACH per client) in one run, a watch cell one run.
    repeats=3,
    cells=cells,
    measure=measure,
    render=render,
    section=section,
    answer=answer,
    targets=targets,
    default=False,  # run it with --study streaming
)
