"""Every OK call's latency, kept compactly as an HdrHistogram so a cell's percentiles pool all its runs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # an hour: above any call timeout
SIGNIFICANT_DIGITS = 3  # values kept to 0.1%
MICROSECONDS = 1e6


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def encode_latencies(seconds: Iterable[float]) -> str:
    """Latencies in seconds as an encoded (compressed, base64) HdrHistogram of microseconds."""
    histogram = new_histogram()
    for value in seconds:
        histogram.record_value(min(HIGHEST_US, max(LOWEST_US, round(value * MICROSECONDS))))
    return str(histogram.encode().decode("ascii"))


class Latencies:
    """The pooled latencies of several runs: count and percentiles in seconds."""

    def __init__(self, encoded: Sequence[str]) -> None:
        self._histogram = new_histogram()
        for each in encoded:
            self._histogram.decode_and_add(each)

    @property
    def count(self) -> int:
        return int(self._histogram.get_total_count())

    def percentile(self, p: float) -> float:
        """The latency at percentile p (0-100) in seconds; 0 with no calls."""
        return float(self._histogram.get_value_at_percentile(p)) / MICROSECONDS if self.count else 0.0
