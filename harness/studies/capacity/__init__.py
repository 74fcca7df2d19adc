"""The capacity study: how much load does one core take within our latency SLO?

Open loop (`ghz --async --rps R`): calls start at a constant rate whether or not earlier ones have
finished, so queueing shows in the latency instead of slowing the load down (no coordinated omission).
For each stack and scenario, after a warm-up and one closed-loop run at concurrency 50 (the stacks
study's method, for comparison), a search finds the highest rate sustained with p99 at or under the
scenario's SLO and no failed call: a bracket from half the closed loop's rate (doubling or halving), then
bisection. Each step lasts at least 10 s; a rate counts as held only when two steps at it hold, and as failed
only when two fail (a third step settles two that disagree), so capacity is the interval from the highest
rate held to the lowest failed. The same search without the SLO, from the capacity up, finds the saturation
throughput: the highest rate the stack keeps up with (OK calls at least KEPT_UP of the offered rate) at any
latency; the highest OK rate any step delivered is its figure. Then a run at 10% of the capacity measures the
CPU a call costs at low load, to explain where the SLO gave way.
A second latency route with 20 ms of jitter shows whether the closed loop's shortfall is a convoy.
"""

from __future__ import annotations

from harness.plan.matrix import SMALL_BUCKET, Scenario
from harness.results.histogram import Latencies
from harness.results.load import LoadReport

NAME = "capacity"
QUESTION = "How much load does one core take within our latency SLO?"
WORKERS = 50  # ghz workers taking the open loop's ticks, and the closed loop's concurrency beside it
JITTER_MS = 20
JITTER = Scenario(
    f"s3-unary-100ms-jitter{JITTER_MS}",
    "bench.v1.ObjectStore.ListObjects",
    {"bucket": SMALL_BUCKET},
    f"ListObjects on the small bucket, S3 100 ms away with {JITTER_MS} ms of jitter",
    20,
    bucket=SMALL_BUCKET,
    s3_latency_ms=100,
    jitter_ms=JITTER_MS,
)
# The scenario -> (SLO on p99 in seconds, the rate the search starts from in calls/s; ghz takes whole rates).
SEARCHED: dict[str, tuple[float, int]] = {
    "hello": (0.010, 100),
    "hello-wait": (0.150, 10),
    "s3-unary-100ms": (0.300, 20),
    "s3-mongo-100ms": (0.300, 20),
}
# The scenarios the decision row reads, and so the default run of the study's: one core's capacity without I/O, and
# with S3 100 ms away.
DECIDING = ("hello", "s3-unary-100ms")
STEP_SECONDS = 10.0  # every step at least this long: its p99 rests on thousands of calls, not its 20th-worst
AGREEING = 2  # steps at one rate that must agree before it counts as held, or as failed
KEPT_UP = 0.95  # a saturation step holds when its OK calls/s are at least this share of the offered rate
PRECISION = 0.05  # the bisection stops once the failing rate is within 5% of the passing one
LOW_LOAD_SHARE = 0.10  # the low-load run, at this share of the capacity, measures a call's CPU cost


def p99(report: LoadReport) -> float | None:
    """The run's p99 from its histogram; None without one."""
    return Latencies([report.histogram]).percentile(99) if report.histogram else None


def held(report: LoadReport, slo: float) -> bool:
    """No failed call, and p99 at or under the SLO."""
    value = p99(report)
    return report.non_ok == 0 and report.ok > 0 and value is not None and value <= slo


def kept_up(report: LoadReport) -> bool:
    """The server served the offered rate, at any latency: OK calls/s at least KEPT_UP of it."""
    return report.ok > 0 and report.ok_rps >= KEPT_UP * (report.offered_rps or 0.0)


def settled(outcomes: list[bool]) -> bool:
    """A rate's verdict from its steps: held when more held than failed (one step decides alone, as in runs
    before steps were repeated)."""
    return outcomes.count(True) > outcomes.count(False)
