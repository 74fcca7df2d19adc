"""The harness's command line. Each command body is a plain function a test can call."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from harness import across_runs, commands, validating
from harness.arguments import QUICK, QUICK_SERVERS, parser
from harness.plan.interpreter import NotFound
from harness.plan.matrix import Scenario, scenario
from harness.plan.options import RunOptions
from harness.plan.servers import external_server, server_variant
from harness.plan.shards import parse_shard
from harness.plan.wires import PLAINTEXT
from harness.run.processes import ProcessError
from harness.run.profiling import profile, profiled_scenario
from harness.run.runner import default_server_cpus
from harness.run.soak import SOAK_SERVERS, SoakError
from harness.run.tools import MissingPrerequisite
from harness.studies import DEFAULT_STUDIES, plan, study


def named_scenario(name: str, studies: Sequence[str]) -> Scenario:
    """A scenario of scenarios/, or one a chosen study makes for itself (the wire study's sizes)."""
    own = {each.name: each for study_name in studies for each in plan(study_name).own_scenarios}
    return own[name] if name in own else scenario(name)


def run_options(args: argparse.Namespace) -> RunOptions:
    """RunOptions from run-all's arguments; --quick fills what was not given."""
    quick = QUICK if args.quick else {}
    chosen = {
        "levels": args.concurrency,
        "repeats": args.repeats,
        "requests": args.requests,
        # A target the harness did not start cannot be started afresh for every round: it is measured cell by cell.
        "full": args.full or bool(args.target) or None,
        "by_cell": bool(args.target) or None,
    }
    settings = {**quick, **{key: value for key, value in chosen.items() if value is not None}}
    if args.target and args.servers:
        raise ValueError("a --target is measured alone: give no --servers")
    chosen_servers = args.servers or (QUICK_SERVERS if args.quick and not args.target else None)
    servers = tuple(server_variant(name) for name in chosen_servers) if chosen_servers else None
    if args.target:
        servers = (external_server(args.target_name, args.target),)
    cpus = args.server_cpus if args.server_cpus is not None else () if args.target else default_server_cpus()
    # A smoke test (--quick) and a server the harness did not start (--target) are the stacks study's unless --study
    # says otherwise.
    studies = tuple(study(name).name for name in args.study or (("stacks",) if args.quick or args.target else ()))
    return RunOptions(
        out_dir=args.out.resolve(),
        studies=studies,
        servers=servers,
        scenarios=tuple(named_scenario(name, studies or DEFAULT_STUDIES) for name in args.scenarios)
        if args.scenarios
        else None,
        connections=tuple(args.connections) if args.connections else None,
        server_cpus=cpus,
        objects=args.objects,
        latency_bucket_objects=args.latency_bucket_objects,
        s3_latency_ms=args.s3_latency,
        mongo_latency_ms=args.mongo_latency,
        jitter_ms=args.jitter,
        blocks=args.blocks,
        cycles=args.cycles,
        design=args.design,
        slicer=args.slicer,
        aside=args.aside,
        fresh=args.fresh,
        floors=args.floors,
        shard=parse_shard(args.shard, args.plan or "") if args.shard else None,
        seed=args.seed,
        budget_minutes=args.budget_minutes or None,
        wire=args.wire or PLAINTEXT,
        pythons=tuple(args.pythons or ()),
        packages=tuple(args.packages or ()),
        **settings,
    )


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the harness is, so that it unwinds as from Ctrl-C and stops what it started."""


def stop_on_signals() -> None:
    """Make Ctrl-C (SIGINT) and SIGTERM (`timeout`, a supervisor, CI ending a job) stop the harness, which then
    stops what it started.

    SIGINT gets Python's KeyboardInterrupt even where the harness was started with SIGINT ignored: a
    non-interactive shell ignores it in its background jobs, and Python leaves an ignored SIGINT ignored. Python's
    default for SIGTERM ends the process at once, and the servers and backends it started, each in a process group
    of its own, ran on. For `python -m harness` only: a test calling `main` keeps its own handlers.
    """

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, terminate)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; bad input and missing prerequisites are one clear line, not a stack trace."""
    root = parser()
    args = root.parse_args(argv)
    try:
        if args.command == "run-all":
            try:
                options = run_options(args)
            except (KeyError, ValueError) as error:
                root.error(str(error).strip("'\""))
            if args.cluster or args.pairs:
                if args.shard:
                    root.error("--shard is one shard of a plan; --cluster and --pairs run every shard")
                count = args.shards or args.pairs or 2
                if count < 1 or (args.pairs is not None and args.pairs < 1):
                    root.error(f"--shards and --pairs must be at least 1, got {count} and {args.pairs}")
                passed = list(argv if argv is not None else sys.argv[1:])[1:]  # run-all's own arguments
                return commands.fleet_command(passed, count, args.out.resolve(), args.cluster, args.pairs or 0)
            return commands.run_all_command(options)
        if args.command == "report":
            return commands.report(args.out.resolve(), args.run, args.machine)
        if args.command == "verdicts":
            return commands.verdicts_command(args.out.resolve(), args.run, args.json)
        if args.command == "validate":
            if args.across_runs:
                return across_runs.across_runs_command(args.out.resolve())
            if args.draws < 1:
                root.error(f"--draws must be at least 1, got {args.draws}")
            return validating.validate_command(args.out.resolve(), args.draws, args.seed)
        if args.command == "compare":
            return commands.compare_command(args.out.resolve(), args.run_a, args.run_b)
        if args.command == "studies":
            return commands.studies(args.out.resolve())
        if args.command == "tools":
            return commands.tools()
        if args.command == "servers":
            return commands.servers()
        if args.command == "pythons":
            return commands.pythons_command(args.pythons_command, args.names, getattr(args, "venv", False))
        if args.command == "scenarios":
            return commands.scenarios()
        if args.command == "soak":
            if args.minutes <= 0:
                root.error(f"--minutes must be positive, got {args.minutes:g}")
            try:
                variants = [server_variant(name) for name in args.servers or SOAK_SERVERS]
            except KeyError as error:
                root.error(str(error).strip("'\""))
            cpus = args.server_cpus if args.server_cpus is not None else default_server_cpus()
            return commands.soak_command(variants, args.minutes, args.out.resolve(), cpus)
        if args.command == "profile":
            try:
                chosen = (server_variant(args.server), profiled_scenario(args.scenario))
            except KeyError as error:
                root.error(str(error).strip("'\""))
            written = profile(*chosen, args.concurrency, args.seconds, args.out.resolve(), args.native)
            print(written.read_text(), end="")
            return 0
        if args.command == "noise":
            if args.minutes <= 0:
                root.error(f"--minutes must be positive, got {args.minutes:g}")
            cpus = args.server_cpus if args.server_cpus is not None else default_server_cpus()
            if args.slice_seconds <= 0:
                root.error(f"--slice-seconds must be positive, got {args.slice_seconds:g}")
            return commands.noise_command(args.minutes, args.design, cpus, args.seed, args.slice_seconds, args.slicer)
        if args.command == "seed":
            return commands.seed(args.bucket, args.objects)
        return commands.backends(args.bucket, args.objects)
    except (MissingPrerequisite, ProcessError, FileNotFoundError, SoakError, NotFound) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        print("interrupted: every process the harness started is stopped; finished cells are on disk", file=sys.stderr)
        return 128 + (signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT)
