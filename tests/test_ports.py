"""A server started on a port already in use refuses to start, on every stack, and the one that held the port goes on
serving (issue 62): a single process binds without SO_REUSEPORT, a `-p N` server checks its port before its workers
share it, and the harness fails a cell whose port something else listens on rather than measuring it."""

from __future__ import annotations

import os
import socket
import subprocess

import psutil
import pytest

from harness.paths import ROOT
from harness.plan.servers import ServerVariant, server_variant
from harness.run import processes
from harness.run.backends import Backends
from harness.run.processes import PORTS, ProcessError, free_port
from harness.run.serving import HOST, health_serving, hello_answered, http_healthy, running_server

# One variant of every way a server binds: our grpcio, grpclib, grpc.aio, Connect (pyvoy and hypercorn) and REST
# (uvicorn and hypercorn) servers, and each stack's floor.
ONE_OF_EACH = (
    "sync-w10",
    "grpclib-uvloop",
    "aio-uvloop",
    "connect-pyvoy",
    "connect-hypercorn",
    "rest-h1",
    "rest-h2",
    "sync-w10-minimal",
    "grpclib-uvloop-minimal",
    "aio-uvloop-minimal",
    "connect-pyvoy-minimal",
    "connect-hypercorn-minimal",
    "rest-h1-minimal",
    "rest-h2-minimal",
)
REFUSED_WITHIN = 30.0  # seconds: a refusal comes before the backends' clients are made, in a second or two


def answers(variant: ServerVariant, target: str, pid: int) -> bool:
    """Whether the server answers a call, as the harness judges it ready."""
    if variant.floor_of:
        return hello_answered(target, variant.protocol)(pid)
    return (http_healthy(target) if variant.protocol == "http" else health_serving(target))(pid)


def listeners(port: int) -> int:
    """How many sockets listen on the port, on any process."""
    return sum(
        1
        for connection in psutil.net_connections(kind="tcp")
        if connection.laddr and connection.laddr.port == port and connection.status == psutil.CONN_LISTEN
    )


@pytest.mark.parametrize("name", ONE_OF_EACH)
def test_a_second_server_on_a_taken_port_refuses_and_the_first_goes_on_serving(backends: Backends, name: str) -> None:
    variant = server_variant(name)
    env = {**os.environ, **backends.env()}
    with running_server(variant, backends.env()) as (target, child):
        port = int(target.rpartition(":")[2])
        before = listeners(port)
        second = subprocess.run(
            variant.argv(port, HOST), env=env, cwd=ROOT, capture_output=True, text=True, timeout=REFUSED_WITHIN
        )
        assert second.returncode != 0
        assert f"{HOST}:{port} is already in use" in second.stderr, second.stderr[-2000:]
        assert answers(variant, target, child.pid)
        assert listeners(port) == before
        if "pyvoy" not in name:  # Envoy may hold a listening socket per worker thread
            assert before == 1


def test_a_multi_process_server_refuses_a_port_something_else_listens_on(backends: Backends) -> None:
    variant = server_variant("sync-w10-p2")
    with socket.socket() as stale:
        stale.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # as a stale grpcio server binds
        stale.bind((HOST, 0))
        stale.listen()
        port = stale.getsockname()[1]
        refused = subprocess.run(
            variant.argv(port, HOST),
            env={**os.environ, **backends.env()},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=REFUSED_WITHIN,
        )
        assert refused.returncode != 0 and f"{HOST}:{port} is already in use" in refused.stderr
        assert listeners(port) == 1


def test_a_stale_listener_on_the_harness_s_port_fails_the_cell_rather_than_splitting_it(backends: Backends) -> None:
    with socket.socket() as stale:
        stale.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        stale.bind((HOST, 0))
        stale.listen()
        port = stale.getsockname()[1]
        with (
            pytest.raises(ProcessError, match=f"{HOST}:{port} is already in use"),
            running_server(server_variant("sync-w10"), backends.env(), port=port),
        ):
            pass


def test_a_port_range_hands_out_ports_of_its_own_never_twice_and_a_bad_one_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PORTS, "19990-19993")  # below the test workers' ranges (conftest)
    monkeypatch.setattr(processes, "_handed", set())
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind((HOST, 19992))  # a port someone listens on is never handed out
        handed = []
        for _ in range(3):
            try:
                handed.append(free_port())
            except ProcessError as none_left:  # another process may hold one of the range too
                assert "no free port found in BENCH_PORTS=19990-19993" in str(none_left)
                break
    assert handed and len(set(handed)) == len(handed) and set(handed) <= {19990, 19991, 19993}
    for bad in ("20000", "3-20000", "30000-20000", "x-y"):
        monkeypatch.setenv(PORTS, bad)
        with pytest.raises(ValueError, match="BENCH_PORTS must be LOW-HIGH"):
            free_port()
