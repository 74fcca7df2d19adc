"""The readers study's report: what each stack's memory grew by under each slow reader, a stream at a time, against
what a stream's listing weighs; what the streams read and how they ended."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.decision import NO, NOT_TOLD_YET, YES, Decision, Standing
from harness.plan.matrix import LONG_KEYS_OBJECTS
from harness.render.table import Block, Table, markdown
from harness.results.load import SlowOutcome
from harness.results.records import StudyRun
from harness.results.run_meta import Target
from harness.studies.base import StudyReport
from harness.studies.readers import (
    BOUNDED_BYTES_A_STREAM,
    LISTING_BYTES,
    NAME,
    QUESTION,
    READER_OF,
    READER_REPEATS,
    READERS,
)
from harness.studies.reading import driver_not_busy, measured

MIB = 1024 * 1024
SETTINGS = {"bounded_bytes_a_stream": BOUNDED_BYTES_A_STREAM, "listing_bytes": LISTING_BYTES}


@dataclass(frozen=True)
class Reading:
    """What one stack's server held in one reading of one reader: what its memory grew by over it (its peak less its
    memory as the reader began), its CPU share, and how the reader's streams fared."""

    grown: int
    cpu: float
    outcome: SlowOutcome

    @property
    def per_stream(self) -> float:
        """Bytes the server's memory grew by a stream opened."""
        return self.grown / max(1, self.outcome.streams)


@dataclass(frozen=True)
class Held:
    """One stack under one reader, over its readings (each on a server of its own)."""

    server: str
    reader: str
    readings: tuple[Reading, ...]

    @property
    def per_stream(self) -> list[float]:
        """Each reading's growth a stream, least first."""
        return sorted(each.per_stream for each in self.readings)

    @property
    def typical(self) -> float:
        """The median reading's growth a stream."""
        return statistics.median(self.per_stream)

    def standing(self, bound: float) -> str:
        """bounded where every reading stayed within the bound, buffering where none did, else unsettled."""
        within = [each <= bound for each in self.per_stream]
        return "bounded" if all(within) else "buffering" if not any(within) else "unsettled"

    def clean(self) -> bool:
        return all(each.outcome.clean for each in self.readings)


def held(run: StudyRun) -> list[Held]:
    """Every stack under every reader the run measured, in the run's order, its readings gathered."""
    found: dict[tuple[str, str], list[Reading]] = {}
    for (scenario_name, server, _), each in measured(run).items():
        reader = READER_OF.get(scenario_name)
        if reader is None:
            continue
        resources = each.repeat.resources
        grown = max(0, resources.peak_rss_bytes - resources.start_rss_bytes) if resources.start_rss_bytes else 0
        reading = Reading(grown, each.server_cpu, SlowOutcome.from_json(each.raw))
        found.setdefault((server, reader), []).append(reading)
    return [Held(server, reader, tuple(readings)) for (server, reader), readings in found.items()]


def mib(size: float) -> str:
    return f"{size / MIB:,.1f}"


def grew_text(each: Held) -> str:
    """Its median growth a stream, with the least and most of its readings."""
    low, high = each.per_stream[0], each.per_stream[-1]
    spread = f" [{mib(low)} to {mib(high)} over {len(each.readings)} readings]" if len(each.readings) > 1 else ""
    return f"+{mib(each.typical)} MiB a stream{spread}"


def said(each: Held, settings: dict[str, float]) -> str:
    """A stack's memory under a reader in words: bounded, buffering (what of a stream's listing), or unsettled."""
    standing = each.standing(settings["bounded_bytes_a_stream"])
    if standing == "buffering":
        return f"{grew_text(each)}, buffering ({each.typical / settings['listing_bytes']:.0%} of a stream's listing)"
    return f"{grew_text(each)}, {standing}"


def readers_table(run: StudyRun) -> list[Block]:
    table = Table(
        "readers",
        ["stack", "reader", "streams opened", "messages read a stream", "memory grew a stream", "ended", "server CPU"],
    )
    for each in held(run):
        outcomes = [reading.outcome for reading in each.readings]
        ended = sum((Counter(outcome.ended) for outcome in outcomes), Counter[str]())
        streams = sum(outcome.streams for outcome in outcomes)
        table.add(
            each.server,
            [
                each.reader,
                f"{sum(outcome.opened for outcome in outcomes)} of {streams}",
                f"{sum(sum(outcome.messages) for outcome in outcomes) / max(1, streams):,.1f}",
                said(each, run.settings),
                ", ".join(f"{count} {code}" for code, count in sorted(ended.items())),
                f"{statistics.mean(reading.cpu for reading in each.readings):.0%}",
            ],
        )
    return [table]


def describe(run: StudyRun) -> str:
    settings = run.settings
    return (
        f"Newest run: {run.title}; {run.entry.wall_seconds / 60:.1f} min. Each stack served the slow "
        f"reader's streams (`loadgen slow`: StreamObjects of the {LONG_KEYS_OBJECTS:,}-object long-keys bucket, one "
        f"object of about 1 KB a message, {mib(settings['listing_bytes'])} MiB a stream's listing; each stream's "
        "HTTP/2 window fixed at 64 KiB), each reading on a server of its own, warmed by two whole listings read one at "
        "a time. Memory grew: the server's peak RSS less its RSS as the reader began, over the streams opened; the "
        "median reading, with the least and the most. A stream's growth up to "
        f"{mib(settings['bounded_bytes_a_stream'])} MiB counts as bounded (a window, the transport's buffers, and the "
        "page of the listing being sent, held as S3's XML, botocore's dicts and messages, with room): flow control "
        "held the server back. Above it in every reading, "
        "the server kept producing into its own buffers (buffering); across it, unsettled. Raw reports: "
        f"[`runs/{run.run_id}`](runs/{run.run_id})."
    )


def render(run: StudyRun) -> dict[str, bytes]:
    """No page beyond the study's own: its one table is in its section."""
    return {}


def section(runs: Sequence[StudyRun]) -> str:
    return markdown([describe(runs[0]), "", *readers_table(runs[0]), ""])


def answer(runs: Sequence[StudyRun]) -> str:
    newest = runs[0]
    found = held(newest)
    parts = []
    for reader in READERS:
        mine = [each for each in found if each.reader == reader]
        if mine:
            parts.append(
                f"against a reader {reader}: "
                + "; ".join(f"{each.server} {said(each, newest.settings)}" for each in mine)
            )
    return f"On {newest.cpu_model} (run `{newest.run_id}`), {'; '.join(parts)}." if parts else "No reader was measured."


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Target]:
    """Every stream opened and ended by the client's cancel or at its end (a gate: a stream that failed is a failed
    run); and, reported, whether every stack's memory stayed bounded."""
    found = held(run)
    bound = run.settings["bounded_bytes_a_stream"]
    unclean = [f"{each.server}/{each.reader}" for each in found if not each.clean()]
    growing = {
        f"{each.server}/{each.reader}": round(each.typical) for each in found if each.standing(bound) != "bounded"
    }
    return {
        "streams_end_clean": Target(not unclean, {"cells": unclean}, gate=True),
        "memory_bounded": Target(not growing, {"bytes_a_stream": growing}),
        **driver_not_busy(run),
    }


def standing_of(growing: Sequence[Held], unsettled: Sequence[Held]) -> str:
    """A reader's row in a word, as the decision table counts it answered: unresolved while any stack's readings
    straddle the bound, else the stacks that buffer, or bounded."""
    if unsettled:
        return "unresolved: readings on both sides of the bound"
    return f"buffering: {', '.join(each.server for each in growing)}" if growing else "bounded"


def decisions(runs: Sequence[StudyRun]) -> list[Decision]:
    """A row per reader: whether any stack's memory grew past the bound, the stack that grew least a stream first;
    trusted with READER_REPEATS readings of every stack."""
    newest = runs[0]
    bound = newest.settings["bounded_bytes_a_stream"]
    found = held(newest)
    rows = []
    for reader in READERS:
        mine = sorted((each for each in found if each.reader == reader), key=lambda each: each.typical)
        if not mine:
            continue
        growing = [each for each in mine if each.standing(bound) == "buffering"]
        unsettled = [each for each in mine if each.standing(bound) == "unsettled"]
        if growing:
            word, lead = YES, "; ".join(f"{each.server} {said(each, newest.settings)}" for each in growing)
        elif unsettled:
            word, lead = NOT_TOLD_YET, "; ".join(f"{each.server} {said(each, newest.settings)}" for each in unsettled)
        else:
            held_to = ", ".join(f"{each.server} {grew_text(each)}" for each in mine)
            word, lead = NO, f"every stack's memory stayed within {mib(bound)} MiB a stream ({held_to})"
        fewest = min(len(each.readings) for each in mine)
        few = f"only {fewest} readings" if fewest < READER_REPEATS else ""
        why = ", ".join(part for part in (few, "readings on both sides of the bound" if unsettled else "") if part)
        rows.append(
            Decision(
                question="A stream reader slower than the server: does the server's memory grow?",
                workload=f"reader {reader}/{mine[0].readings[0].outcome.streams} streams",
                pick=mine[0].server,
                runner_up=mine[1].server if len(mine) > 1 else "—",
                verdict=standing_of(growing, unsettled),
                standing=Standing.UNRESOLVED if unsettled else Standing.DECIDED,
                avoid=", ".join(f"{each.server} (+{mib(each.typical)} MiB a stream)" for each in growing) or "—",
                avoided=growing[0].server if growing else "",
                study=NAME,
                run_id=newest.run_id,
                machine=newest.cpu_model,
                lead=lead,
                word=word,
                stacks=tuple(each.server for each in mine),
                trusted=not why,
                why=why,
            )
        )
    return rows


REPORT = StudyReport(
    name=NAME,
    question=QUESTION,
    follows="grpc/grpc#11966 and #37044: a server's memory under a stream consumer slower than the server",
    render=render,
    section=section,
    answer=answer,
    targets=targets,
    settings=SETTINGS,
    default=False,  # about 40 s a stack and reading: run it with --study readers
    decisions=decisions,
)
