"""A driver's report of one run, in the shape of ghz's JSON, parsed strictly. Throughput counts OK calls only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

NANOSECONDS = 1e9
PERCENTILES = (50, 90, 95, 99)
# Our addition to the stored report: every OK call's latency as an encoded HdrHistogram (microseconds).
HISTOGRAM_KEY = "okLatencyHistogram"
_REQUIRED = ("count", "total", "average", "fastest", "slowest", "rps", "statusCodeDistribution")


class DriverError(RuntimeError):
    """A driver failed, timed out or printed something that is not its report."""


@dataclass(frozen=True)
class LoadReport:
    """One measured run. Times are seconds; `ok_rps` counts OK responses only."""

    count: int
    total: float
    average: float
    fastest: float
    slowest: float
    driver_rps: float  # the driver's own figure: every response, errors included
    status_codes: dict[str, int]
    errors: dict[str, int]
    percentiles: dict[int, float]
    histogram: str = ""  # encoded HdrHistogram of OK latencies; "" in reports from before it was kept
    offered_rps: float | None = None  # the open-loop rate asked for (ghz --rps); None in a closed loop

    @property
    def ok(self) -> int:
        return self.status_codes.get("OK", 0)

    @property
    def non_ok(self) -> int:
        return self.count - self.ok

    @property
    def ok_rps(self) -> float:
        """OK responses per second of the run's wall time."""
        return self.ok / self.total if self.total > 0 else 0.0

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> LoadReport:
        """Parse a ghz-shaped JSON report; anything missing or malformed raises DriverError."""
        missing = [key for key in _REQUIRED if key not in raw]
        if missing:
            raise DriverError(f"report lacks {', '.join(missing)}")
        try:
            distribution = {
                int(entry["percentage"]): entry["latency"] / NANOSECONDS
                for entry in raw.get("latencyDistribution") or ()
            }
            report = cls(
                count=int(raw["count"]),
                total=raw["total"] / NANOSECONDS,
                average=raw["average"] / NANOSECONDS,
                fastest=raw["fastest"] / NANOSECONDS,
                slowest=raw["slowest"] / NANOSECONDS,
                driver_rps=float(raw["rps"]),
                status_codes={str(code): int(n) for code, n in raw["statusCodeDistribution"].items()},
                errors={str(error): int(n) for error, n in (raw.get("errorDistribution") or {}).items()},
                percentiles={p: distribution[p] for p in PERCENTILES if p in distribution},
                histogram=str(raw.get(HISTOGRAM_KEY, "")),
                offered_rps=float((raw.get("options") or {}).get("rps") or 0) or None,
            )
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise DriverError(f"malformed report: {error!r}") from error
        if sum(report.status_codes.values()) != report.count:
            raise DriverError(f"status codes add up to {sum(report.status_codes.values())}, not count {report.count}")
        return report


@dataclass(frozen=True)
class DriverRun:
    """One run of a driver: its stored report, parsed, and the CPU time the driver used."""

    raw: dict[str, Any]
    report: LoadReport
    cpu_seconds: float


# What loadgen reports beyond ghz's shape.


@dataclass(frozen=True)
class WatchOutcome:
    """How a watch run's streams fared (the readings themselves are the report's OK entries)."""

    streams: int
    established: int  # answered `created` within 1 s
    established_late: int
    not_established: int
    expected_readings: int  # one per interval per created stream, over the window
    ended: dict[str, int]  # status code name -> streams, after the client closed its side
    stream_errors: dict[str, int]

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> WatchOutcome:
        try:
            outcome = cls(
                streams=int(raw["streams"]),
                established=int(raw["established"]),
                established_late=int(raw["established_late"]),
                not_established=int(raw["not_established"]),
                expected_readings=int(raw["expected_readings"]),
                ended={str(code): int(n) for code, n in raw["ended"].items()},
                stream_errors={str(error): int(n) for error, n in (raw.get("stream_errors") or {}).items()},
            )
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise DriverError(f"malformed watch report: {error!r}") from error
        if outcome.established + outcome.established_late + outcome.not_established != outcome.streams:
            raise DriverError(f"watch report: established, late and not add up to more or less than {outcome.streams}")
        return outcome


@dataclass(frozen=True)
class SlowOutcome:
    """How a slow reader's streams fared (each message read is one of the report's OK entries): the streams opened at
    once, those whose first message came, the messages and payload bytes each read before the client cancelled it,
    and how each ended (status code name -> streams: Canceled where the client's cancel ended it, as it meant to)."""

    streams: int
    every_ms: int  # one message read per this many ms; 0: the first, then none
    seconds: float
    window_bytes: int
    opened: int
    messages: tuple[int, ...]
    payload: tuple[int, ...]
    ended: dict[str, int]
    stream_errors: dict[str, int]

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> SlowOutcome:
        try:
            outcome = cls(
                streams=int(raw["streams"]),
                every_ms=int(raw["every_ms"]),
                seconds=float(raw["seconds"]),
                window_bytes=int(raw["window_bytes"]),
                opened=int(raw["opened"]),
                messages=tuple(int(each) for each in raw["messages"]),
                payload=tuple(int(each) for each in raw["bytes"]),
                ended={str(code): int(n) for code, n in raw["ended"].items()},
                stream_errors={str(error): int(n) for error, n in (raw.get("stream_errors") or {}).items()},
            )
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise DriverError(f"malformed slow-reader report: {error!r}") from error
        if len(outcome.messages) != outcome.streams or sum(outcome.ended.values()) != outcome.streams:
            raise DriverError(f"slow-reader report: its streams' reads and ends do not count {outcome.streams}")
        return outcome

    @property
    def clean(self) -> bool:
        """Every stream ended by the client's cancel or at its end: none failed. (A stream whose first message never
        came, waiting for a worker thread, ends Canceled too: `opened` tells those.)"""
        return set(self.ended) <= {"Canceled", "OK"}


@dataclass(frozen=True)
class FetchCounts:
    """What a fetch run's fetch-alls took in all: RPCs, messages and objects."""

    rpcs: int
    messages: int
    objects: int

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FetchCounts:
        try:
            return cls(int(raw["rpcs"]), int(raw["messages"]), int(raw["objects"]))
        except (TypeError, ValueError, KeyError) as error:
            raise DriverError(f"malformed fetch report: {error!r}") from error
