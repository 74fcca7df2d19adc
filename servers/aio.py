"""grpcio's asyncio server (grpc.aio) on asyncio or uvloop: `python -m servers.aio -l uvloop`."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from scenarios.aio import AsyncScenarios
from scenarios.errors import ScenarioError
from servers.common import (
    GRPCIO_SERVER_OPTIONS,
    INTERNAL_MESSAGE,
    SERVICE_NAMES,
    ReflectionPool,
    ServerConfig,
    StopSignal,
    archive_reply,
    log,
    log_failure,
    parse_config,
    run_on_loop,
    setup_logging,
    status_of,
    supervise,
)


@asynccontextmanager
async def grpc_errors(context: grpc.aio.ServicerContext, method: str) -> AsyncIterator[None]:  # type: ignore[type-arg]
    """Turn a domain error into the call's status; nothing else reaches the client."""
    try:
        yield
    except ScenarioError as error:
        log_failure(method, error)
        await context.abort(grpc.StatusCode[status_of(error)], str(error))
    except (asyncio.CancelledError, grpc.aio.AbortError):
        raise
    except Exception as error:
        log_failure(method, error)
        await context.abort(grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)


class Greeter(bench_pb2_grpc.GreeterServicer):
    def __init__(self, scenarios: AsyncScenarios) -> None:
        self._scenarios = scenarios

    async def SayHello(
        self,
        request: bench_pb2.HelloRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> bench_pb2.HelloReply:
        async with grpc_errors(context, "SayHello"):
            return bench_pb2.HelloReply(message=await self._scenarios.hello(request.name, request.delay_ms))


class ObjectStore(bench_pb2_grpc.ObjectStoreServicer):
    def __init__(self, scenarios: AsyncScenarios) -> None:
        self._scenarios = scenarios

    async def ListObjects(
        self,
        request: bench_pb2.ListObjectsRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> bench_pb2.ListObjectsReply:
        async with grpc_errors(context, "ListObjects"):
            objects = await self._scenarios.list_objects(request.bucket, request.prefix)
            return bench_pb2.ListObjectsReply(objects=objects)

    async def StreamObjects(
        self,
        request: bench_pb2.ListObjectsRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[bench_pb2.ListObjectsReply]:
        async with grpc_errors(context, "StreamObjects"):
            async for batch in self._scenarios.stream_objects(request.bucket, request.prefix, request.batch_size):
                yield bench_pb2.ListObjectsReply(objects=batch)

    async def ArchiveObjects(
        self,
        request: bench_pb2.ListObjectsRequest,
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> bench_pb2.ArchiveReply:
        async with grpc_errors(context, "ArchiveObjects"):
            return archive_reply(await self._scenarios.archive_objects(request.bucket, request.prefix))


async def serve(config: ServerConfig) -> None:
    """Serve until SIGTERM or SIGINT, then let calls in flight finish within the grace period."""
    stop = StopSignal()

    scenarios = await AsyncScenarios.open(config.backends, config.pool_size, config.mongo_driver)
    server = grpc.aio.server(options=GRPCIO_SERVER_OPTIONS)
    bench_pb2_grpc.add_GreeterServicer_to_server(Greeter(scenarios), server)
    bench_pb2_grpc.add_ObjectStoreServicer_to_server(ObjectStore(scenarios), server)
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]  # untyped submodule
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME),
        server,
        pool=ReflectionPool(),  # type: ignore[arg-type]  # duck-typed pool
    )
    try:
        port = server.add_insecure_port(f"{config.host}:{config.port}")
        await server.start()
        for name in ("", *SERVICE_NAMES):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
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
