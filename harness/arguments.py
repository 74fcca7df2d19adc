"""The harness's command line as argparse reads it: every command, its flags and their defaults."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.method.verdicts import BLOCKS, DESIGNS, HELD, SLICERS, Method
from harness.paths import ROOT
from harness.plan.matrix import BENCH_BUCKET, BENCH_OBJECTS, CONCURRENCY_LEVELS, SMALL_OBJECTS
from harness.plan.pythons import BUILDABLE, DEFAULT_PYTHONS
from harness.plan.virtualenvs import VERSIONED
from harness.plan.wires import MTLS, TLS
from harness.run.soak import SOAK_SERVERS
from harness.studies import DEFAULT_STUDIES

DEFAULT_OUT = ROOT / "results"
# make bench's default: within 30 minutes on the 2-core machine, the backends' start and seeding and the pilot
# included, the last block's overshoot allowed for. Every comparison gets the two blocks an interval needs whatever
# the budget (harness.method.race.run_race): where they take longer, the run does.
DEFAULT_BUDGET_MINUTES = 28.0
SLICER_HELP = (
    "who runs a block's slices: one loadgen for the block that holds its connections to every server from slice "
    "to slice (held, the default, where loadgen can drive every cell), or a driver process each (process)"
)
QUICK = {"levels": (2,), "repeats": 1, "requests": 20, "warmup_requests": 10, "full": True, "by_cell": True}
# One variant per server module and option, including one that needs more CPUs (so skipping is exercised too).
QUICK_SERVERS = ("sync-w10", "sync-w10-p2", "grpclib-uvloop", "aio-asyncio", "grpclib-asyncio-pymongo")


def milliseconds(text: str) -> int:
    """A duration such as "100ms", "0.1s" or "100" (milliseconds) as whole milliseconds."""
    value = text.strip().lower()
    try:
        if value.endswith("ms"):
            result = float(value[:-2])
        elif value.endswith("s"):
            result = float(value[:-1]) * 1000
        else:
            result = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a duration such as 100ms or 0.1s, got {text!r}") from None
    if result < 0:
        raise argparse.ArgumentTypeError(f"a latency cannot be negative: {text!r}")
    return round(result)


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(value) for value in _names(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _cpu_list(text: str) -> tuple[int, ...]:
    """CPUs as taskset lists them: "1", "0,1", "8-15" or "0,4-7"; "" for none."""
    cpus: list[int] = []
    for part in _names(text):
        first, dash, last = part.partition("-")
        try:
            cpus += range(int(first), int(last) + 1) if dash else [int(first)]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected CPUs such as 1, 0,1 or 8-15, got {text!r}") from None
    return tuple(sorted(set(cpus)))


def parser() -> argparse.ArgumentParser:
    """The command-line grammar."""
    root = argparse.ArgumentParser(prog="python -m harness", description="Python gRPC server benchmark harness")
    commands = root.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run-all", help="run the studies and write results")
    run.add_argument(
        "--study",
        type=_names,
        help=f"comma-separated studies (default: {', '.join(DEFAULT_STUDIES)}; see `studies`)",
    )
    run.add_argument("--servers", type=_names, help="comma-separated variants (default: all; see `servers`)")
    run.add_argument("--scenarios", type=_names, help="comma-separated scenarios (default: all; see `scenarios`)")
    run.add_argument("--concurrency", type=_ints, help=f"comma-separated levels (default: {CONCURRENCY_LEVELS})")
    run.add_argument(
        "--connections",
        type=_names,
        help="comma-separated ways the driver's workers hold connections: shared, per-worker, pool-N, per-call "
        "(default: each study's own)",
    )
    run.add_argument("--repeats", type=int, help="measured runs per cell (default: each study's own)")
    run.add_argument("--requests", type=int, help="requests per measured run (default: sized from the warm-up)")
    run.add_argument(
        "--quick", action="store_true", help="a tiny matrix for smoke tests: 5 variants, c=2, 1 run of 20 requests"
    )
    run.add_argument(
        "--full",
        action="store_true",
        help="every cell of each study's matrix in place of the comparisons that decide its questions: in blocks "
        "where the study has comparisons of its whole matrix (stacks), else cell by cell; the estimate is printed "
        "before it starts",
    )
    run.add_argument(
        "--blocks",
        "--rounds",
        dest="blocks",
        type=int,
        help="blocks of every comparison, fixed (default: until each is known, 5 to 40; --rounds: its old name)",
    )
    run.add_argument(
        "--cycles", type=int, help="with --blocks, mirrored cycles of slices a block (default: 2; the pilot fits them)"
    )
    run.add_argument(
        "--design",
        choices=DESIGNS,
        default=BLOCKS,
        help="blocks of warm servers alternated in slices (default), or fresh: a server start for every window",
    )
    run.add_argument("--slicer", choices=SLICERS, default=HELD, help=SLICER_HELP)
    run.add_argument(
        "--aside",
        action="store_true",
        help="a run for one question (a narrow comparison, a fix's before and after): shown on its studies' pages "
        "under aside/, never the run a study's answer and the decision table come from",
    )
    run.add_argument("--seed", type=int, help="the seed of the blocks' order (default: drawn, and recorded)")
    run.add_argument(
        "--shard",
        help="measure shard I of N of the plan (I/N, such as 1/2): its part of the comparisons, dealt by their cost, "
        "as a run of its own, <plan>-s<I> (harness fleet runs every shard on a Dask cluster and merges them)",
    )
    run.add_argument("--plan", help="the plan's id, shared by its shards (default: the run's start time)")
    run.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the plan's shards as tasks on the Dask scheduler at ADDRESS (tcp://host:8786), one at a time per "
        "worker holding the `bench` resource, each written under results/runs/ as it ends, then merged",
    )
    run.add_argument(
        "--pairs",
        type=int,
        help="on this host, N shards at once, each on its own core pair (a Dask LocalCluster of N workers)",
    )
    run.add_argument("--shards", type=int, help="how many shards the plan is dealt into (default: --pairs, or 2)")
    run.add_argument(
        "--floors",
        action="store_true",
        help="the stacks study also sets each stack against its floor (its own hello example) on hello at its highest "
        "level: `run-all --aside --study stacks --scenarios hello --concurrency 50 --floors`, about 13 minutes",
    )
    run.add_argument(
        "--fresh",
        action="store_true",
        help="race as if no earlier run existed (default: start from what the earlier runs of this machine class and "
        "code tell each row, and spend the budget on the rows they left open)",
    )
    run.add_argument(
        "--budget-minutes",
        type=float,
        default=DEFAULT_BUDGET_MINUTES,
        help="the run's time: every comparison gets two blocks, then the rest goes, block by block, to the open "
        "comparison that narrows most per second; none starts past it (default: %(default)s; 0: none)",
    )
    run.add_argument(
        "--packages",
        type=_names,
        help="the versions study's pins, set against the project's own versions: name==version, comma-separated "
        f"({', '.join(VERSIONED)}; `--study versions --packages grpcio==1.75.0`)",
    )
    run.add_argument(
        "--pythons",
        type=_names,
        help="interpreters the interpreters study runs the servers under: 3.X, 3.Xt or paths, comma-separated "
        f"(default: {','.join(DEFAULT_PYTHONS)}, those found or built; `pythons build` builds 3.14 and 3.14t)",
    )
    secured = run.add_mutually_exclusive_group()
    secured.add_argument(
        "--tls",
        action="store_const",
        const=TLS,
        dest="wire",
        help="every server serves TLS only (a CA made for the run)",
    )
    secured.add_argument(
        "--mtls", action="store_const", const=MTLS, dest="wire", help="mutual TLS: clients present a certificate too"
    )
    run.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: results/)")
    run.add_argument("--objects", type=int, default=BENCH_OBJECTS, help="objects in the bucket (default: %(default)s)")
    run.add_argument(
        "--server-cpus",
        type=_cpu_list,
        help="CPUs for the server under test, e.g. 1 or 8-15 (default: the last core); the rest run ghz",
    )
    run.add_argument(
        "--s3-latency", type=milliseconds, default=0, help="latency added to S3 (toxiproxy), e.g. 100ms; default none"
    )
    run.add_argument("--mongo-latency", type=milliseconds, default=0, help="latency added to MongoDB, e.g. 5ms")
    run.add_argument("--jitter", type=milliseconds, default=0, help="jitter of the added latencies, e.g. 10ms")
    run.add_argument(
        "--target",
        help="HOST:PORT of a server the harness does not start (any language, any host): measured alone, with "
        "its own backends, in every scenario whose RPC it answers",
    )
    run.add_argument("--target-name", default="target", help="the target's name in tables (default: %(default)s)")
    run.add_argument(
        "--latency-bucket-objects",
        type=int,
        default=SMALL_OBJECTS,
        help="objects in the latency scenarios' bucket (default: %(default)s)",
    )

    rep = commands.add_parser("report", help="re-render tables, charts and answers from raw result files")
    rep.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory (default: results/)")
    rep.add_argument("--run", type=Path, help="the newest run directory to use (default: the newest under OUT/runs)")
    rep.add_argument(
        "--machine",
        metavar="CLASS",
        help="answer for this machine class, as `harness validate` names it (default: each study's newest run's)",
    )

    ver = commands.add_parser("verdicts", help="every comparison of a run: ratios, 95%% intervals, verdicts")
    ver.add_argument("run", nargs="?", help="a run id under OUT/runs, or a run directory (default: the newest)")
    ver.add_argument("--json", action="store_true", help="a JSON list, one object per alternative")
    ver.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory (default: results/)")

    val = commands.add_parser(
        "validate",
        help="how often 2-3 blocks' intervals, plain and moderated, hold the rest of the committed many-block runs",
    )
    val.add_argument("--draws", type=int, default=200, help="draws of blocks per run (default: %(default)s)")
    val.add_argument("--seed", type=int, default=0, help="the draws' seed (default: %(default)s)")
    val.add_argument(
        "--across-runs",
        action="store_true",
        help="instead: whether the picks each default run certified alone hold against its machine class's other runs",
    )
    val.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory (default: results/)")

    cmp = commands.add_parser("compare", help="compare two runs cell by cell (OK calls/s, p99, significance)")
    cmp.add_argument("run_a", help="a run id under OUT/runs, or a run directory")
    cmp.add_argument("run_b", help="a run id under OUT/runs, or a run directory")
    cmp.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory (default: results/)")

    stu = commands.add_parser("studies", help="list the studies with their questions and cell counts")
    stu.add_argument("--out", type=Path, default=DEFAULT_OUT, help=argparse.SUPPRESS)

    commands.add_parser("servers", help="list the server variants")
    commands.add_parser("scenarios", help="list the scenarios")
    commands.add_parser("tools", help="install the pinned tools (ghz, versitygw, toxiproxy, mongo-java-server)")
    interpreters = commands.add_parser("pythons", help="find, build and prepare the interpreters servers run under")
    pythons_commands = interpreters.add_subparsers(dest="pythons_command", required=True)
    pythons_list = pythons_commands.add_parser("list", help="where each named interpreter is, and how it was built")
    pythons_list.add_argument("names", nargs="*", default=list(DEFAULT_PYTHONS), help="3.X, 3.Xt or a path")
    pythons_build = pythons_commands.add_parser(
        "build", help=f"build CPython from Debian's source package into .cache/pythons ({', '.join(BUILDABLE)})"
    )
    pythons_build.add_argument("names", nargs="+", choices=BUILDABLE)
    pythons_build.add_argument("--venv", action="store_true", help="also make its virtualenv of server packages")
    noisy = commands.add_parser(
        "noise", help="how precise this machine can be: an A/A pair measured alone, its noise and costs"
    )
    noisy.add_argument("--minutes", type=float, default=2.0, help="how long to measure (default: %(default)s)")
    noisy.add_argument("--design", choices=DESIGNS, default=BLOCKS, help="blocks (default) or fresh (a start a window)")
    noisy.add_argument("--slicer", choices=SLICERS, default=HELD, help=SLICER_HELP)
    noisy.add_argument("--server-cpus", type=_cpu_list, help="CPUs for the servers (default: the last one)")
    noisy.add_argument("--seed", type=int, help="the seed of the slices' order (default: drawn)")
    noisy.add_argument(
        "--slice-seconds", type=float, default=Method().slice_seconds, help="a slice's length (default: %(default)s)"
    )
    profiling = commands.add_parser(
        "profile", help="where a server spends its CPU under a scenario's load (py-spy, CPU by thread, Envoy's stats)"
    )
    profiling.add_argument("server", help="a server variant (see `servers`)")
    profiling.add_argument(
        "--scenario", default="hello", help="a scenario, or a wire size such as reply-1MiB (default: %(default)s)"
    )
    profiling.add_argument("--concurrency", type=int, default=50, help="client workers (default: %(default)s)")
    profiling.add_argument("--seconds", type=float, default=10.0, help="how long to profile (default: %(default)s)")
    profiling.add_argument("--native", action="store_true", help="native frames too (py-spy --native)")
    profiling.add_argument("--out", type=Path, required=True, help="the directory for profile.txt and stacks.txt")
    soaking = commands.add_parser(
        "soak", help="a mixed load for minutes while faults are injected; checks the criteria"
    )
    soaking.add_argument("--minutes", type=float, default=10.0, help="per server (default: %(default)s)")
    soaking.add_argument(
        "--servers", type=_names, help=f"comma-separated variants (default: one per stack, {', '.join(SOAK_SERVERS)})"
    )
    soaking.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: results/)")
    soaking.add_argument("--server-cpus", type=_cpu_list, help="CPUs for the server under test (default: the last one)")
    for name, text in (
        ("seed", "seed the bucket in the S3 named by AWS_ENDPOINT_URL"),
        ("backends", "start the embedded S3 and MongoDB, seed, and wait for Ctrl-C"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("--bucket", default=BENCH_BUCKET, help="bucket name (default: %(default)s)")
        command.add_argument("--objects", type=int, default=BENCH_OBJECTS, help="object count (default: %(default)s)")
    return root
