"""A plan dealt into shards, each a run of a part of it (issue 56): the comparisons go to the shards by their
estimated cost, longest first to the least loaded shard (LPT scheduling, within 4/3 of the best balance), so that
shards end about together; a study's cells measured one by one (its checks, a study without comparisons) go with
the first shard that runs the study. Pure: estimates in, assignments out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SHARD = re.compile(r"^(\d+)/(\d+)$")


@dataclass(frozen=True)
class Shard:
    """The i-th of n shards of one plan (1-based), and the plan's id: every shard's run is `<plan>-s<i>`."""

    index: int
    count: int
    plan: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ValueError(f"a shard is i/n with 1 <= i <= n, got {self.index}/{self.count}")

    @property
    def run_id(self) -> str:
        return f"{self.plan}-s{self.index}"

    def to_json(self) -> dict[str, object]:
        return {"plan": self.plan, "index": self.index, "count": self.count}


def parse_shard(text: str, plan: str = "") -> Shard:
    """ "2/4" as the second of four shards."""
    match = SHARD.match(text.strip())
    if match is None:
        raise ValueError(f"a shard is i/n, such as 1/2, got {text!r}")
    return Shard(int(match.group(1)), int(match.group(2)), plan)


def deal(costs: Sequence[float], count: int) -> list[int]:
    """Each item's shard (0-based) of `count`: the costliest first, each to the shard with the least so far (ties
    to the lowest shard), so that the shards' totals are about even; a deterministic deal for the same costs."""
    if count < 1:
        raise ValueError(f"shards must be at least one, got {count}")
    loads = [0.0] * count
    found = [0] * len(costs)
    for item in sorted(range(len(costs)), key=lambda each: (-costs[each], each)):
        shard = min(range(count), key=lambda each: (loads[each], each))
        found[item] = shard
        loads[shard] += costs[item]
    return found
