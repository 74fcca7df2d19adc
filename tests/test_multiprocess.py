"""`-p 2` servers on every stack: two processes share the port, and SIGTERM stops them all, every time.

(On pyvoy the processes serving the port are the workers' Envoys.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import grpc
import psutil
import pytest

from harness.plan.servers import SERVER_VARIANTS, ServerVariant, server_variant
from harness.run.backends import Backends
from harness.run.resources import ServerCounters
from harness.run.serving import running_server, serving_processes
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from servers.diagnostics import STATS_DIR_VARIABLE
from tests.conftest import CONNECTIONS, answering

GRACE = 5.0  # the servers' default --grace
STOPS = 20
# How long a stop may take before it is a kill: the deadlock this test exists for never ends, so a deadline far past
# the grace period (which a server under full CPU load may overrun) tells it apart without a bound on the time.
STOP_DEADLINE = 6 * GRACE


# Every registered multi-process variant: one per server module.
TWO_PROCESSES = (
    *(variant for variant in SERVER_VARIANTS if variant.min_cpus == 2),
    *(  # the Connect stacks: two launchers, each with its Envoy (pyvoy), or two hypercorn processes
        replace(variant, name=f"{variant.name}-p2", args=(*variant.args, "-p", "2"))
        for variant in SERVER_VARIANTS
        if variant.module == "servers.connect"
    ),
)


@pytest.mark.parametrize("variant", TWO_PROCESSES, ids=lambda variant: variant.name)
def test_calls_reach_every_process_and_sigterm_stops_them_all(
    backends: Backends, variant: ServerVariant, tmp_path: Path
) -> None:
    env = {**backends.env(), STATS_DIR_VARIABLE: str(tmp_path)}
    with running_server(variant, env) as (target, child):
        workers = serving_processes(child.pid)
        assert len(workers) == 2
        port = int(target.rpartition(":")[2])
        # A local subchannel pool gives each channel its own TCP connection.
        channels = [
            grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(CONNECTIONS)
        ]
        try:
            with ServerCounters(tmp_path, child.pid) as counters:
                for channel in channels:
                    reply = bench_pb2_grpc.GreeterStub(channel).SayHello(bench_pb2.HelloRequest(name="p"), timeout=10)
                    assert reply.message == "Hello p"
            assert answering(workers, port) == {worker.pid for worker in workers}
        finally:
            for channel in channels:
                channel.close()
        # Each process counts the calls it took: together every call, each process some.
        assert sum(counters.process_calls) == CONNECTIONS and len(counters.process_calls) == 2, counters.process_calls
        assert min(counters.process_calls) > 0 and counters.delta and counters.delta["calls"] == CONNECTIONS
        assert child.stop() == 0
    for worker in workers:
        assert not worker.is_running()


@contextmanager
def every_cpu_busy() -> Iterator[None]:
    """One busy-looping process per CPU, stopped on exit."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(len(os.sched_getaffinity(0)))
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


@pytest.mark.timeout(900)
def test_stop_under_cpu_load_is_clean_every_time(backends: Backends) -> None:
    """The stop that once ended in SIGKILL: a handler blocked on the lock its own thread held (see StopSignal)."""
    stops = []
    with every_cpu_busy():
        for _ in range(STOPS):
            with running_server(server_variant("sync-w10-p2"), backends.env()) as (target, child):
                workers = psutil.Process(child.pid).children()
                with grpc.insecure_channel(target) as channel:
                    stub = bench_pb2_grpc.GreeterStub(channel)
                    assert stub.SayHello(bench_pb2.HelloRequest(name="x"), timeout=30).message == "Hello x"
                begun = time.monotonic()
                status = child.stop(timeout=STOP_DEADLINE)  # killed past it: a status of -9
                stops.append((status, round(time.monotonic() - begun, 2)))
                assert not any(worker.is_running() for worker in workers)
    assert all(status == 0 for status, _ in stops), stops  # every stop its own, none a kill
