"""A server variant as a running child process, ready once gRPC health reports SERVING (a REST server: once
GET /healthz answers 200)."""

from __future__ import annotations

import http.client
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import grpc
import psutil
from grpc_health.v1 import health_pb2, health_pb2_grpc

from harness.paths import ROOT
from harness.plan.servers import ServerVariant
from harness.plan.virtualenvs import server_path
from harness.run.processes import Child, Ready, free_port, managed_process
from harness.run.tls import PLAIN, Wire
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from servers.common import HEALTH_PATH

HOST = "127.0.0.1"


def serving_processes(pid: int) -> list[psutil.Process]:
    """The processes that serve a server's port: the leaves of its process tree (its workers if it has any, or
    the Envoy a pyvoy launcher started, else itself)."""
    root = psutil.Process(pid)
    return [p for p in root.children(recursive=True) if not p.children()] or [root]


def every_process_listening(pid: int, port: int) -> bool:
    """True once the server's serving processes all listen on port."""
    try:
        processes = serving_processes(pid)
        return all(
            any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in p.net_connections(kind="tcp"))
            for p in processes
        )
    except psutil.Error:
        return False


def health_serving(target: str, wire: Wire = PLAIN) -> Ready:
    """A readiness check that passes once the server's overall health is SERVING."""

    def check(pid: int) -> bool:
        with wire.channel(target) as channel:
            try:
                reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=1)
            except grpc.RpcError:
                return False
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    return check


def http_healthy(target: str, wire: Wire = PLAIN) -> Ready:
    """A readiness check that passes once GET /healthz answers 200."""

    def check(pid: int) -> bool:
        context = wire.ssl_context()
        connection = (
            http.client.HTTPConnection(target, timeout=1)
            if context is None
            else http.client.HTTPSConnection(target, timeout=1, context=context)
        )
        try:
            connection.request("GET", HEALTH_PATH)
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    return check


def hello_answered(target: str, protocol: str, wire: Wire = PLAIN) -> Ready:
    """A readiness check for a server without health (a stack's floor): it passes once a hello call is answered."""

    def grpc_check(pid: int) -> bool:
        with wire.channel(target) as channel:
            try:
                bench_pb2_grpc.GreeterStub(channel).SayHello(bench_pb2.HelloRequest(name="ready"), timeout=1)
            except grpc.RpcError:
                return False
            return True

    def http_check(pid: int) -> bool:
        connection = http.client.HTTPConnection(target, timeout=1)
        try:
            connection.request("GET", "/v1/hello?name=ready")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    return http_check if protocol == "http" else grpc_check


@contextmanager
def running_server(
    variant: ServerVariant,
    backend_env: Mapping[str, str],
    *,
    port: int | None = None,
    cpus: Sequence[int] = (),
    log_dir: Path | None = None,
    wire: Wire = PLAIN,
) -> Iterator[tuple[str, Child]]:
    """Start variant on a free port (pinned to cpus when given), speaking the wire; yields its target and
    process."""
    port = port or free_port()
    target = f"{HOST}:{port}"
    files = wire.server_files()
    argv = variant.argv(port, HOST) + (files.argv() if files else [])
    if cpus:
        argv = ["taskset", "-c", ",".join(map(str, cpus)), *argv]
    # A server under another interpreter finds the repository's own packages beside its virtualenv's.
    env = {**os.environ, **backend_env, **(server_path(variant.python) if variant.python else {})}
    if variant.floor_of:
        healthy = hello_answered(target, variant.protocol, wire)
    else:
        healthy = http_healthy(target, wire) if variant.protocol == "http" else health_serving(target, wire)

    def ready(pid: int) -> bool:
        return healthy(pid) and every_process_listening(pid, port)

    with managed_process(variant.name, argv, env=env, cwd=ROOT, ready=ready, log_dir=log_dir) as child:
        yield target, child
