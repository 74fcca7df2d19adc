"""grpcio's asyncio server (grpc.aio) on asyncio or uvloop: `python -m servers.aio -l uvloop`."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from scenarios.aio import AsyncScenarios
from scenarios.errors import ScenarioError
from scenarios.info import InfoStore
from servers.common import (
    AIO_SERVER_OPTIONS,
    INTERNAL_MESSAGE,
    SERVICE_NAMES,
    SET_INFO_REPLY,
    CallLimit,
    ReflectionPool,
    ServerConfig,
    StopSignal,
    add_grpcio_port,
    archive_reply,
    freeze_startup_heap,
    grpcio_options,
    info_reply,
    log,
    log_failure,
    parse_config,
    run_on_loop,
    setup_logging,
    status_of,
    supervise,
)
from servers.ports import refuse_taken


class CallsInFlight(CallLimit):
    """Counts running calls and refuses new ones beyond the limit with RESOURCE_EXHAUSTED."""

    def call(self, context: grpc.aio.ServicerContext, method: str) -> AbortingCall:  # type: ignore[type-arg]
        return AbortingCall(self, context, method)


class AbortingCall:
    """One call: admitted or refused, with its domain errors turned into statuses; nothing else reaches the
    client. grpc.aio ends a call with a status by `await context.abort()`, so this one is entered with `async
    with`; a class for the reason servers.common.TrackedCall is one."""

    __slots__ = ("_calls", "_context", "_method")

    def __init__(self, calls: CallLimit, context: grpc.aio.ServicerContext, method: str) -> None:  # type: ignore[type-arg]
        self._calls = calls
        self._context = context
        self._method = method

    async def __aenter__(self) -> None:
        refused = self._calls.refusal()
        if refused:
            await self._context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        self._calls.started()

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: object) -> None:
        self._calls.finished()
        if not isinstance(error, Exception) or isinstance(error, grpc.aio.AbortError):
            return  # no error, a cancellation, or a status already set: on its way unchanged
        log_failure(self._method, error)
        if isinstance(error, ScenarioError):
            await self._context.abort(grpc.StatusCode[status_of(error)], str(error))
        await self._context.abort(grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)


class Greeter(bench_pb2_grpc.GreeterServicer):
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def SayHello(
        self,
        request: bench_pb2.HelloRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> bench_pb2.HelloReply:
        async with self._calls.call(context, "SayHello"):
            return await self._scenarios.hello(request)

    async def SayHelloStream(
        self,
        request: bench_pb2.HelloRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[bench_pb2.HelloReply]:
        async with self._calls.call(context, "SayHelloStream"):
            yield await self._scenarios.hello(request)


class ObjectStore(bench_pb2_grpc.ObjectStoreServicer):
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def ListObjects(
        self,
        request: bench_pb2.ListObjectsRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> bench_pb2.ListObjectsReply:
        async with self._calls.call(context, "ListObjects"):
            objects = await self._scenarios.list_objects(request.bucket, request.prefix)
            return bench_pb2.ListObjectsReply(objects=objects)

    async def StreamObjects(
        self,
        request: bench_pb2.ListObjectsRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[bench_pb2.ListObjectsReply]:
        async with self._calls.call(context, "StreamObjects"):
            batches = self._scenarios.stream_objects(
                request.bucket, request.prefix, request.batch_size, request.parallelism
            )
            async for batch in batches:
                yield bench_pb2.ListObjectsReply(objects=batch)

    async def ListObjectsPage(
        self,
        request: bench_pb2.ListObjectsPageRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> bench_pb2.ListObjectsPageReply:
        async with self._calls.call(context, "ListObjectsPage"):
            objects, token = await self._scenarios.list_objects_page(
                request.bucket, request.prefix, request.page_size, request.page_token
            )
            return bench_pb2.ListObjectsPageReply(objects=objects, next_page_token=token)

    async def ArchiveObjects(
        self,
        request: bench_pb2.ListObjectsRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> bench_pb2.ArchiveReply:
        async with self._calls.call(context, "ArchiveObjects"):
            return archive_reply(await self._scenarios.archive_objects(request.bucket, request.prefix))


class Sensor(bench_pb2_grpc.SensorServicer):
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def Watch(
        self,
        request_iterator: AsyncIterator[bench_pb2.WatchRequest],
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[bench_pb2.WatchResponse]:
        async with self._calls.call(context, "Watch"):
            async for response in self._scenarios.watch(request_iterator):
                yield response


class Info(bench_pb2_grpc.InfoServicer):
    def __init__(self, store: InfoStore, calls: CallsInFlight) -> None:
        self._store = store
        self._calls = calls

    async def SetInfo(
        self,
        request: bench_pb2.InfoRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> bench_pb2.InfoReply:
        async with self._calls.call(context, "SetInfo"):
            self._store.set(request.name, request.age, request.height)
            return SET_INFO_REPLY

    async def SetInfos(
        self,
        request_iterator: AsyncIterator[bench_pb2.InfoRequest],
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[bench_pb2.InfoReply]:
        async with self._calls.call(context, "SetInfos"):
            async for request in request_iterator:
                yield info_reply(self._store, request)


class GenericHandlersOnly:
    """A grpc.aio server as the generated `add_*Servicer_to_server` functions see it: each service is added as a
    generic handler alone, none of its methods registered.

    grpc.aio's server keeps one pending request per registered method, and each time a call arrives it waits on
    all of them again (`asyncio.wait` in `AioServer._server_main_loop`), so that every call costs in proportion to
    the methods registered. Ours serves 13 methods where its floor registers 2. Served generically, the server
    waits on a single request whatever it serves, and resolves a call's method from its generic handlers in
    order, the Greeter's first.
    """

    def __init__(self, server: grpc.aio.Server) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler[Any, Any]]) -> None:
        self._server.add_generic_rpc_handlers(handlers)

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        """Registered nowhere: the service's generic handler, added with it, serves these methods."""


def add_services(server: grpc.aio.Server, scenarios: AsyncScenarios, calls: CallsInFlight) -> Any:
    """Add every service ours serves to server, generically (GenericHandlersOnly); the health servicer."""
    services = GenericHandlersOnly(server)
    bench_pb2_grpc.add_GreeterServicer_to_server(Greeter(scenarios, calls), services)
    bench_pb2_grpc.add_ObjectStoreServicer_to_server(ObjectStore(scenarios, calls), services)
    bench_pb2_grpc.add_SensorServicer_to_server(Sensor(scenarios, calls), services)
    bench_pb2_grpc.add_InfoServicer_to_server(Info(InfoStore(), calls), services)
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]  # untyped submodule
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, services)
    names = (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflector = reflection.aio.ReflectionServicer(names, pool=ReflectionPool())  # type: ignore[attr-defined]  # untyped
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(reflector, services)
    return health_servicer


async def serve(config: ServerConfig) -> None:
    """Serve until SIGTERM or SIGINT, then let calls in flight finish within the grace period."""
    stop = StopSignal()
    if not config.shared_port:
        refuse_taken(config.host, config.port)  # before the backends' clients are made
    scenarios = await AsyncScenarios.open(
        config.backends, config.pool_size, config.mongo_driver, config.sensor_interval_ms, config.s3_client
    )
    server = grpc.aio.server(options=AIO_SERVER_OPTIONS + grpcio_options(config))
    health_servicer = add_services(server, scenarios, CallsInFlight(config.max_concurrent_rpcs))
    try:
        port = add_grpcio_port(server, config)
        await server.start()
        for name in ("", *SERVICE_NAMES):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        freeze_startup_heap()
        log.info("grpc.aio server on %s (%s) serving on %s:%d", config.loop, config.mongo_driver, config.host, port)
        await stop.until_received()
        log.info("stopping: refusing new calls, %.1f s for calls in flight", config.grace)
        await health_servicer.enter_graceful_shutdown()
        await server.stop(config.grace)
    finally:
        await scenarios.close()
        log.info("stopped")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m servers.aio`."""
    setup_logging()
    config = parse_config(argv, prog="python -m servers.aio", description="grpcio asyncio server", stack="loop")
    if config.processes > 1:
        return supervise(config, "servers.aio")
    run_on_loop(config, serve)
    return 0


if __name__ == "__main__":
    sys.exit(main())
