"""grpcio's sync server on a thread pool: `python -m servers.sync -w 10`."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from scenarios.errors import ScenarioError
from scenarios.info import InfoStore
from scenarios.sync import NEVER, SyncScenarios
from servers.common import (
    GRPCIO_SERVER_OPTIONS,
    INTERNAL_MESSAGE,
    SERVICE_NAMES,
    SET_INFO_REPLY,
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
    setup_logging,
    status_of,
    supervise,
)
from servers.diagnostics import count_call, diagnosed
from servers.ports import refuse_taken


def stopped_event(context: grpc.ServicerContext) -> threading.Event:
    """An event set when the call ends for any reason: its deadline passed, the client cancelled, or it finished."""
    stopped = threading.Event()
    context.add_callback(stopped.set)
    return stopped


def waiting(request: bench_pb2.HelloRequest, context: grpc.ServicerContext) -> threading.Event:
    """What a hello call waits on: the call's end where it waits (delay_ms), else an event never set: no event
    and no callback on a call that does not wait."""
    return stopped_event(context) if request.delay_ms else NEVER


@contextmanager
def grpc_errors(context: grpc.ServicerContext, method: str) -> Iterator[None]:
    """Count the call, and turn a domain error into its status; nothing else reaches the client."""
    count_call()
    try:
        yield
    except ScenarioError as error:
        log_failure(method, error)
        context.abort(grpc.StatusCode[status_of(error)], str(error))
    except Exception as error:
        log_failure(method, error)
        context.abort(grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)


class Greeter(bench_pb2_grpc.GreeterServicer):
    def __init__(self, scenarios: SyncScenarios) -> None:
        self._scenarios = scenarios

    def SayHello(self, request: bench_pb2.HelloRequest, context: grpc.ServicerContext) -> bench_pb2.HelloReply:
        with grpc_errors(context, "SayHello"):
            return self._scenarios.hello(request, waiting(request, context))

    def SayHelloStream(
        self, request: bench_pb2.HelloRequest, context: grpc.ServicerContext
    ) -> Iterator[bench_pb2.HelloReply]:
        with grpc_errors(context, "SayHelloStream"):
            yield self._scenarios.hello(request, waiting(request, context))


class ObjectStore(bench_pb2_grpc.ObjectStoreServicer):
    def __init__(self, scenarios: SyncScenarios) -> None:
        self._scenarios = scenarios

    def ListObjects(
        self, request: bench_pb2.ListObjectsRequest, context: grpc.ServicerContext
    ) -> bench_pb2.ListObjectsReply:
        with grpc_errors(context, "ListObjects"):
            objects = self._scenarios.list_objects(request.bucket, request.prefix, stopped_event(context))
            return bench_pb2.ListObjectsReply(objects=objects)

    def StreamObjects(
        self, request: bench_pb2.ListObjectsRequest, context: grpc.ServicerContext
    ) -> Iterator[bench_pb2.ListObjectsReply]:
        with grpc_errors(context, "StreamObjects"):
            batches = self._scenarios.stream_objects(
                request.bucket, request.prefix, request.batch_size, stopped_event(context), request.parallelism
            )
            for batch in batches:
                yield bench_pb2.ListObjectsReply(objects=batch)

    def ListObjectsPage(
        self, request: bench_pb2.ListObjectsPageRequest, context: grpc.ServicerContext
    ) -> bench_pb2.ListObjectsPageReply:
        with grpc_errors(context, "ListObjectsPage"):
            objects, token = self._scenarios.list_objects_page(
                request.bucket, request.prefix, request.page_size, request.page_token
            )
            return bench_pb2.ListObjectsPageReply(objects=objects, next_page_token=token)

    def ArchiveObjects(
        self, request: bench_pb2.ListObjectsRequest, context: grpc.ServicerContext
    ) -> bench_pb2.ArchiveReply:
        with grpc_errors(context, "ArchiveObjects"):
            return archive_reply(
                self._scenarios.archive_objects(request.bucket, request.prefix, stopped_event(context))
            )


class Sensor(bench_pb2_grpc.SensorServicer):
    """Each open Watch stream holds one worker thread of the pool for as long as it is open."""

    def __init__(self, scenarios: SyncScenarios) -> None:
        self._scenarios = scenarios

    def Watch(
        self, request_iterator: Iterator[bench_pb2.WatchRequest], context: grpc.ServicerContext
    ) -> Iterator[bench_pb2.WatchResponse]:
        with grpc_errors(context, "Watch"):
            yield from self._scenarios.watch(request_iterator, stopped_event(context))


class Info(bench_pb2_grpc.InfoServicer):
    """A SetInfos stream holds one worker thread of the pool for as long as it is open."""

    def __init__(self, store: InfoStore) -> None:
        self._store = store

    def SetInfo(self, request: bench_pb2.InfoRequest, context: grpc.ServicerContext) -> bench_pb2.InfoReply:
        with grpc_errors(context, "SetInfo"):
            self._store.set(request.name, request.age, request.height)
            return SET_INFO_REPLY

    def SetInfos(
        self, request_iterator: Iterator[bench_pb2.InfoRequest], context: grpc.ServicerContext
    ) -> Iterator[bench_pb2.InfoReply]:
        with grpc_errors(context, "SetInfos"):
            for request in request_iterator:
                yield info_reply(self._store, request)


def serve(config: ServerConfig) -> None:
    """Serve until SIGTERM or SIGINT, then let calls in flight finish within the grace period."""
    stop = StopSignal()
    if not config.shared_port:
        refuse_taken(config.host, config.port)  # before the backends' clients are made
    scenarios = SyncScenarios(config.backends, config.workers, config.sensor_interval_ms, config.s3_client)
    server = grpc.server(
        ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="grpc-worker"),
        options=GRPCIO_SERVER_OPTIONS + grpcio_options(config),
        maximum_concurrent_rpcs=config.max_concurrent_rpcs,
    )
    bench_pb2_grpc.add_GreeterServicer_to_server(Greeter(scenarios), server)
    bench_pb2_grpc.add_ObjectStoreServicer_to_server(ObjectStore(scenarios), server)
    bench_pb2_grpc.add_SensorServicer_to_server(Sensor(scenarios), server)
    bench_pb2_grpc.add_InfoServicer_to_server(Info(InfoStore()), server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME),
        server,
        pool=ReflectionPool(),  # type: ignore[arg-type]  # duck-typed pool
    )
    port = add_grpcio_port(server, config)
    server.start()
    for name in ("", *SERVICE_NAMES):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    freeze_startup_heap()
    log.info("grpcio sync server (%d workers) serving on %s:%d", config.workers, config.host, port)
    try:
        stop.wait()
    finally:
        log.info("stopping: refusing new calls, %.1f s for calls in flight", config.grace)
        health_servicer.enter_graceful_shutdown()
        server.stop(config.grace).wait()
        scenarios.close()
        log.info("stopped")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m servers.sync`."""
    setup_logging()
    config = parse_config(
        argv, prog="python -m servers.sync", description="grpcio sync server on a thread pool", stack="threads"
    )
    if config.processes > 1:
        return supervise(config, "servers.sync")
    with diagnosed():
        serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
