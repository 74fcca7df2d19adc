"""A row of the decision table as a study makes it: the question, its pick and runner-up with their margins and
intervals, the selection rule's reading, how far to trust it, and what would close it where it is open."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import TypedDict

from harness.method.selection import Selection
from harness.method.verdicts import TIE, UNRESOLVED, Interval, noise_floor

SEPARATED = "the A/A control separated"  # why a row is not trusted, where its decision says no more
CERTIFIED, NOT_CERTIFIED = "certified", "not yet certified"  # a selection row's verdict
# The words a yes-or-no answer opens with, in the order a merged answer says them.
YES, NO, NOT_YET, NOT_TOLD_YET = "Yes", "No", "Not yet", "Not told yet"
YES_NO = (YES, NO, NOT_YET, NOT_TOLD_YET)


class Standing(Enum):
    """How a row stands where the selection rule does not judge it (Decision.certified is None)."""

    DECIDED = "decided"  # one is ahead (faster, cheaper, ...), or the study's own test answered it
    TIE = "tie"  # within the tie band: either will do
    UNRESOLVED = "unresolved"  # not told apart yet

    @classmethod
    def of(cls, verdict: str) -> Standing:
        """A comparison's verdict (harness.method.verdicts: faster, slower, tie, unresolved) as a row's standing."""
        return {TIE: cls.TIE, UNRESOLVED: cls.UNRESOLVED}.get(verdict, cls.DECIDED)


class Answer(TypedDict):
    """A row's answer in words as Decision holds it: its yes or no, and what follows."""

    word: str
    lead: str


def answer_of(opening: str, rest: str) -> Answer:
    """A row's answer as Decision holds it: its yes or no apart (`word`) where it opens with one of YES_NO, the
    rest as its lead; an answer opening otherwise ("No, it ties") whole as its lead."""
    return Answer(word=opening, lead=rest) if opening in YES_NO else Answer(word="", lead=f"{opening}: {rest}")


@dataclass(frozen=True)
class Decision:
    """One row of the decision table: a question a team asks, what to pick for it, and how sure that is."""

    question: str
    workload: str
    pick: str
    runner_up: str
    verdict: str  # tie (either will do), faster, or unresolved; certified or not yet certified (the selection rule)
    avoid: str
    study: str  # the evidence: the study, its run and the machine it ran on
    run_id: str
    machine: str
    trusted: bool = True  # False when its study's A/A control separated, or its comparison cannot carry it
    why: str = ""  # why it is not trusted ("the A/A control separated, 1.27 [1.04, 1.56]"); "" when it is
    over: Interval | None = None  # the pick over the runner-up, where paired in blocks
    # The pick over the runner-up where it is one figure with no interval (one search a stack); None: `over`'s.
    over_point: float | None = None
    over_note: str = ""  # what the row says after that margin (", over 3 searches a stack")
    worst: Interval | None = None  # the one to avoid over the pick, where it was slower
    control: Interval | None = None  # its study's A/A control (the twin over the reference); None: none
    # The comparison's workload where the row's own (`workload`) names more (a stack within it); "": the same.
    comparison: str = ""
    # The labels of the pick and the runner-up in the comparison, where paired in its blocks (so that runs can be
    # pooled); () where the row is not one such pair.
    labels: tuple[str, ...] = ()
    # The pick over the runner-up pooled over this run and earlier ones of the same machine class and server code
    # (harness.render.wording.held_text); "" where there are none.
    held: str = ""
    # The answer in the question's own words where the study words it, after its yes or no (`word`, one of YES_NO,
    # or ""): "aio-uvloop serves 4.70 [4.52, 4.89] times sync-w10" after "Yes"; "": the row's pick and its margin say
    # it (harness.render.decisions.lead).
    lead: str = ""
    word: str = ""
    standing: Standing = Standing.DECIDED
    avoided: str = ""  # the stack `avoid` names, "" where it names none
    # The stacks (labels) the row sets side by side, for the page's stack filter; (): its comparisons'.
    stacks: tuple[str, ...] = ()
    # What would close it where it is open: more blocks, as runs of its study and minutes (comparing.close_text).
    closing: str = ""
    # The command that would close it, where its study's own does not (capacity's with --repeats); "": the study's.
    command: str = ""
    # The runs and days its pick over the runner-up pools (1 and 1: the newest run alone).
    runs: int = 1
    days: int = 1
    # Where the row asks "which" and answers by the selection rule (harness.method.selection): whether its pick is
    # certified, the best or within `delta` of the best with 95% confidence (None: a row the rule does not judge),
    # its lowest simultaneous bound over any rival and that rival, and the candidates that could still be the best
    # (the pick first).
    certified: bool | None = None
    lowest: float | None = None
    binding: str = ""
    contenders: tuple[str, ...] = ()
    delta: float = 0.05
    apart: float = 0.0  # how far the contenders lie behind the pick by their estimates (0.06: within 6%)
    # What the row ranks by where not the rate ("calls per server CPU second"), and why ("the driver at 84% of its
    # CPU set the rates"); "": the rate.
    measure: str = ""
    measured_why: str = ""

    @property
    def floor(self) -> float | None:
        """The study's noise floor: its A/A control's half-width (0.04 is ±4%); None without a control."""
        return None if self.control is None else noise_floor(self.control)

    @property
    def told(self) -> str:
        """The answer in the question's own words whole: its yes or no, then the rest ("" where the study words
        none)."""
        return f"{self.word}: {self.lead}" if self.word else self.lead


class Choice(TypedDict):
    """A selection as the Decision holds it."""

    verdict: str
    standing: Standing
    certified: bool
    lowest: float
    binding: str
    contenders: tuple[str, ...]
    delta: float
    apart: float


def choice(chosen: Selection) -> Choice:
    """A selection's reading for its decision row: certified or not, its lowest bound and the rival that binds it,
    the contenders, δ, and how far the contenders lie from the pick by their estimates (the pick's largest ratio
    over one, less 1)."""
    binding = chosen.binding
    ratios = [bound.ratio for rival in chosen.contenders[1:] if (bound := chosen.bound(rival))]
    return Choice(
        verdict=CERTIFIED if chosen.certified else NOT_CERTIFIED,
        standing=Standing.DECIDED if chosen.certified else Standing.UNRESOLVED,
        certified=chosen.certified,
        lowest=chosen.lowest,
        binding="" if binding is None else binding.rival,
        contenders=chosen.contenders,
        delta=chosen.delta,
        apart=max((ratio - 1 for ratio in ratios if math.isfinite(ratio)), default=0.0),
    )


def answered(found: Decision) -> bool:
    """Whether a row answers its question: its pick certified where the selection rule judges it, else its verdict
    resolved (a tie, faster or slower)."""
    if found.certified is not None:
        return found.certified
    return found.standing is not Standing.UNRESOLVED
