"""The harness's command line. Each command body is a plain function a test can call."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
import threading
from collections.abc import Sequence

from harness.backends import BENCH_BUCKET, BENCH_OBJECTS, seed_bucket, start_backends
from harness.matrix import SERVER_VARIANTS
from harness.tools import MissingPrerequisite, ensure_all
from scenarios.config import BackendConfig


def tools() -> int:
    """Install every pinned tool into the cache and say where."""
    for name, path in ensure_all().items():
        print(f"{name:20} {path}")
    return 0


def seed(bucket: str, objects: int) -> int:
    """Seed the bucket named in the environment's S3 (AWS_ENDPOINT_URL, or real AWS)."""
    written = seed_bucket(BackendConfig.from_env(), bucket, objects)
    print(f"bucket {bucket}: {objects} objects ({written} written now)")
    return 0


def backends(bucket: str, objects: int) -> int:
    """Start the embedded backends, seed the bucket, print their environment, wait for Ctrl-C."""
    with start_backends(os.environ) as started:
        seed_bucket(started.config, bucket, objects)
        print("# backends are up; in another shell:")
        for name, value in started.env().items():
            print(f"export {name}={shlex.quote(value)}")
        print("# Ctrl-C stops them", flush=True)
        stopped = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stopped.set())
        with contextlib.suppress(KeyboardInterrupt):
            stopped.wait()
    return 0


def servers() -> int:
    """List the registered server variants."""
    for variant in SERVER_VARIANTS:
        slots = "unbounded" if variant.slots is None else str(variant.slots)
        print(f"{variant.name:18} {variant.command:36} slots={slots:10} {variant.description}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command-line grammar."""
    root = argparse.ArgumentParser(
        prog="python -m harness", description="Python gRPC server benchmark harness"
    )
    commands = root.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "tools", help="install the pinned tools (ghz, versitygw, toxiproxy, mongo-java-server)"
    )
    commands.add_parser("servers", help="list the server variants")
    for name, text in (
        ("seed", "seed the bucket in the S3 named by AWS_ENDPOINT_URL"),
        ("backends", "start the embedded S3 and MongoDB, seed, and wait for Ctrl-C"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("--bucket", default=BENCH_BUCKET, help="bucket name (default: %(default)s)")
        command.add_argument(
            "--objects", type=int, default=BENCH_OBJECTS, help="object count (default: %(default)s)"
        )
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a missing prerequisite is one clear line, not a stack trace."""
    args = parser().parse_args(argv)
    try:
        if args.command == "tools":
            return tools()
        if args.command == "servers":
            return servers()
        if args.command == "seed":
            return seed(args.bucket, args.objects)
        return backends(args.bucket, args.objects)
    except MissingPrerequisite as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
