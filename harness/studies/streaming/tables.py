"""The streaming study's tables: fetch-alls by paging, one stream and a server listing prefixes in parallel; a
stream for a unary reply; the cross-check; batch sizes and their chart; Watch streams. Report-side: reads only the
run's files."""

from __future__ import annotations

from dataclasses import dataclass

from harness.plan.matrix import BENCH_OBJECTS
from harness.render.summaries import MIB, chart_title, or_dash
from harness.render.table import Block, Table
from harness.render.vega import Axis, lines, png
from harness.results.load import FetchCounts, WatchOutcome
from harness.results.records import StudyRun
from harness.studies.reading import (
    Measured,
    busiest_driver,
    cross_check_pairs,
    driver_cross_check_table,
    measured,
)
from harness.studies.streaming import (
    BATCH_LEVEL,
    BATCH_SIZES,
    CROSS_CHECK_LEVEL,
    CROSS_CHECKED,
    DRIVER_CHECK,
    FETCH_CLIENTS,
    FETCH_LATENCIES_MS,
    FETCH_PATTERNS,
    HELLO,
    HELLO_STREAM,
    SERVERS,
    UNARY_LEVELS,
    WATCH,
    WATCH_STREAMS,
    fetch_scenario,
)

# --- reading a run -------------------------------------------------------------------------------------


def servers_of(run: StudyRun) -> list[str]:
    return list(run.matrix.get("servers", SERVERS))


# --- fetch all -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchCell:
    """One stack and pattern at one S3 latency: alone and with several clients."""

    server: str
    pattern: str
    latency_ms: int
    alone: Measured | None
    together: Measured | None
    cpu_bound_share: float  # a lone fetch-all that kept the server's core this busy is bound by its CPU

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
        if busy >= self.cpu_bound_share:
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
            run.settings["cpu_bound_share"],
        )
        for ms in FETCH_LATENCIES_MS
        for server in servers_of(run)
        for pattern in FETCH_PATTERNS
    ]


def fetch_table(run: StudyRun, latency_ms: int) -> list[Block]:
    labels = [
        "time to fetch all, 1 client",
        f"fetch-alls/s, {FETCH_CLIENTS[-1]} clients (of CPU bound)",
        "RPCs / messages per fetch-all",
        "server CPU per fetch-all",
        "bound (1 client)",
        f"server CPU, {FETCH_CLIENTS[-1]} clients",
        "driver CPU",
    ]
    table = Table(f"fetch {latency_ms} ms", ["stack / pattern", *labels])
    for each in fetch_cells(run):
        if each.latency_ms != latency_ms:
            continue
        messages = each.messages
        table.add(
            f"{each.server} / {each.pattern}",
            [
                or_dash(each.seconds, ".2f")
                + (" s" if each.seconds is not None else "")
                + (each.alone.not_ok if each.alone else ""),
                or_dash(each.rate, ".2f")
                + ("" if each.of_cpu_bound is None else f" ({each.of_cpu_bound:.0%})")
                + (each.together.not_ok if each.together else ""),
                "—" if messages is None else f"{messages[0]:g} / {messages[1]:g}",
                or_dash(each.cpu_per_fetch, ".2f") + (" s" if each.cpu_per_fetch is not None else ""),
                each.bound,
                "—" if each.together is None else f"{each.together.server_cpu:.0%}",
                busiest_driver(run, [each.alone, each.together]),
            ],
        )
    return [table]


# --- stream for a unary reply, cross-check, batch size ---------------------------------------------------


def unary_table(run: StudyRun) -> list[Block]:
    found = measured(run)
    labels = [f"c={level}: {name}" for level in UNARY_LEVELS for name in ("SayHello", "SayHelloStream", "stream/unary")]
    table = Table("stream for a unary reply", ["stack (OK calls/s)", *labels, "driver CPU"])
    for server in servers_of(run):
        values = []
        driven = [found.get((each.name, server, level)) for each in (HELLO, HELLO_STREAM) for level in UNARY_LEVELS]
        for level in UNARY_LEVELS:
            unary, stream = found.get((HELLO.name, server, level)), found.get((HELLO_STREAM.name, server, level))
            values += [
                "—" if unary is None else f"{unary.report.ok_rps:,.0f}{unary.not_ok}",
                "—" if stream is None else f"{stream.report.ok_rps:,.0f}{stream.not_ok}",
                "—" if unary is None or stream is None else f"{stream.report.ok_rps / unary.report.ok_rps:.2f}",
            ]
        table.add(server, [*values, busiest_driver(run, driven)])
    return [table]


def cross_check_runs(run: StudyRun) -> dict[str, tuple[Measured, Measured]]:
    """server -> (loadgen's, ghz's) median run of SayHello at the cross-check level: the run's driver check, or, in
    runs before it, the full matrix's SayHello cells."""
    servers = list(dict.fromkeys([*CROSS_CHECKED, *servers_of(run)]))
    return cross_check_pairs(run, DRIVER_CHECK.name, CROSS_CHECK_LEVEL, servers) or cross_check_pairs(
        run, HELLO.name, CROSS_CHECK_LEVEL, servers
    )


def cross_check_table(run: StudyRun) -> list[Block]:
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


def batch_table(run: StudyRun) -> list[Block]:
    found = measured(run)
    labels = [f"batch {size}" for size in BATCH_SIZES] + ["10 over 1", "driver CPU"]
    table = Table("batch size", ["stack (OK calls/s)", *labels])
    for server, rates in batch_rates(run).items():
        gain = rates[10] / rates[1] if rates.get(1) and 10 in rates else None
        driven = [found.get((f"batch-{size}", server, BATCH_LEVEL)) for size in BATCH_SIZES]
        cells = [
            or_dash(rates.get(size), ",.1f") + (each.not_ok if each else "")
            for size, each in zip(BATCH_SIZES, driven, strict=True)
        ]
        table.add(server, [*cells, or_dash(gain, ".2f"), busiest_driver(run, driven)])
    return [table]


def batch_chart(run: StudyRun) -> bytes:
    points = [
        {"server": server, "size": size, "rate": rate}
        for server, rates in batch_rates(run).items()
        for size, rate in sorted(rates.items())
    ]
    drawn = lines(
        points,
        Axis("size", "objects per message (batch size)", log=True),
        Axis("rate", "OK calls/s"),
        "server",
        title=f"StreamObjects of {BENCH_OBJECTS} objects at c={BATCH_LEVEL}",
    )
    return png(drawn, chart_title(run, "Batch size"))


# --- watch ---------------------------------------------------------------------------------------------


def watch_table(run: StudyRun) -> list[Block]:
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
    table = Table("watch", ["stack / streams", *labels])
    for server in servers_of(run):
        for streams in WATCH_STREAMS:
            each = found.get((WATCH.name, server, streams))
            if each is None:
                table.add(f"{server} / {streams:,}", ["failed"] + [""] * (len(labels) - 1))
                continue
            outcome = WatchOutcome.from_json(each.raw)
            window = each.report.total
            table.add(
                f"{server} / {streams:,}",
                [
                    f"{outcome.established:,}",
                    f"{outcome.established_late:,} / {outcome.not_established:,}",
                    f"{each.report.ok_rps:,.0f} ({outcome.expected_readings / window:,.0f}){each.not_ok}",
                    _ms(each.report.percentiles.get(50)),
                    _ms(each.report.percentiles.get(99)),
                    f"{each.server_cpu:.0%}",
                    f"{each.repeat.resources.peak_rss_bytes / MIB:,.0f} MiB",
                    or_dash(each.driver_cpu(run.meta), ".0%"),
                ],
            )
    return [table]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:.1f} ms"


def watch_limits(run: StudyRun) -> dict[str, int]:
    """server -> the most streams at which it created the run's established share of them within 1 s (0: none)."""
    found = measured(run)
    limits = {}
    for server in servers_of(run):
        held = [
            streams
            for streams in WATCH_STREAMS
            if (each := found.get((WATCH.name, server, streams))) is not None
            and WatchOutcome.from_json(each.raw).established >= run.settings["established_share"] * streams
        ]
        limits[server] = max(held, default=0)
    return limits
