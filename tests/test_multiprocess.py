"""`python -m servers.sync -w 10 -p 2`: two processes share the port, and SIGTERM stops them all."""

from __future__ import annotations

import grpc
import psutil

from harness.backends import Backends
from harness.matrix import server_variant
from harness.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc

CONNECTIONS = 16  # 2 * 0.5**16: the chance the kernel hands every connection to one process


def test_calls_reach_every_process_and_sigterm_stops_them_all(backends: Backends) -> None:
    with running_server(server_variant("sync-w10-p2"), backends.env()) as (target, child):
        workers = psutil.Process(child.pid).children()
        assert len(workers) == 2
        port = int(target.rpartition(":")[2])
        # A local subchannel pool gives each channel its own TCP connection.
        channels = [
            grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(CONNECTIONS)
        ]
        try:
            for channel in channels:
                reply = bench_pb2_grpc.GreeterStub(channel).SayHello(bench_pb2.HelloRequest(name="p"), timeout=10)
                assert reply.message == "Hello p"
            answering = {
                worker.pid
                for worker in workers
                for connection in worker.net_connections(kind="tcp")
                if connection.laddr.port == port and connection.status == psutil.CONN_ESTABLISHED
            }
            assert answering == {worker.pid for worker in workers}
        finally:
            for channel in channels:
                channel.close()
        assert child.stop() == 0
    for worker in workers:
        assert not worker.is_running()
