"""The brief's decision rows, from a run of its matrix in blocks (its tables across the levels are
harness.studies.stacks.levels'): which stack for each kind of work, one worker thread or ten, an S3
listing as one reply or a stream, and Motor or PyMongo's async client. Report-side: reads only the run's files."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from harness.analysis.decision import NO, NOT_TOLD_YET, YES, Answer, Decision, Standing, answer_of, choice
from harness.analysis.judging import (
    Judged,
    absolute,
    mean_cost,
    paired_measure,
    peak_memory,
    pick_over,
)
from harness.method.bounds import at_wait_bound, wait_bound, waits_alone
from harness.method.pooling import Combined, Estimate, pooled_row
from harness.method.selection import difference_of, select
from harness.method.verdicts import FASTER, SLOWER, TIE, UNRESOLVED, Interval, separated, verdict, welch
from harness.plan.matrix import REGION, WAIT_MS
from harness.plan.servers import is_floor
from harness.render.decisions import margin
from harness.render.summaries import rate
from harness.render.wording import ratio_text
from harness.results.records import StudyRun
from harness.studies.comparing import (
    ALONE,
    OverRuns,
    certify_text,
    combined_close_text,
    control_doubt,
    decision,
    distrust,
    over_runs,
    pooled_runs,
    servers_of,
    trust_text,
    untrusted,
    with_closing,
)
from harness.studies.stacks.levels import by_topic, stacks_of
from harness.studies.telling import Telling

MOTOR, PYMONGO = "Motor", "PyMongo's async client"
PYMONGO_SUFFIX = "-pymongo"


def upward(ratio: Interval) -> Interval:
    """The ratio of the faster over the slower: itself at or above 1, else its inverse."""
    if ratio.value >= 1:
        return ratio
    return Interval(1 / ratio.value, 1 / ratio.high, 1 / ratio.low, ratio.blocks, ratio.freedom)


def control_of_run(judgeds: Sequence[Judged], like: Judged | None = None) -> Interval | None:
    """The study's A/A control, of the run's control intervals (one in slices of a second, one in slices of a wave
    where the run has both): one that separated, else the widest of `like`'s design where the run has one there,
    else the widest."""
    controls = [(each.record.method.mirrored, control.ratio) for each in judgeds if (control := each.control)]
    own = [ratio for mirrored, ratio in controls if like is not None and mirrored == like.record.method.mirrored]
    chosen = own if own and not any(separated(ratio) for _, ratio in controls) else [ratio for _, ratio in controls]
    return max(chosen, key=lambda each: (separated(each), each.half_width), default=None)


def pair_row(
    question: str,
    judged: Judged,
    run: StudyRun,
    first: tuple[str, str],
    second: tuple[str, str],
    control: Interval | None,
    scope: str,
) -> Decision | None:
    """A row setting two labels of one comparison against each other, paired by block: (label, what it is
    called) each; the faster one is the pick (a tie says either will do)."""
    tie = judged.record.method.tie
    found = pick_over(judged, first[0], second[0], tie)
    if found is None:
        return None
    ratio, _ = found
    top, runner = (first, second) if ratio.value >= 1 else (second, first)
    over = upward(ratio)
    why = distrust(judged, run, [first[0], second[0]])
    return told_row(question, judged, run, top, runner, over, control, scope, why, (top[0], runner[0]))


def told_row(
    question: str,
    judged: Judged,
    run: StudyRun,
    top: tuple[str, str],
    runner: tuple[str, str],
    over: Interval,
    control: Interval | None,
    scope: str,
    why: str,
    paired: tuple[str, ...] = (),
    evidence: OverRuns | None = None,
) -> Decision:
    """A row of two things set against each other in one comparison: the pick, the runner-up, the pick over it
    with its verdict; untrusted for `why` (the comparison's own reasons, `distrust`) or a control that separated.
    paired: the two labels, where paired in the comparison's blocks (so that runs can pool it); evidence: over
    which runs `over` pools where it was pooled otherwise (`unpaired_over_runs`)."""
    why = untrusted("" if control is None else control_doubt([control]), why)
    tie = judged.record.method.tie
    standing = {top[1]: math.log(over.value), runner[1]: 0.0}
    chosen = select(list(standing), standing, lambda first, second: difference_of(over), tie)
    assert chosen is not None  # two candidates
    made = choice(chosen)
    return Decision(
        stacks=servers_of(judged, paired or (top[0],)),
        **with_closing(
            over_runs(judged, *paired) if paired else evidence or ALONE,
            certify_text(judged, chosen, paired) or (trust_text(judged, run, paired) if paired else ""),
        ),
        **made,
        question=question,
        workload=f"{judged.record.workload}/{scope}",
        pick=top[1],
        runner_up=runner[1],
        avoid="—",
        study=judged.study,
        run_id=run.run_id,
        machine=run.cpu_model,
        trusted=not why,
        why=why,
        over=over,
        control=control,
        comparison=judged.record.workload,
        labels=paired,
    )


def mongo_driver_rows(question: str, judged: Judged, run: StudyRun, control: Interval | None) -> list[Decision]:
    """Motor against PyMongo's async client on each event-loop stack that ran both, paired by block."""
    found = []
    for label in judged.record.alternatives:
        motor = label.removesuffix(PYMONGO_SUFFIX)
        if label.endswith(PYMONGO_SUFFIX) and motor in judged.rates:
            made = pair_row(question, judged, run, (label, PYMONGO), (motor, MOTOR), control, motor)
            if made is not None:
                found.append(made)
    return found


def threads_rows(question: str, levels: dict[str, Judged], run: StudyRun, control: Interval | None) -> list[Decision]:
    """sync-w1 against sync-w10 (the reference) on each scenario, paired by block."""
    found = []
    for topic, judged in levels.items():
        if "sync-w1" in judged.rates and judged.record.reference == "sync-w10":
            made = pair_row(
                question, judged, run, ("sync-w10", "ten threads"), ("sync-w1", "one thread"), control, topic
            )
            if made is not None:
                found.append(made)
    return found


def stream_rows(
    question: str, unary: Judged, stream: Judged, run: StudyRun, control: Interval | None
) -> list[Decision]:
    """An S3 listing as a stream against one reply, per stack, at one level: the two are separate comparisons, so
    the ratio is unpaired (Welch's interval of the blocks' rates in each run), pooled over the runs in which both
    comparisons ran the stack's code (`unpaired_over_runs`); trusted on the blocks of those runs."""
    found = []
    for stack in stacks_of({0: unary}):
        pooled = unpaired_over_runs(unary, stream, stack)
        if pooled is None:
            continue
        ratio = pooled.ratio
        first, second = ("a stream", "one reply") if ratio.value >= 1 else ("one reply", "a stream")
        over = upward(ratio)
        blocks = ratio.blocks
        why = distrust(unary, run, [stack], blocks=blocks) or distrust(stream, run, [stack], blocks=blocks)
        evidence = pooled_runs(pooled)
        row = told_row(question, unary, run, (stack, first), (stack, second), over, control, stack, why, (), evidence)
        found.append(row)
    return found


def unpaired_over_runs(unary: Judged, stream: Judged, stack: str) -> Combined | None:
    """A stream's rate over one reply's for a stack, from two comparisons: in each run that read both with the
    stack's code of this run, Welch's estimate on the log scale (its variance the two means' own, unmoderated),
    and those runs pooled as a row's are, with the spread between them that they show (pooling.pooled_row); None
    where this run has fewer than two blocks of either."""
    mine, theirs = stream.rates.get(stack, {}), unary.rates.get(stack, {})
    if len(mine) < 2 or len(theirs) < 2:
        return None
    if unary.pool is None or stream.pool is None:  # no earlier runs to pool with
        alone = welch_estimate(theirs, mine, "")
        return None if alone is None else pooled_row([alone], 0.0, 0.0)
    streams = {reading.run_id: reading for reading in stream.pool.readings}
    code = (unary.pool.readings[0].codes.get(stack), stream.pool.readings[0].codes.get(stack))
    estimates = [
        found
        for replied in unary.pool.readings
        if (streamed := streams.get(replied.run_id)) is not None
        and (replied.codes.get(stack), streamed.codes.get(stack)) == code
        and (found := welch_estimate(replied.rates.get(stack, {}), streamed.rates.get(stack, {}), replied.day))
    ]
    return pooled_row(estimates, 0.0, 0.0) if estimates else None


def welch_estimate(before: Mapping[int, float], after: Mapping[int, float], day: str) -> Estimate | None:
    """after's geometric mean rate over before's as a run's estimate (Welch's terms, verdicts.welch);
    None with fewer than two blocks a side."""
    if len(before) < 2 or len(after) < 2:
        return None
    mean, variance, freedom = welch(list(before.values()), list(after.values()))
    return Estimate(mean, variance, freedom, min(len(before), len(after)), day)


ANSWER_OF = {FASTER: YES, TIE: "No, it ties", SLOWER: NO, UNRESOLVED: NOT_TOLD_YET}


SYNC_PREFIX = "sync-"  # the grpcio thread-pool servers' labels: sync-w1, sync-w10, sync-w50


COSTS_ANSWER = {SLOWER: "Yes, in CPU, not in rate", TIE: "No, it ties", FASTER: NO, UNRESOLVED: NOT_TOLD_YET}
# A CPU-per-call ratio's verdict in its own words: above 1 the event loop spends more a call, which no reader
# should read as "faster".
COST_VERDICTS = {SLOWER: "cheaper", TIE: TIE, FASTER: "costlier", UNRESOLVED: UNRESOLVED}


def waits(judged: Judged, label: str, bound: float) -> bool:
    """Whether a label serves at the wait bound: its median call takes the wait and little more (bounds.waits_alone),
    or its rate is near the bound (bounds.at_wait_bound; the only test where its slices kept no latencies)."""
    own = absolute(judged, label)
    if own is None:
        return False
    return (own.p50 is not None and waits_alone(own.p50, WAIT_MS / 1000)) or at_wait_bound(own.rate.value, bound)


def async_pays(judged: Judged, made: Decision) -> Decision:
    """Whether async pays off, in those words: the fastest event-loop stack against the fastest sync server measured
    (a pool sized to the load where it ran: ten threads serve at most ten waiting calls at once), paired by block.
    Where both serve at the wait bound (Little's law: the clients over the wait), their rates tie by construction,
    and the row answers by what differs there: the event-loop stack and the sync server that spend the least CPU a
    call, their CPU per call and memory paired in the same blocks."""
    labels = [label for label in judged.standing if not is_floor(label)]
    syncs = [label for label in labels if label.startswith(SYNC_PREFIX)]
    loops = [label for label in labels if not label.startswith(SYNC_PREFIX)]
    if not syncs or not loops:
        return replace(made, lead=f"Not asked: {made.pick} serves fastest")
    loop, sync = loops[0], syncs[0]
    over = judged.paired(loop, sync)
    if over is None:
        return replace(made, word=NOT_TOLD_YET, lead=f"{loop} against {sync}")
    tie = judged.record.method.tie
    clients = judged.cells[loop].record.concurrency if loop in judged.cells else 0
    bound = wait_bound(clients, None, WAIT_MS / 1000)
    waiting = [label for label in labels if waits(judged, label, bound)]
    if loop in waiting and sync in waiting:  # at the bound the rates tie: the cheapest of each kind a call
        loop = min((each for each in loops if each in waiting), key=lambda each: mean_cost(judged, each))
        sync = min((each for each in syncs if each in waiting), key=lambda each: mean_cost(judged, each))
        over = judged.paired(loop, sync) or over
    pooled = judged.cost_over(sync, loop)  # the loop's CPU per call over the sync server's, over runs
    if pooled is None or loop not in waiting or sync not in waiting:
        said = verdict(over, tie)
        answer = answer_of(ANSWER_OF[said], f"{loop} serves {ratio_text(over)} × {sync}, the fastest sync server")
        return replace(made, **answer, verdict=said, standing=Standing.of(said), certified=None)
    cpu = pooled.ratio
    said = verdict(cpu, tie)
    memory = paired_measure(peak_memory(judged, loop), peak_memory(judged, sync))
    lead = (
        f"at {clients} clients waiting {WAIT_MS} ms {loop} and {sync} both serve at the wait "
        f"bound ({rate(bound)} calls/s; {ratio_text(over)} ×); {loop} uses {ratio_text(cpu)} × the CPU per call of "
        f"{sync}"
        + (f" and {ratio_text(memory)} × its memory" if memory else "")
        + (f" (the CPU over {pooled.runs} runs, the memory the newest's)" if memory and pooled.runs > 1 else "")
    )
    why = ", ".join(part for part in made.why.split(", ") if part and not part.startswith("validation does not"))
    few = "" if judged.trusted_at(cpu.blocks) else f"validation does not hold at {cpu.blocks} blocks"
    why = ", ".join(filter(None, [why, few]))
    return replace(
        made,
        **answer_of(COSTS_ANSWER[said], lead),
        pick=loop,
        runner_up=f"{sync}, CPU per call",
        over=cpu,
        verdict=COST_VERDICTS[said],
        standing=Standing.of(said),
        certified=None,
        held="",
        closing=combined_close_text(judged, pooled, (sync, loop)),
        runs=pooled.runs,
        days=pooled.days,
        trusted=not why,
        why=why,
    )


def brief_decisions(run: StudyRun, telling: Telling, judgeds: Sequence[Judged]) -> list[Decision]:
    """The study's rows, each at the highest level its scenario was measured at (the brief's 50 clients): which
    stack for each kind of work, the S3 work where the run measured it a region away (where production has it) and
    on loopback only where it did not; one worker thread or ten; an S3 listing as one reply or a stream; and Motor
    or PyMongo's async client (a region away where measured there)."""
    control = control_of_run(judgeds)
    topics = by_topic(judgeds)
    top = {topic: levels[max(levels)] for topic, levels in topics.items()}
    rows = []
    for topic, judged in top.items():
        if topic + REGION in top:
            continue  # the S3 work is answered where production has its backends
        own = control_of_run(judgeds, judged)
        made = decision(telling.headline(judged), judged, run, "" if own is None else control_doubt([own]), own)
        if (told := telling.led(judged, made)) is not None:
            rows.append(told)
    mongo = next((top[name] for name in ("s3-mongo" + REGION, "s3-mongo") if name in top), None)
    if mongo is not None:
        rows += mongo_driver_rows(MONGO_QUESTION, mongo, run, control)
    for unary_topic, stream_topic in (("s3-unary" + REGION, "s3-stream" + REGION), ("s3-unary", "s3-stream")):
        if unary_topic in top and stream_topic in top:
            level = max(set(topics[unary_topic]) & set(topics[stream_topic]), default=None)
            if level is not None:
                unary, stream = topics[unary_topic][level], topics[stream_topic][level]
                rows += stream_rows(STREAM_QUESTION, unary, stream, run, control)
                break
    rows += threads_rows(THREADS_QUESTION, top, run, control)
    rows += uvloop_rows(
        UVLOOP_QUESTION, {topic: judged for topic, judged in top.items() if topic + REGION not in top}, run, control
    )
    return rows


# Each event-loop stack measured on both loops: its uvloop label and its asyncio label.
LOOPS = (("grpclib-uvloop", "grpclib-asyncio"), ("aio-uvloop", "aio-asyncio"))


def uvloop_rows(question: str, levels: dict[str, Judged], run: StudyRun, control: Interval | None) -> list[Decision]:
    """uvloop against asyncio's own loop for each stack that ran both in the same blocks, on each scenario (the S3
    work a region away where measured there), paired by block."""
    found = []
    for topic, judged in levels.items():
        for uvloop, asyncio in LOOPS:
            if uvloop in judged.rates and asyncio in judged.rates:
                stack = uvloop.removesuffix("-uvloop")
                made = pair_row(
                    question, judged, run, (uvloop, "uvloop"), (asyncio, "asyncio"), control, f"{stack}/{topic}"
                )
                if made is not None:
                    found.append(replace(made, **uvloop_lead(made, judged.record.method.tie)))
    return found


def uvloop_lead(made: Decision, tie: float) -> Answer:
    """Whether uvloop paid off on one stack and workload, in the question's words: yes where it is clearly ahead of
    asyncio's loop (faster beyond the tie band, or asyncio outside the pick's contenders), no where asyncio's loop is
    so ahead or neither is, not told yet where the pick is not certified."""
    said = f"{made.pick} {margin(made)} × {made.runner_up}"
    if made.over is None or not made.certified:
        return answer_of(NOT_TOLD_YET, said)
    ahead = verdict(made.over, tie) == FASTER or made.runner_up not in made.contenders
    if not ahead:
        return answer_of(NO, "neither loop clearly faster")
    return answer_of(YES if made.pick == "uvloop" else NO, said)


MONGO_QUESTION = "S3 to MongoDB on an event loop: Motor or PyMongo's async client?"
STREAM_QUESTION = "An S3 listing: one reply or a stream?"
THREADS_QUESTION = "grpcio sync: one worker thread or ten?"
UVLOOP_QUESTION = "Does uvloop pay off, and on which stack?"
