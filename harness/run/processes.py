"""Child processes as context managers: start, wait for a real readiness check, always stop."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

STOP_TIMEOUT = 10.0


class ProcessError(RuntimeError):
    """A child process failed to start or died; the message carries the tail of its log."""


# LOW-HIGH: the ports free_port hands out, in place of the kernel's choice. Two test workers at once each take a
# range of their own (tests/conftest.py), below the kernel's ephemeral range, so that no port one hands out is
# handed to the other (or taken by a connection's local end) before its server binds it.
PORTS = "BENCH_PORTS"
_handed: set[int] = set()  # this process's ports handed out, not handed again


def port_range(told: str) -> range:
    """BENCH_PORTS's range; a value not of the form LOW-HIGH (1024 <= LOW < HIGH <= 65535) is refused by name."""
    low, _, high = told.partition("-")
    if not (low.isdigit() and high.isdigit() and 1024 <= int(low) < int(high) <= 65535):
        raise ValueError(f"{PORTS} must be LOW-HIGH with 1024 <= LOW < HIGH <= 65535: got {told!r}")
    return range(int(low), int(high) + 1)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now: the kernel's choice, or one from BENCH_PORTS's range."""
    told = os.environ.get(PORTS)
    if not told:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            return int(sock.getsockname()[1])
    ports = port_range(told)
    for port in random.sample(ports, min(len(ports), 256)):
        if port in _handed:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        _handed.add(port)
        return port
    raise ProcessError(f"no free port found in {PORTS}={told}")


Ready = Callable[[int], bool]  # a readiness check, given the child's pid


def tcp_ready(host: str, port: int) -> Ready:
    """A readiness check that passes once host:port accepts a TCP connection."""

    def check(pid: int) -> bool:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            return False

    return check


@dataclass
class Child:
    """A running child process and the file its output goes to."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, lines: int = 20) -> str:
        """The last lines the process wrote."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def signal(self, signum: int) -> None:
        """Send a signal to the child's whole process group."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signum)

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM, wait, then SIGKILL; returns the exit status."""
        if self.process.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.process.wait()
        return self.process.returncode


def wait_ready(child: Child, ready: Ready, timeout: float) -> None:
    """Poll `ready` until it passes; fail early if the child exits."""
    deadline = time.monotonic() + timeout
    while not ready(child.pid):
        if child.process.poll() is not None:
            raise ProcessError(
                f"{child.name} exited with status {child.process.returncode} before it was ready:\n{child.log_tail()}"
            )
        if time.monotonic() > deadline:
            raise ProcessError(f"{child.name} was not ready after {timeout:.0f} s:\n{child.log_tail()}")
        time.sleep(0.05)


@contextmanager
def managed_process(
    name: str,
    argv: Sequence[str],
    *,
    ready: Ready,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    log_dir: Path | None = None,
    timeout: float = 60.0,
) -> Iterator[Child]:
    """Start argv in its own process group, yield it once `ready(pid)` passes, stop it on exit.

    Output goes to a log file in log_dir (kept), or to a temporary file removed on exit.

    The stop runs in a `finally`, so it also happens on an exception or Ctrl-C.
    """
    own_log = log_dir is None
    log_file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed below, kept for the log tail
        prefix=f"{name}-", suffix=".log", dir=log_dir, delete=False
    )
    try:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except BaseException:
        log_file.close()
        Path(log_file.name).unlink()
        raise
    log_file.close()
    child = Child(name, process, Path(log_file.name))
    try:
        wait_ready(child, ready, timeout)
        yield child
    finally:
        child.stop()
        if own_log:
            child.log_path.unlink(missing_ok=True)


@contextmanager
def off_cpus(server_cpus: Sequence[int]) -> Iterator[None]:
    """This process, and every child it starts meanwhile (driver, backends), kept off the server's CPUs
    while there are others; its own affinity back afterwards."""
    own = os.sched_getaffinity(0)
    others = own - set(server_cpus)
    if server_cpus and others:
        os.sched_setaffinity(0, others)
    try:
        yield
    finally:
        os.sched_setaffinity(0, own)
