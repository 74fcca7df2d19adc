"""grpclib's server on asyncio or uvloop: `python -m servers.async -l uvloop`."""

from __future__ import annotations

import asyncio
import errno
import sys
from collections.abc import Sequence
from typing import Any

from grpclib.const import Status
from grpclib.encoding.proto import ProtoCodec
from grpclib.exceptions import GRPCError
from grpclib.health.check import ServiceStatus
from grpclib.health.service import Health
from grpclib.reflection.service import ServerReflection
from grpclib.server import Server, Stream

from protos.bench.v1 import bench_grpc, bench_pb2
from scenarios.aio import AsyncScenarios
from scenarios.errors import ScenarioError
from scenarios.info import InfoStore
from servers.common import (
    INTERNAL_MESSAGE,
    MAX_MESSAGE_BYTES,
    SET_INFO_REPLY,
    RaisingCallLimit,
    ReflectionPool,
    ServerConfig,
    StopSignal,
    archive_reply,
    freeze_startup_heap,
    info_reply,
    log,
    parse_config,
    run_on_loop,
    setup_logging,
    status_of,
    supervise,
)
from servers.ports import PortInUse, refuse_taken


class LimitedProtoCodec(ProtoCodec):
    """protobuf, refusing a message over MAX_MESSAGE_BYTES as grpcio does (grpclib itself has no limit)."""

    def decode(self, data: bytes, message_type: Any) -> Any:
        if len(data) > MAX_MESSAGE_BYTES:
            raise GRPCError(
                Status.RESOURCE_EXHAUSTED,
                f"request of {len(data)} bytes is over the server's maximum of {MAX_MESSAGE_BYTES} bytes",
            )
        return super().decode(data, message_type)


class CallsInFlight(RaisingCallLimit):
    """Counts running calls so shutdown can wait for them; refuses new ones once draining or at the limit.

    grpclib's `Server.close()` cancels running calls, so a graceful stop drains here first.
    """

    def __init__(self, limit: int | None = None) -> None:
        super().__init__(limit)
        self._idle = asyncio.Event()
        self._idle.set()
        self.draining = False

    def admit(self) -> None:
        if self.draining:
            raise GRPCError(Status.UNAVAILABLE, "server is shutting down")
        super().admit()
        self._idle.clear()

    def finished(self) -> None:
        super().finished()
        if self.running == 0:
            self._idle.set()

    def refused(self, message: str) -> Exception:
        return GRPCError(Status.RESOURCE_EXHAUSTED, message)

    def failed(self, error: ScenarioError | None) -> Exception:
        if error is None:
            return GRPCError(Status.INTERNAL, INTERNAL_MESSAGE)
        return GRPCError(Status[status_of(error)], str(error))

    async def drain(self, grace: float) -> None:
        """Refuse new calls and wait up to `grace` seconds for running ones."""
        self.draining = True
        try:
            await asyncio.wait_for(self._idle.wait(), grace)
        except TimeoutError:
            log.warning("%d calls still running after %.1f s; cancelling them", self.running, grace)


class Greeter(bench_grpc.GreeterBase):
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def SayHello(self, stream: Stream[bench_pb2.HelloRequest, bench_pb2.HelloReply]) -> None:
        request = await stream.recv_message()
        assert request is not None
        with self._calls.call("SayHello"):
            await stream.send_message(await self._scenarios.hello(request))

    async def SayHelloStream(self, stream: Stream[bench_pb2.HelloRequest, bench_pb2.HelloReply]) -> None:
        request = await stream.recv_message()
        assert request is not None
        with self._calls.call("SayHelloStream"):
            await stream.send_message(await self._scenarios.hello(request))


class ObjectStore(bench_grpc.ObjectStoreBase):
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def ListObjects(self, stream: Stream[bench_pb2.ListObjectsRequest, bench_pb2.ListObjectsReply]) -> None:
        request = await stream.recv_message()
        assert request is not None
        with self._calls.call("ListObjects"):
            objects = await self._scenarios.list_objects(request.bucket, request.prefix)
            await stream.send_message(bench_pb2.ListObjectsReply(objects=objects))

    async def StreamObjects(self, stream: Stream[bench_pb2.ListObjectsRequest, bench_pb2.ListObjectsReply]) -> None:
        request = await stream.recv_message()
        assert request is not None
        with self._calls.call("StreamObjects"):
            batches = self._scenarios.stream_objects(
                request.bucket, request.prefix, request.batch_size, request.parallelism
            )
            async for batch in batches:
                await stream.send_message(bench_pb2.ListObjectsReply(objects=batch))

    async def ListObjectsPage(
        self, stream: Stream[bench_pb2.ListObjectsPageRequest, bench_pb2.ListObjectsPageReply]
    ) -> None:
        request = await stream.recv_message()
        assert request is not None
        with self._calls.call("ListObjectsPage"):
            objects, token = await self._scenarios.list_objects_page(
                request.bucket, request.prefix, request.page_size, request.page_token
            )
            await stream.send_message(bench_pb2.ListObjectsPageReply(objects=objects, next_page_token=token))

    async def ArchiveObjects(self, stream: Stream[bench_pb2.ListObjectsRequest, bench_pb2.ArchiveReply]) -> None:
        request = await stream.recv_message()
        assert request is not None
        with self._calls.call("ArchiveObjects"):
            counts = await self._scenarios.archive_objects(request.bucket, request.prefix)
            await stream.send_message(archive_reply(counts))


class Sensor(bench_grpc.SensorBase):
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def Watch(self, stream: Stream[bench_pb2.WatchRequest, bench_pb2.WatchResponse]) -> None:
        with self._calls.call("Watch"):
            async for response in self._scenarios.watch(stream):
                await stream.send_message(response)


class Info(bench_grpc.InfoBase):
    def __init__(self, store: InfoStore, calls: CallsInFlight) -> None:
        self._store = store
        self._calls = calls

    async def SetInfo(self, stream: Stream[bench_pb2.InfoRequest, bench_pb2.InfoReply]) -> None:
        request = await stream.recv_message()
        assert request is not None
        with self._calls.call("SetInfo"):
            self._store.set(request.name, request.age, request.height)
            await stream.send_message(SET_INFO_REPLY)

    async def SetInfos(self, stream: Stream[bench_pb2.InfoRequest, bench_pb2.InfoReply]) -> None:
        with self._calls.call("SetInfos"):
            async for request in stream:
                await stream.send_message(info_reply(self._store, request))


async def serve(config: ServerConfig) -> None:
    """Serve until SIGTERM or SIGINT, then let calls in flight finish within the grace period."""
    stop = StopSignal()
    if not config.shared_port:
        refuse_taken(config.host, config.port)  # before the backends' clients are made
    scenarios = await AsyncScenarios.open(
        config.backends, config.pool_size, config.mongo_driver, config.sensor_interval_ms, config.s3_client
    )
    calls = CallsInFlight(config.max_concurrent_rpcs)
    services: list[Any] = [
        Greeter(scenarios, calls),
        ObjectStore(scenarios, calls),
        Sensor(scenarios, calls),
        Info(InfoStore(), calls),
    ]
    serving = ServiceStatus()
    server = Server(
        [
            *ServerReflection.extend(services, pool=ReflectionPool()),
            Health({service: [serving] for service in services}),
        ],
        codec=LimitedProtoCodec(),
    )
    try:
        # SO_REUSEPORT only where the processes of a multi-process server share the port: a single process refuses
        # a port already in use.
        tls = config.tls.ssl_context(["h2"]) if config.tls else None
        try:
            await server.start(config.host, config.port, reuse_port=config.shared_port, ssl=tls)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise PortInUse(config.host, config.port) from error
            raise
        serving.set(True)
        freeze_startup_heap()
        log.info(
            "grpclib server on %s (%s) serving on %s:%d", config.loop, config.mongo_driver, config.host, config.port
        )
        await stop.until_received()
        log.info("stopping: refusing new calls, %.1f s for calls in flight", config.grace)
        serving.set(False)
        await calls.drain(config.grace)
        server.close()
        await server.wait_closed()
    finally:
        await scenarios.close()
        log.info("stopped")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m servers.async`."""
    setup_logging()
    config = parse_config(argv, prog="python -m servers.async", description="grpclib server", stack="loop")
    if config.processes > 1:
        return supervise(config, "servers.async")
    run_on_loop(config, serve)
    return 0


if __name__ == "__main__":
    sys.exit(main())
