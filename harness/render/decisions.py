"""The decision table as data: one row per question, merged from its study's rows (one per workload or stack it
was measured on), answered first in the question's own words, then how sure, what to avoid and how far to trust
it. The words the rows use are in harness.render.glossary, a row's terminal line in harness.render.lines;
harness.render.findings gathers the rows, and both renderers draw them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.decision import SEPARATED, YES_NO, Decision, Standing, answered
from harness.method.verdicts import noise_floor
from harness.render.wording import calibration_text, ratio_text

ANSWER_WORDS = 80  # an answer's most words: the decision first, then the figures that carry it
ANSWER_CHARACTERS = 160  # a row's answer in the decision table at most; the answers below it say more
SURE_CHARACTERS = 200  # a row's "how sure" at most
# The decision table's columns after the question, as both renderers head them.
DECISION_COLUMNS = (
    "answer",
    "how sure",
    "avoid",
    "noise floor",
    "evidence",
)
NOT_TRUSTED = "not trusted"  # how a row's "how sure" opens where it is not trusted, before why


@dataclass(frozen=True)
class Row:
    """One question of the decision table, merged from its study's rows (one per workload or stack it was
    measured on), with its short answer."""

    question: str
    lead: str  # the answer in the question's words, at most ANSWER_CHARACTERS (`said` whole)
    pick: str
    sure: str  # the pick over the runner-up, with its interval (or their range) and the verdict
    avoid: str
    floor: str  # how its study's A/A control read, with the noise floor: the smallest difference it could resolve
    trusted: bool
    why: str  # why it is not trusted; "" when it is
    study: str
    evidence: tuple[tuple[str, str], ...]  # (run id, machine) of each run behind it
    workloads: tuple[str, ...]  # the workloads of its comparisons, which the page opens from the row
    answer: str
    stacks: tuple[str, ...] = ()  # the stacks it sets side by side (the page's stack filter); (): its comparisons'
    closing: str = ""  # what would close it where it is open: blocks, runs and minutes, and the command
    pooled: str = "the newest run alone"  # over how many runs and days its rows pool
    answered: bool = False  # every part certified (the selection rule) or resolved (a tie, faster or slower)
    # What each other machine class with runs of the same code says of it ("GenuineIntel 6/207/2, over 2 runs on 1
    # day: same answer"), where any has such runs.
    elsewhere: tuple[str, ...] = ()
    said: str = ""  # the answer in the question's words whole: yes or no and by how much, or which one and by how much


def margin(found: Decision) -> str:
    """The pick over the runner-up as a row says it: "1.04 [0.99, 1.08]", one figure where it has no interval,
    then what the row adds (", over 3 searches a stack"); "—" where nothing was set against the pick."""
    if found.over is not None:
        said = ratio_text(found.over)
    elif found.over_point is not None:
        said = f"{found.over_point:.2f}"
    else:
        return "—"
    return said + found.over_note


def picked(found: Decision) -> str:
    """The pick in words: certified by the selection rule ("Pick a: the fastest, or within 5% of the fastest
    (95%); b could be as fast") or not yet ("Not yet: a, b or c"); where the rule does not judge the row, its
    margin over the runner-up, or that the two tie or were not told apart."""
    if found.certified is not None:
        others = [each for each in found.contenders if each != found.pick]
        by = f" (by {found.measure}: {found.measured_why})" if found.measure else ""
        if not found.certified:
            return f"Not yet: {open_text(found.contenders or (found.pick, found.runner_up), found.apart)}{by}"
        best, of = (f"the most {found.measure}", "the most") if found.measure else ("the fastest", "the fastest")
        said = f"Pick {found.pick}: {best}, or within {found.delta:.0%} of {of} (95%)"
        could = "do as well" if found.measure else "be as fast"
        return said + (f"; {', '.join(others)} could {could}" if others else "") + by
    if found.standing is Standing.TIE:
        return f"Either {found.pick} or {found.runner_up}: they tie ({margin(found)} ×)"
    if found.standing is Standing.UNRESOLVED:
        return f"{found.pick} or {found.runner_up}: not told apart yet ({margin(found)} ×)"
    return f"{found.pick}: {margin(found)} × {found.runner_up}"


MOST_NAMED = 3  # an open row names at most this many of its candidates


def open_text(contenders: Sequence[str], apart: float) -> str:
    """The candidates still in an open row, the leader first, at most MOST_NAMED by name, and how far apart they are
    so far: "a, b or c, within 6% of each other", or "a, b, c and 5 more, within 6%"."""
    named = list(contenders[:MOST_NAMED])
    more = len(contenders) - len(named)
    listed = f"{', '.join(named[:-1])} or {named[-1]}" if len(named) > 1 else named[0]
    if more:
        listed = f"{', '.join(named)} and {more} more"
    return f"{listed}, within {apart:.0%} of each other" if len(contenders) > 1 else listed


def clauses(text: str) -> list[str]:
    """A text's clauses: its parts between "; " outside brackets and parentheses."""
    found, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += (char in "([") - (char in ")]")
        if depth == 0 and text.startswith("; ", index):
            found.append(text[start:index])
            start = index + 2
    return [*found, text[start:]]


def clipped(text: str, most: int) -> str:
    """text in at most `most` characters: its whole clauses that fit, then "…" where any were left off; a first
    clause too long alone is cut at a word."""
    if len(text) <= most:
        return text
    kept: list[str] = []
    for clause in clauses(text):
        if len("; ".join([*kept, clause])) + 3 > most:
            break
        kept.append(clause)
    if kept:
        return "; ".join(kept) + "; …"
    return text[: most - 1].rsplit(" ", 1)[0] + "…"


def stance(found: Decision) -> str:
    """What one part of a row answers, without its figures: its yes or no, "Pick x" where certified, "Not yet"."""
    if found.word:
        return found.word
    if found.certified is not None:
        return f"Pick {found.pick}" if found.certified else "Not yet"
    return found.pick


def tally(found: Sequence[Decision], told: Sequence[str]) -> str:
    """A row of many parts in few words: each answer with the scopes it holds on ("Pick one reply on sync-w10 and
    aio-uvloop; Not yet on grpclib-asyncio"), or, too long for the table, with how many of them."""
    held: dict[str, list[str]] = {}
    for each, scope in zip(found, told, strict=True):
        held.setdefault(stance(each), []).append(scope)
    held = dict(sorted(held.items(), key=lambda item: YES_NO.index(item[0]) if item[0] in YES_NO else -1))
    named_scopes = "; ".join(f"{word} on {listed(scopes)}" for word, scopes in held.items())
    margins = margins_of(found)
    if len(held) == 1 and len(margins) == len(found) and all(map(answered, found)):  # one answer: by how much
        runners = listed(list(dict.fromkeys(each.runner_up for each in found)))
        named_scopes += f": {span(margins)} × {runners}"
    if len(named_scopes) <= ANSWER_CHARACTERS:
        return named_scopes
    return "; ".join(f"{word} on {len(scopes)} of {len(found)}" for word, scopes in held.items())


def scopes(found: Sequence[Decision]) -> list[str]:
    """What tells a question's rows apart: the parts of their workloads that differ (the stack, the size)."""
    parts = [each.workload.split("/") for each in found]
    if len(found) == 1 or len({len(each) for each in parts}) != 1:
        return [each.workload for each in found]
    differing = [index for index in range(len(parts[0])) if len({each[index] for each in parts}) > 1]
    # a part said twice ("hello/c50/hello": a scenario and the row's scope) is said once
    return ["/".join(dict.fromkeys(each[index] for index in differing)) for each in parts]


def span(values: Sequence[float]) -> str:
    """ "0.74 to 0.81", or one value."""
    low, high = min(values), max(values)
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f} to {high:.2f}"


def listed(names: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def short_lead(found: Sequence[Decision], told: Sequence[str], said: str) -> str:
    """A row's answer for the table, at most ANSWER_CHARACTERS: whole where it fits; a row of many parts as their
    tally; else its first clauses."""
    if len(said) <= ANSWER_CHARACTERS:
        return said
    if len(found) > 1:
        return clipped(tally(found, told), ANSWER_CHARACTERS)
    return clipped(said, ANSWER_CHARACTERS)


def lead(found: Sequence[Decision], told: Sequence[str]) -> str:
    """A question's answer in its own words, before any figure of how sure: the study's own wording where it has
    one (a yes or no), else which to pick and by how much, per workload or stack (`told`) where that differs."""
    if len(found) == 1:
        return found[0].told or picked(found[0])
    picks = list(dict.fromkeys(each.pick for each in found))
    margins = margins_of(found)
    if len(picks) == 1 and len(margins) == len(found) and not any(each.told or each.measure for each in found):
        runners = listed(list(dict.fromkeys(each.runner_up for each in found)))
        if all(each.certified for each in found):
            delta = max(each.delta for each in found)
            return (
                f"Pick {picks[0]} on {listed(list(told))}: the fastest, or within {delta:.0%} of the fastest (95%); "
                f"{span(margins)} × {runners}"
            )
        if all(each.certified is None for each in found):
            return f"{picks[0]} on {listed(list(told))}: {span(margins)} × {runners}"
    if all(each.word for each in found):
        return by_word([(scope, each.word, each.lead) for each, scope in zip(found, told, strict=True)])
    return "; ".join(f"{scope}: {each.told or picked(each)}" for each, scope in zip(found, told, strict=True))


def by_word(parts: Sequence[tuple[str, str, str]]) -> str:
    """Yes-or-no answers of several workloads or stacks (scope, word, what follows) as one that opens with its
    answer: each word once, then each thing said after it once, with the scopes it holds on ("Yes on hello/aio:
    uvloop 1.18 [1.10, 1.27] x asyncio; No on hello/grpclib and s3-mongo-region/grpclib: neither loop clearly
    faster; on s3-unary-region/grpclib: asyncio 1.09 [1.00, 1.18] x uvloop")."""
    groups: dict[str, dict[str, list[str]]] = {}
    for scope, word, rest in sorted(parts, key=lambda part: YES_NO.index(part[1])):
        groups.setdefault(word, {}).setdefault(rest, []).append(scope)
    return "; ".join(
        f"{word} " + "; ".join(f"on {listed(scopes)}: {rest}" for rest, scopes in held.items())
        for word, held in groups.items()
    )


def merged(question: str, found: Sequence[Decision]) -> Row:
    """A question's rows as one: the same pick everywhere said once, with the range of its margins; different
    picks said per workload."""
    told = scopes(found)
    picks = list(dict.fromkeys(each.pick for each in found))
    first = found[0]
    if len(found) == 1:
        pick = first.pick
        sure = sure_text(first) + (f"; to close it: {first.closing}" if first.closing else "")
        sure += f"; {first.held}" if first.held else ""
        avoid = first.avoid
    else:
        each_pick = ", ".join(f"{e.pick} ({s})" for e, s in zip(found, told, strict=True))
        pick = f"{picks[0]} (on {listed(told)})" if len(picks) == 1 else each_pick
        margins = [each.over for each in found]
        if all(margins) and len(picks) == 1 and not any(each.measure for each in found):
            verdicts = [each.verdict for each in found]
            counted = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
            runners = ", ".join(dict.fromkeys(each.runner_up for each in found))
            lowest = [each.lowest for each in found if each.lowest is not None]
            bound = f"at least {span(lowest)} × every rival; " if len(lowest) == len(found) else ""
            sure = f"{bound}{span([m.value for m in margins if m])} × the runner-up ({runners}): {counted}"
        else:
            sure = "; ".join(f"{s}: {sure_text(e)}" for e, s in zip(found, told, strict=True))
        open_parts = [f"{s}: {e.closing}" for e, s in zip(found, told, strict=True) if e.closing]
        if len(sure) > SURE_CHARACTERS:  # each part's figures are on the study's page
            done = sum(answered(each) for each in found)
            sure = f"{done} of {len(found)} answered" + (
                f"; {span(margins_of(found))} × the runner-up" if margins_of(found) else ""
            )
        sure += f"; to close it: {'; '.join(open_parts)}" if open_parts else ""
        avoided = [each for each in found if each.avoid != "—"]
        names = list(dict.fromkeys(each.avoided for each in avoided))
        worst = [each.worst.value for each in avoided if each.worst]
        if len(names) == 1 and len(worst) == len(avoided):
            of = "the pick" if all(each.certified is not False for each in avoided) else "the one leading"
            avoid = f"{names[0]} ({span(worst)} of {of})"
        else:
            avoid = "; ".join(f"{s}: {e.avoid}" for e, s in zip(found, told, strict=True) if e.avoid != "—") or "—"
    widest = max(found, key=lambda each: -1.0 if each.floor is None else each.floor)
    evidence = tuple(dict.fromkeys((each.run_id, each.machine) for each in found))
    said = lead(found, told)
    why = "; ".join(dict.fromkeys(each.why or SEPARATED for each in found if not each.trusted))
    row = Row(
        question=question,
        lead=short_lead(found, told, said),
        said=said,
        pick=pick,
        sure=clipped(sure, SURE_CHARACTERS - (len(f"{NOT_TRUSTED}: {why}. ") if why else 0)),
        avoid=avoid,
        floor="—" if widest.control is None else calibration_text(widest.control),
        trusted=all(each.trusted for each in found),
        why=why,
        study=first.study,
        evidence=evidence,
        workloads=tuple(dict.fromkeys(each.comparison or each.workload for each in found)),
        answer="",
        stacks=tuple(dict.fromkeys(stack for each in found for stack in each.stacks))
        if all(each.stacks for each in found)
        else (),
        closing=closing(found),
        pooled=pooled_text(found),
        answered=all(answered(each) for each in found),
    )
    return Row(**{**row.__dict__, "answer": answer(row, found)})


def sure_text(found: Decision) -> str:
    """How sure one row's pick is: where the selection rule judges it, its lowest bound over every rival (the
    rival that binds it), certified or not, and beside it the pick over the runner-up ("at least 0.97 x every
    rival (sync-w10 binds): certified; 1.04 [0.99, 1.08] x sync-w10"); else the pick over the runner-up with its
    verdict."""
    if found.over is None and found.over_point is None:  # nothing set against the pick: its verdict alone
        return found.verdict
    if found.certified is None or found.lowest is None:
        return f"{margin(found)} × {found.runner_up}: {found.verdict}"
    lowest = f"{found.lowest:.2f}" if math.isfinite(found.lowest) else "—"
    measure = f" in {found.measure}" if found.measure else ""
    # whether it is certified, the answer says ("Pick" or "Not yet")
    return f"at least {lowest} × every rival{measure} ({found.binding} binds); {margin(found)} × {found.runner_up}"


def margins_of(found: Sequence[Decision]) -> list[float]:
    """The parts' picks over their runners-up, where paired."""
    return [each.over.value for each in found if each.over is not None]


def pooled_text(found: Sequence[Decision]) -> str:
    """Over how many runs and days a row pools: its parts' fewest and most ("over 4 runs on 2 days", "over 1 to 4
    runs on 1 to 2 days")."""
    runs, days = [each.runs for each in found], [each.days for each in found]

    def span_of(values: list[int], word: str) -> str:
        low, high = min(values), max(values)
        return f"{low} {word}" + ("s" if low != 1 else "") if low == high else f"{low} to {high} {word}s"

    return f"over {span_of(runs, 'run')} on {span_of(days, 'day')}"


def study_command(study: str) -> str:
    """The command that measures a study again: the default run for a default study, else its own run-all."""
    from harness.studies import DEFAULT_STUDIES
    from harness.studies import study as registered

    if study in DEFAULT_STUDIES:
        return "make bench"
    try:
        return registered(study).command
    except KeyError:  # a study no longer registered, read from an old run
        return f"python -m harness run-all --study {study}"


MOST_CLOSINGS_SAID = 2  # a row's answer says what would close this many of its open parts; its table says all


def closing(found: Sequence[Decision]) -> str:
    """What would close a row's open parts, each said once (the first MOST_CLOSINGS_SAID, and how many more the
    table gives), with the command that measures them again: the row's own where it names one, else its study's."""
    said = list(dict.fromkeys(each.closing for each in found if each.closing))
    if not said:
        return ""
    more = len(said) - MOST_CLOSINGS_SAID
    told = "; ".join(said[:MOST_CLOSINGS_SAID]) + (f"; and {more} more in its table" if more > 0 else "")
    command = next((each.command for each in found if each.command), "") or study_command(found[0].study)
    return f"To close it: {told}, by `{command}`."


def answer(row: Row, found: Sequence[Decision]) -> str:
    """The row in words, at most ANSWER_WORDS: the decision, then the figures that carry it."""
    first = found[0]
    where = f" ({first.workload})" if len(found) == 1 else ""
    said = [f"{row.said or row.lead}{where}."]
    if row.avoid != "—":
        said.append(f"Avoid {row.avoid}.")
    if not row.trusted:
        said.insert(1, f"Not to be trusted yet ({row.why}): measure longer before you act on it.")
    said += [f"Pooled {each.held}." for each in found[:1] if each.held and len(found) > 1]
    widths = [noise_floor(each.over) for each in found if each.over is not None]
    # a row with no pick yet (an open part) has a leader, whose margin over the runner-up is what it knows
    margin = "The pick's margin" if row.answered else "The leader's margin"
    if widths and all(math.isfinite(width) for width in widths) and max(widths) <= 1:
        said.append(f"{margin} is known to ±{max(widths):.1%}.")
    elif widths:
        said.append(f"{margin} is not known yet: its interval spans more than a factor of two.")
    floors = [each.floor for each in found if each.floor is not None and math.isfinite(each.floor)]
    if floors:
        said.append(f"The run could tell apart differences down to ±{max(floors):.1%}.")
    # The decision, what would close it, then as many of the figures as fit; a decision too long to leave room for
    # what would close it is said in as many of its parts as fit (its page says all).
    room = ANSWER_WORDS - (len(row.closing.split()) if row.closing else 0)
    kept = [fitted(said[0], room), *([row.closing] if row.closing else [])]
    for sentence in said[1:]:
        if len(" ".join([*kept, sentence]).split()) <= ANSWER_WORDS:
            kept.append(sentence)
    return " ".join(" ".join(kept).split()[:ANSWER_WORDS])


def fitted(text: str, words: int) -> str:
    """text in at most `words` words: whole where it fits, else as many of its parts ("; ") as fit, then "…"."""
    if len(text.split()) <= words:
        return text
    parts = text.rstrip(".").split("; ")
    kept: list[str] = []
    for part in parts:
        if len("; ".join([*kept, part]).split()) + 1 > words:
            break
        kept.append(part)
    return ("; ".join(kept) if kept else " ".join(text.split()[: words - 1])) + "; …"


def decision_rows(decisions: Sequence[Decision]) -> list[Row]:
    """One row per question, in the order the studies asked them."""
    grouped: dict[str, list[Decision]] = {}
    for each in decisions:
        grouped.setdefault(each.question, []).append(each)
    return [merged(question, found) for question, found in grouped.items()]
