"""results/report.html: the findings as one page that works offline. The decision table opens its evidence; each
comparison is a forest plot beside its blocks' ratios (harness.render.vega); filters by study, stack, workload and
machine class keep their state in the URL (`#stack=aio-uvloop&study=wire`); the "which stack for my service"
view ranks the stacks for a kind of work and number of clients; the tables save as CSV and JSON
(harness.render.exports); each run's provenance, with what changed against the run before, and each study's two newest
runs side by side follow. The data is the page's own JSON; nothing is fetched.
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from harness.render.decisions import DECISION_COLUMNS, NOT_TRUSTED, Row
from harness.render.exports import decision_csv, ratios_csv
from harness.render.findings import TLS_MARK, WORK, Findings, differences
from harness.render.glossary import GLOSSARY
from harness.render.leaderboard import Boards
from harness.render.table import Cell, Table
from harness.render.vega import MEASURES, clients_chart, forest, vega_scripts

PAGE_TITLE = "Python RPC stacks: the decision and its evidence"
# What a server's name adds to its stack: an interpreter, a wire or way of connecting, processes, a floor, a driver.
_VARIANT = re.compile(r"(@[\w.]+|\+[\w-]+|-p\d+|-minimal|-pymongo)+$")


def base_stack(name: str) -> str:
    """The stack a server variant runs: `sync-w10` for `sync-w10@3.14t`, `sync-w10-p2` or `sync-w10-minimal`."""
    return _VARIANT.sub("", name)


def _stacks(names: list[str]) -> str:
    """A comparison's servers and the stacks they run, for the stack filter."""
    return " ".join(sorted({*names, *map(base_stack, names)}))


def _cell(text: str) -> str:
    return html.escape(text)


def _row(index: int, row: Row, ids: dict[int, list[str]], stacks: dict[int, list[str]], classes: dict[str, str]) -> str:
    runs = ", ".join(f"<code>{run}</code> ({_cell(machine)})" for run, machine in row.evidence)
    evidence = f'<a href="#row={index}">{row.study}</a>, {runs}' if ids[index] else f"{row.study}, {runs}"
    evidence += f"; {_cell(row.pooled)}" + "".join(f"; {_cell(clause)}" for clause in row.elsewhere)
    scenarios = " ".join(sorted({workload.split("/")[0] for workload in row.workloads}))
    sure = _cell(row.sure) if row.trusted else f"<b>{NOT_TRUSTED}</b>: {_cell(row.why)}. {_cell(row.sure)}"
    return (
        f'<tr data-study="{row.study}" data-stacks="{" ".join(stacks[index])}" data-row="{index}" '
        f'data-machines="{_cell("|".join(sorted({classes.get(run, "") for run, _ in row.evidence})))}" '
        f'data-pick="{_cell(row.pick)}" '
        f'data-scenarios="{scenarios}" data-ids="{" ".join(ids[index])}">'
        f"<td>{_cell(row.question)}</td><td><b>{_cell(row.lead)}</b></td><td>{sure}</td>"
        f"<td>{_cell(row.avoid)}</td><td>{_cell(row.floor)}</td>"
        f"<td>{evidence}</td></tr>"
    )


SHOWN = {"ratio": "× the fastest", "rate": "OK calls/s", "p50": "p50 latency", "p99": "p99 latency"}


def _chooser(choices: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """The "which stack for my service" view: the work and the clients picked, every stack ranked (filled by
    SCRIPT from the JSON, the choice kept in the URL: #work=s3-mongo&clients=50, and &tls=1 over TLS)."""
    if not choices:
        return ""
    bases = [work for work in WORK if work in choices or work + TLS_MARK in choices]
    works = "".join(f"<option value='{work}'>{_cell(WORK[work].label)}</option>" for work in bases)
    levels = sorted({int(level) for by in choices.values() for level in by})
    clients = "".join(
        f"<option value='{level}'{' selected' if level == levels[-1] else ''}>{level}</option>" for level in levels
    )
    shows = "".join(f"<option value='{name}'>{_cell(SHOWN[name])}</option>" for name in MEASURES)
    specs = {work: {name: clients_chart(by, name) for name in MEASURES} for work, by in choices.items()}
    return (
        "<h2 id='which'>Which stack for my service</h2><p>Pick the work your handlers do and how many calls are in "
        "flight at once, and whether clients connect over TLS: every stack measured there side by side (by the "
        "stacks study; large messages, in plaintext and TLS, by the wire study), fastest first, each as its rate "
        "over the fastest's with its 95% interval over blocks (paired), then its own OK calls/s and latency on that "
        "run's machine (compare those within one run), from the newest run. What TLS costs each stack on its own: "
        "the wire study.</p>"
        f"<div class='chooser'><label>work <select id='c-work'>{works}</select></label> "
        f"<label>clients <select id='c-clients'>{clients}</select></label> "
        "<label><input type='checkbox' id='c-tls'> over TLS</label></div>"
        "<table id='ranked'><thead><tr><th>rank</th><th>stack</th><th>× the fastest [95% CI]</th><th>verdict</th>"
        "<th>OK calls/s [95% CI]</th><th>p50 ms</th><th>p99 ms</th><th>blocks</th><th>run</th></tr></thead>"
        "<tbody></tbody></table>"
        "<p>The same work at every number of clients measured: where the ranking changes with the load. "
        f"<label>draw <select id='c-show'>{shows}</select></label></p>"
        "<div id='by-clients'></div>"
        f"<script type='application/json' id='choices'>{json.dumps(choices)}</script>"
        f"<script type='application/json' id='client-specs'>{_json(specs)}</script>"
    )


def _glossary() -> str:
    terms = "".join(f"<dt>{_cell(term)}</dt><dd>{_cell(meaning)}</dd>" for term, meaning in GLOSSARY)
    return f"<details id='words'><summary>Words</summary><dl>{terms}</dl></details>"


def _card(view: dict[str, Any], chart: int) -> str:
    floor = f", the study's noise floor ±{view['floor']:.1%}" if view["floor"] is not None else ""
    return (
        f'<section class="cmp" id="{_cell(view["id"])}" data-study="{view["study"]}" '
        f'data-stacks="{_stacks(view["stacks"])}" data-scenarios="{view["scenario"]}" data-ids="{_cell(view["id"])}" '
        f'data-machines="{_cell(view["class"])}">'
        f'<h3><a href="#cmp={_cell(view["id"])}">{_cell(view["study"])}: {_cell(view["workload"])}</a> '
        f"<small>run {view['run']}, {_cell(view['machine'])}</small></h3>"
        f"<p>{_cell(view['question'])} Run <code>{view['run']}</code>, {_cell(view['machine'])}, "
        f"{view['design']}{floor}; tie band 1 ± {view['tie']:.0%}.</p>"
        f'<div class="chart" id="chart-{chart}"></div></section>'
    )


def _table(head: Sequence[str], body: str) -> str:
    """A table of these column heads around rows already in HTML."""
    heading = "".join(f"<th>{_cell(each)}</th>" for each in head)
    return f"<table><thead><tr>{heading}</tr></thead><tbody>{body}</tbody></table>"


def _rows(rows: Sequence[Sequence[str]]) -> str:
    """Rows of plain text, escaped."""
    return "".join("<tr>" + "".join(f"<td>{_cell(str(v))}</td>" for v in row) + "</tr>" for row in rows)


def _provenance(run: dict[str, Any], before: dict[str, Any] | None) -> str:
    facts = [
        ("commit", f"{run['commit'][:12]} ({'clean' if run['clean'] else 'uncommitted changes'})"),
        ("machine", run["machine"]),
        ("platform", run["platform"]),
        ("interpreter", run["python"]),
        ("studies", ", ".join(run["studies"])),
        ("status, wall time", f"{run['status']}, {run['wall_minutes']} min (budget {run['budget_minutes']} min)"),
        ("pinning", json.dumps(run["pinning"], sort_keys=True)),
        ("method", json.dumps(run["thresholds"], sort_keys=True)),
        ("pilot", json.dumps(run["pilot"], sort_keys=True) if run["pilot"] else "none"),
        *[(f"tool {name}", version) for name, version in run["tools"].items()],
    ]
    packages = ", ".join(f"{name} {version}" for name, version in sorted(run["packages"].items()))
    changed = (
        f"against <code>{before['run']}</code>: " + _cell("; ".join(differences(before, run)) or "nothing changed")
        if before
        else "the oldest run shown"
    )
    return (
        f"<details><summary>Run <code>{run['run']}</code>, {_cell(run['machine'])}, {run['date']}: {changed}"
        "</summary>"
        + _table(["what", "value"], _rows(facts))
        + f"<p class='packages'>Packages: {_cell(packages)}</p></details>"
    )


def _pair(pair: dict[str, Any]) -> str:
    moved = pair["moved"]
    ratios = (
        f"<p>Each ratio in blocks, B's against A's. {_cell(moved['note'])}</p>"
        + _table(moved["head"], _rows(moved["rows"]))
        if moved["rows"]
        else ""
    )
    counts = ", ".join(f"{name} {count}" for name, count in pair["counts"].items())
    return (
        f'<details data-study="{pair["study"]}"><summary>{pair["study"]}: B <code>{pair["b"]["run"]}</code> '
        f"({_cell(pair['b']['machine'])}) against A <code>{pair['a']['run']}</code> ({_cell(pair['a']['machine'])})"
        f"</summary><p>The runs differ in: {_cell('; '.join(pair['differ']) or 'nothing recorded')}.</p>"
        f"<p>Tie band 1 ± {pair['tie']:.0%}: {counts}; geometric mean of B/A {pair['mean']:.2f}.</p>"
        + _table(pair["head"], _rows(pair["rows"]))
        + ratios
        + "</details>"
    )


# The page's script and style, in files of their own beside this one, read when the page is rendered.
SCRIPT = Path(__file__).with_name("page.js").read_text()
STYLE = Path(__file__).with_name("page.css").read_text()


def _download(name: str, media: str, text: str, label: str) -> str:
    """A link that saves `text` as a file: a data: URL, so it works offline."""
    return f"<a download='{name}' href='data:{media};charset=utf-8,{urllib.parse.quote(text)}'>{_cell(label)}</a>"


FINDINGS_JSON = "findings.json"  # the rows and every comparison with its blocks, beside the page


def findings_json(found: Findings) -> str:
    """The rows and every comparison (those aside too) with their blocks, as JSON: written beside the page, which
    links it rather than holding it (it grows with every run; the page holds what it draws)."""
    views = [*found.comparisons, *found.asides]
    return json.dumps({"rows": [asdict(row) for row in found.rows], "comparisons": views}, indent=1) + "\n"


def _exports(found: Findings) -> str:
    views = [*found.comparisons, *found.asides]
    return (
        "<p class='exports'>Save: "
        + _download("decisions.csv", "text/csv", decision_csv(found.rows), "the decision table (CSV)")
        + " · "
        + _download("ratios.csv", "text/csv", ratios_csv(views), "every comparison's ratios (CSV)")
        + f" · <a download href='{FINDINGS_JSON}'>the rows and comparisons with every block (JSON)</a>, beside this "
        "page</p>"
    )


INLINE = ((re.compile(r"\*\*(.+?)\*\*"), r"<b>\1</b>"), (re.compile(r"`(.+?)`"), r"<code>\1</code>"))
LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")


def _inline(text: str) -> str:
    """A markdown table cell as HTML: bold and code kept, a link's text alone."""
    shown = _cell(LINK.sub(r"\1", text))
    for pattern, replacement in INLINE:
        shown = pattern.sub(replacement, shown)
    return shown


def _inline_rows(rows: Sequence[Sequence[Cell]]) -> str:
    """Rows of markdown table cells as HTML rows (bold and code kept)."""
    return "".join("<tr>" + "".join(f"<td>{_inline(str(cell))}</td>" for cell in row) + "</tr>" for row in rows)


def _study_tables(study: str, tables: Sequence[dict[str, Any]]) -> str:
    """A study's tables, folded: each under its name, with its page and its CSV."""
    drawn = [
        f"<h4>{_cell(table['name'])} · <a href='{study}/{table['csv']}'>CSV</a> · on "
        f"<a href='{study}/{table['page']}'>{_cell(table['page'])}</a></h4>"
        + _table(table["columns"], _inline_rows(table["rows"]))
        for table in tables
    ]
    count = f"{len(tables)} table" + ("s" if len(tables) != 1 else "")
    return f"<details class='tables' data-study='{study}'><summary>{study}: {count}</summary>{''.join(drawn)}</details>"


ASIDES_DRAWN = 2  # a study's runs aside drawn on the page, the newest; older ones are linked (their pages)


def newest_asides(views: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The comparisons of each study's ASIDES_DRAWN newest runs aside, drawn; and (study, run) of the older ones,
    linked, so that the page stays bounded as runs aside accumulate."""
    runs: dict[str, list[str]] = {}
    for view in views:
        if view["run"] not in runs.setdefault(view["study"], []):
            runs[view["study"]].append(view["run"])
    kept = {(study, run) for study, found in runs.items() for run in sorted(found, reverse=True)[:ASIDES_DRAWN]}
    linked = sorted({(view["study"], view["run"]) for view in views} - kept, key=lambda each: (each[0], each[1]))
    return [view for view in views if (view["study"], view["run"]) in kept], linked


def _select(key: str, values: list[str]) -> str:
    options = "".join(f'<option value="{_cell(v)}">{_cell(v)}</option>' for v in values)
    return f'<label>{key} <select id="f-{key}"><option value="">all</option>{options}</select></label>'


def _soak(soak: Mapping[str, Any] | None) -> str:
    """The newest soak run: per server whether it kept serving through the faults, each criterion, its chart."""
    if soak is None:
        return "<p>No soak has run: <code>python -m harness soak</code>.</p>"
    servers = "".join(
        f"<details data-study='soak'><summary>{_cell(each['server'])}: "
        + ("passed" if not each["failed"] else "<b>FAILED</b>: " + _cell("; ".join(each["failed"])))
        + f"</summary><p>Load generator {each['driver_share']:.0%} of a core; {_cell(each['load'])}. Its chart: "
        + f"<a href='{_cell(each['chart'])}'>{_cell(each['server'])}.png</a>; its report: "
        + f"<a href='{_cell(each['report'])}'>{_cell(each['server'])}.json</a>.</p>"
        + _table(
            ["criterion", "met", "detail"],
            _rows([(name, "yes" if passed else "NO", detail) for name, passed, detail in each["checks"]]),
        )
        + "</details>"
        for each in soak["servers"]
    )
    return (
        f"<p id='soak'>Does each stack keep serving through backend faults, without leaking? Newest soak: run "
        f"<code>{_cell(soak['run'])}</code>, {_cell(soak['machine'])}, {soak['minutes']:g} min per server, "
        f"{_cell(soak['status'])}; <a href='soak/README.md'>soak/README.md</a>.</p>{servers}"
    )


def _boards(machine: str, titled: Sequence[tuple[str, Table]]) -> str:
    """The leaderboards (harness.render.leaderboard) as the page's first view: the machine, then a table a workload
    under its title, the first open."""
    if not titled:
        return ""
    drawn = [
        f"<details class='board'{' open' if index == 0 else ''}><summary>{_inline(title)}</summary>"
        + _table(table.columns, _inline_rows(table.rows))
        + "</details>"
        for index, (title, table) in enumerate(titled)
    ]
    return (
        f"<section id='boards'><h2>Leaderboards at 50 clients</h2><p>{_inline(machine)}</p>{''.join(drawn)}</section>"
    )


def page(
    found: Findings,
    tables: Mapping[str, Sequence[dict[str, Any]]] | None = None,
    soak: Mapping[str, Any] | None = None,
    boards: Boards = ("", []),
) -> str:
    """The whole page, its scripts and data inside it; `tables`: each study's tables (written_tables), drawn under
    "Every table"; `soak`: the newest soak run (findings.newest_soak); `boards`: the leaderboards, its first view."""
    views = found.comparisons
    asides, linked = newest_asides(found.asides)
    drawn = [*views, *asides]
    all_stacks = sorted({base_stack(stack) for v in drawn for stack in v["stacks"]})
    ids: dict[int, list[str]] = {}
    stacks: dict[int, list[str]] = {}
    for index, row in enumerate(found.rows):
        held = [v for v in views if v["study"] == row.study and v["workload"] in row.workloads]
        held = [v for v in held if v["run"] in {run for run, _ in row.evidence}]
        ids[index] = [v["id"] for v in held]
        # the stacks it sets side by side; a row without comparisons (capacity): its comparisons' and those it names
        said = re.findall(r"[\w.@+-]+", " ".join((row.lead, row.pick, row.sure, row.avoid)))
        named = {base_stack(word) for word in said} & set(all_stacks)
        compared = {base_stack(stack) for v in held for stack in v["stacks"]}
        stacks[index] = sorted({base_stack(stack) for stack in row.stacks} if row.stacks else compared | named)
    specs = [forest(view) for view in drawn]
    studies = sorted({v["study"] for v in drawn} | {row.study for row in found.rows})
    # every scenario measured: the comparisons' and those of rows without comparisons (capacity's)
    scenarios = sorted({v["scenario"] for v in drawn} | {w.split("/")[0] for row in found.rows for w in row.workloads})
    classes = {run["run"]: run["class"] for run in found.runs}
    machines = sorted({v["class"] for v in drawn} | set(classes.values()))
    decision = _table(
        ("question", *DECISION_COLUMNS), "".join(_row(i, r, ids, stacks, classes) for i, r in enumerate(found.rows))
    )
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{PAGE_TITLE}</title><style>{STYLE}</style>",
        f"<script>{vega_scripts()}</script></head><body>",
        f"<h1>{PAGE_TITLE}</h1>",
        "<p>Rendered by <code>python -m harness report</code> from the raw files under <code>results/runs/</code>. "
        "A ratio is an alternative's OK calls/s over the reference's, paired within a block, with its 95% interval "
        "over blocks. Every term is defined under <a href='#words'>Words</a>. Compare only within one run and "
        "machine.</p>",
        _boards(*boards),
        "<div class='filters'>",
        _select("study", studies),
        _select("stack", all_stacks),
        _select("workload", scenarios),
        _select("machine", machines),
        "<a id='clear' href='#'>show everything</a></div>",
        "<h2>Decide</h2>",
        decision,
        _exports(found),
        _chooser(found.choices),
        _glossary(),
        "<h2>The comparisons</h2>",
        *[_card(view, index) for index, view in enumerate(views)],
        "<h2>Every table</h2>",
        "<p>Each study's tables from its newest run: the rows its markdown pages show, each saved beside them as "
        "CSV (and all of a page's as JSON).</p>",
        *[_study_tables(study, found_tables) for study, found_tables in (tables or {}).items() if found_tables],
        "<h2>Soak: serving through faults</h2>",
        _soak(soak),
        "<h2>Runs aside</h2>",
        "<p>Runs made for one question (<code>run-all --aside</code>): a narrow comparison, or a fix measured before "
        "and after. They decide no row and no study's answer.</p>"
        if found.asides
        else "<p>None.</p>",
        *[_card(view, index) for index, view in enumerate(asides, start=len(views))],
        "<ul>",
        *[
            f"<li data-study='{study}'>{study}: run <code>{run}</code>, its page "
            f"<a href='{study}/aside/{run}/README.md'>{study}/aside/{run}/README.md</a></li>"
            for study, run in linked
        ],
        "</ul>",
        "<h2>History: measured only in a full matrix cell by cell</h2>",
        "<p>Runs of a study's whole matrix measured cell by cell before blocks (no interval, no A/A control): kept "
        "as history, deciding nothing.</p>",
        "<ul>",
        *[
            f"<li data-study='{each['study']}'>{each['study']}: run <code>{each['run']}</code> "
            f"({_cell(each['machine'])}) also measured {_cell(', '.join(each['only']))}: its page, "
            f"<a href='{each['study']}/README.md'>{each['study']}/README.md</a>, has the tables.</li>"
            for each in found.matrices
        ],
        "</ul>",
        "<h2>Two runs side by side</h2>",
        *[_pair(pair) for pair in found.pairs],
        "<h2>Provenance</h2>",
        *[_provenance(run, found.runs[i + 1] if i + 1 < len(found.runs) else None) for i, run in enumerate(found.runs)],
        f"<script type='application/json' id='specs'>{_json(specs)}</script>",
        f"<script>{SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _json(value: Any) -> str:
    """JSON safe inside a script element."""
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")
