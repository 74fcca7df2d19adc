"""The streaming study's report: fetch-alls by pattern, a stream against unary, batch sizes, Watch streams,
and the cross-check of our driver against ghz."""

from __future__ import annotations

from collections.abc import Sequence

from harness.plan.matrix import WIDE_OBJECTS, WIDE_PREFIXES
from harness.render.table import Block
from harness.results.load import WatchOutcome
from harness.results.records import StudyRun
from harness.results.run_meta import Target
from harness.studies.base import StudyReport
from harness.studies.reading import (
    cross_check_sentence,
    cross_checked_targets,
    driver_cross_check_table,
    failed_cells,
    measured,
    newest_run_section,
    study_readme,
)
from harness.studies.streaming import (
    CROSS_CHECK_LEVEL,
    FETCH_COMPARED_MS,
    FETCH_LATENCIES_MS,
    FETCHES_ALONE,
    HELLO,
    HELLO_STREAM,
    NAME,
    PAGE_SIZE,
    QUESTION,
    WATCH,
    WATCH_INTERVAL_MS,
    WATCH_SECONDS,
    WATCH_SENSORS,
    WATCH_STREAMS,
)
from harness.studies.streaming.tables import (
    batch_chart,
    batch_rates,
    batch_table,
    cross_check_runs,
    cross_check_table,
    fetch_cells,
    fetch_table,
    servers_of,
    unary_table,
    watch_limits,
    watch_table,
)
from harness.studies.telling import Telling, with_blocks

# The values this report judges by, recorded in every run.
SETTINGS = {
    "cpu_bound_share": 0.80,  # a fetch-all that kept the server's core this busy is bound by its CPU
    "established_share": 0.99,  # a stack "holds" a watch level when this share of streams was created within 1 s
}

# The Go studies this one follows, as they reported (the summary of them).
GO_PAGING_SPEEDUP = (2.7, 4.8)  # parallel server-side fetch over paging, 18K and 1.04M MySQL rows
GO_BATCH_SPEEDUP = 1.75  # a listing with 10 items a message against 1 a message


# --- the study's files, section and answer ---------------------------------------------------------------


def tables(run: StudyRun) -> list[Block]:
    lines: list[Block] = []
    for latency_ms in FETCH_LATENCIES_MS:
        lines += [
            f"### Fetch all {WIDE_OBJECTS:,} objects, S3 {latency_ms} ms away",
            "",
            f"Paging follows ListObjectsPage's tokens ({PAGE_SIZE:,} a page); stream is one StreamObjects "
            f"(batch {PAGE_SIZE:,}); parallel-N lists N of the {WIDE_PREFIXES} prefixes at once on the server. Time: "
            f"median of the fetch-alls by one client ({FETCHES_ALONE} in a full run). Bound: server CPU when its "
            f"core was busy {run.settings['cpu_bound_share']:.0%} or more of a lone fetch-all, else waits on S3 "
            "and round trips.",
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
        f"**Watch streams**: each stack created at least {run.settings['established_share']:.0%} of them within "
        "1 s up to "
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
        tie = run.thresholds.tie
        verdicts = {
            "slower": [name for name, ratio in ratios.items() if ratio < 1 - tie],
            f"within {tie:.0%} of it": [name for name, ratio in ratios.items() if abs(ratio - 1) <= tie],
            "faster": [name for name, ratio in ratios.items() if ratio > 1 + tie],
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
    checked = cross_check_sentence(run, cross_check_runs(run), f"SayHello at c={CROSS_CHECK_LEVEL}")
    if checked:
        parts.append(checked)
    return " ".join(parts) if parts else "No cell of this study finished in the newest run."


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Target]:
    """Our driver within the cross-check tolerance of ghz on SayHello."""
    return cross_checked_targets(run, {"ghz": cross_check_runs(run)})


TELLING = Telling(
    NAME,
    {
        f"fetch-all-{FETCH_COMPARED_MS}ms": "Fetching a large listing: paging, one stream, or the server in parallel?",
        "one-message": "One-message replies: a unary call or a stream?",
    },
    {
        f"fetch-all-{FETCH_COMPARED_MS}ms": f"Fetch all {WIDE_OBJECTS:,} objects ({WIDE_PREFIXES} prefixes) of a "
        f"bucket S3 {FETCH_COMPARED_MS} ms away, one client, by paging ({PAGE_SIZE:,} a page), one stream, or the "
        "server listing 4 or 10 prefixes at once: the rate is fetch-alls per second",
        "one-message": f"SayHello as a unary call against SayHelloStream replying with one message, "
        f"{CROSS_CHECK_LEVEL} workers on one connection",
    }.__getitem__,
    "fetch pattern or call",
)

REPORT = StudyReport(
    name=NAME,
    question=QUESTION,
    follows="two public Go studies: paging against streaming against a server fetching in parallel (MySQL rows), "
    "and stream-for-unary, batch sizes and a bidirectional watch",
    render=render,
    section=section,
    answer=answer,
    targets=targets,
    settings=SETTINGS,
)


def checked(run: StudyRun) -> tuple[str, list[Block]]:
    """A run in blocks' cross-check of our driver (measured before its comparisons): a sentence, and its table."""
    pairs = cross_check_runs(run)
    if not pairs:
        return "", []
    what = f"SayHello at c={CROSS_CHECK_LEVEL}"
    sentence = cross_check_sentence(run, pairs, what)
    return sentence, [
        "### Driver cross-check",
        "",
        f"Before its comparisons, this run drove {what} by loadgen and by ghz, taking turns, on the same server "
        "(driver CPU as a share of the CPUs the driver had). " + sentence,
        "",
        *driver_cross_check_table(run, pairs),
    ]


REPORT = with_blocks(REPORT, TELLING, checked)
