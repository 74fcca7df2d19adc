"""The method's figures in words: a ratio with its interval, a noise floor, a pooled row, the noise's components and
what the pilot found. harness.method computes the numbers; these say them, for every page and the terminal."""

from __future__ import annotations

import math

from harness.method.noise import Noise
from harness.method.pilot import SERVER, Pilot
from harness.method.pooling import Combined, Pooled
from harness.method.verdicts import BLOCKS, Interval, Method, noise_floor, separated, verdict
from harness.render.summaries import rate


def ratio_text(ratio: Interval) -> str:
    """ "0.87 [0.84, 0.90]": a ratio with its interval, as every table and answer shows it."""
    high = f"{ratio.high:.2f}" if math.isfinite(ratio.high) else "∞"
    return f"{ratio.value:.2f} [{ratio.low:.2f}, {high}]"


def calibration_text(control: Interval) -> str:
    """The noise floor an A/A control gives ("±3.1%"), said with "the A/A control separated: untrustworthy" where
    the method failed."""
    floor = noise_floor(control)
    floor_text = f"±{floor:.1%}" if math.isfinite(floor) else "no interval"
    if separated(control):
        return f"{floor_text}, but the A/A control separated: untrustworthy"
    return floor_text


def held_text(found: Pooled, days: int) -> str:
    """How a pooled ratio reads in a row: "over 3 runs on 2 days: 0.66 [0.58, 0.75], runs apart by ±8%"."""
    ratio = found.ratio
    plural = "s" if days != 1 else ""
    said = f"over {found.runs} runs on {days} day{plural}: {ratio.value:.2f} [{ratio.low:.2f}, {ratio.high:.2f}]"
    apart = math.expm1(found.tau)
    said += f", runs apart by ±{apart:.0%}" if apart >= 0.005 else ", runs agree"  # "±0%" says they agree
    return said + (" (the runs disagree)" if found.disagree else "")


def over_runs_text(found: Combined) -> str:
    """How a row's evidence reads: "over 3 runs on 2 days", with "(the runs disagree)" where they do."""
    plural = "s" if found.days != 1 else ""
    said = f"over {found.runs} runs on {found.days} day{plural}"
    return said + (" (the runs disagree)" if found.disagree else "")


def noise_text(self: Noise) -> str:
    """The components in a sentence, as the tables and `harness noise` tell them ("" where none was read)."""
    parts = [
        f"{name} {value:.1%}"
        for name, value in (
            ("a slice's sd about its label's mean in its block", self.slice_sd),
            ("a cycle's log ratio sd within a block", self.cycle_sd),
            ("a block's log ratio sd", self.block_sd),
            ("what a restart adds", self.restart_sd),
        )
        if value is not None
    ]
    if self.lag1 is not None:
        parts.append(f"neighbouring slices' correlation {self.lag1:.2f}")
    return "Noise (log scale): " + "; ".join(parts) + "." if parts else ""


def pilot_text(self: Pilot, cpu: str) -> str:
    """What the pilot tells a user about this machine, in a few lines."""
    noise, found = self.noise, self.ratio
    reached = (
        "no interval (fewer than two blocks)"
        if found is None or not math.isfinite(found.high)
        else f"±{math.expm1(found.half_width):.1%} ({ratio_text(found)}, {verdict(found, 0.05)})"
    )
    lines = [
        f"On {cpu}: {self.workload} ({SERVER} against an independent start of itself, {self.driver}), "
        f"{self.design} design: an A/A pair resolved {reached} in {self.seconds / 60:.1f} min "
        f"({self.blocks} {'blocks' if self.design == BLOCKS else 'rounds of fresh starts'}).",
    ]
    if self.drift is not None:
        lines.append(f"The rate drifts about {math.expm1(self.drift):.0%} over 10 s on one server.")
    if said := noise_text(noise):
        lines.append(said)
    costs = self.costs
    lines.append(
        f"Costs: a server start {costs.start:.1f} s, a warm-up {costs.warm:.1f} s, "
        + (f"a slice {self.slice_seconds:g} s" if self.design == BLOCKS else "a window (the scenario's run seconds)")
        + f" + {costs.slice_overhead:.2f} s beyond its load."
    )
    if self.design == BLOCKS and noise.cycle_sd is not None:
        method = Method(slice_seconds=self.slice_seconds)
        expected = [
            f"±{design.half_width:.1%} in {minutes} min ({design.blocks} blocks of {design.cycles} cycles)"
            for minutes in (2, 5, 10)
            if math.isfinite((design := self.design_for(2, 2, minutes * 60, method)).half_width)
        ]
        if expected:
            lines.append("Expected for an A/A pair: " + "; ".join(expected) + ".")
    return "\n".join(lines)


def rate_text(found: Interval) -> str:
    high = rate(found.high) if math.isfinite(found.high) else "∞"
    return f"{rate(found.value)} [{rate(found.low)}, {high}]"
