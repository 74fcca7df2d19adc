"""A held loadgen: one `loadgen serve` process for a block of warm servers, which runs each slice on connections
it dialled once and keeps, instead of a driver process (and its dial and HTTP/2 handshake) for every slice.

It takes the very command a slice would run (`loadgen call ...`, `fetch` or `info`) and answers with the same
report, so a slice is read and stored as any other; its CPU is the served process's own, read before and after.
"""

from __future__ import annotations

import json
import select
import subprocess
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import psutil

from harness.plan.matrix import Cell
from harness.results.load import DriverError, DriverRun
from harness.run.drivers.ghz import parse_report, read_report
from harness.run.drivers.loadgen import loadgen_argv

SERVED_MODES = ("call", "fetch", "info")
STOP_SECONDS = 5.0


def holdable(cells: Iterable[Cell], driver: str) -> bool:
    """Whether a held loadgen can run a comparison's slices: its driver is ghz or loadgen, and loadgen has a served
    mode for every cell (not a watch, nor a call it does not make)."""
    if driver not in ("ghz", "loadgen"):
        return False
    for cell in cells:
        try:
            argv = loadgen_argv("loadgen", cell, "127.0.0.1:1", cell.concurrency)
        except ValueError:
            return False
        if argv[1] not in SERVED_MODES:
            return False
    return True


class HeldLoadgen:
    """`loadgen serve`, started on entering and stopped on leaving (its input closed, then killed if need be)."""

    def __init__(self, tool: Path) -> None:
        self.tool = tool
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> HeldLoadgen:
        self.process = subprocess.Popen(
            [str(self.tool), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        try:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(STOP_SECONDS)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        finally:
            assert process.stdout is not None
            process.stdout.close()

    def cpu_seconds(self) -> float:
        assert self.process is not None
        times = psutil.Process(self.process.pid).cpu_times()
        return times.user + times.system

    def run(self, argv: list[str], timeout: float) -> DriverRun:
        """One slice: argv as loadgen would be run for it (its tool first), its report and the CPU it took."""
        process = self.process
        if process is None or process.stdin is None or process.stdout is None:
            raise DriverError("the held loadgen is not running")
        if len(argv) < 2 or argv[1] not in SERVED_MODES:
            raise DriverError(f"a held loadgen runs {', '.join(SERVED_MODES)}, not {argv[1:2]}")
        before = self.cpu_seconds()
        try:
            process.stdin.write(json.dumps(argv[1:]) + "\n")
            process.stdin.flush()
        except OSError as error:
            raise DriverError(f"the held loadgen stopped taking runs: {error}") from error
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        line = process.stdout.readline() if ready else ""
        if not line:
            process.kill()  # a slice it is still running would answer the next one's request
            status = process.wait()
            raise DriverError(
                f"the held loadgen did not answer within {timeout:.0f} s"
                if not ready
                else f"the held loadgen exited with status {status}"
            )
        cpu = self.cpu_seconds() - before
        answer = parse_report("loadgen", line)
        if set(answer) == {"error"}:
            raise DriverError(f"loadgen: {answer['error']}")
        return read_report("loadgen", answer, cpu)
