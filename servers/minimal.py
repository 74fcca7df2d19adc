"""Each stack's floor: SayHello served the way the stack's own hello example serves it, and nothing else (no
health, reflection, counters, call limits, interceptors or backends): `python -m servers.minimal --stack grpcio
-w 10`. The stacks study sets each of our servers against its floor, so that a stack is never called slow for
what our code adds. A minimal server answers `"Hello " + name` and ignores the request's other fields; it stops
at SIGTERM as its stack does by default.

- grpcio: `grpc.server(ThreadPoolExecutor(max_workers=W))` (grpc's examples/python/helloworld);
- grpclib: `Server([Greeter()])` under `graceful_exit` (grpclib's examples/helloworld), on asyncio or uvloop;
- grpc-aio: `grpc.aio.server()` (grpc's examples/python/helloworld/async_greeter_server.py), on asyncio or uvloop;
- connect: a connectrpc `GreeterASGIApplication` on pyvoy's own command line or on stock hypercorn;
- rest: a FastAPI `GET /v1/hello` on uvicorn (httptools) or stock hypercorn (HTTP/2).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from servers.ports import refuse_taken

STACKS = ("grpcio", "grpclib", "grpc-aio", "connect", "rest")


def reply(name: str) -> Any:
    from protos.bench.v1 import bench_pb2

    return bench_pb2.HelloReply(message="Hello " + name)


def serve_grpcio(host: str, port: int, workers: int) -> None:
    import grpc

    from protos.bench.v1 import bench_pb2_grpc

    class Greeter(bench_pb2_grpc.GreeterServicer):
        def SayHello(self, request: Any, context: Any) -> Any:
            return reply(request.name)

    server = grpc.server(ThreadPoolExecutor(max_workers=workers))
    bench_pb2_grpc.add_GreeterServicer_to_server(Greeter(), server)
    server.add_insecure_port(f"{host}:{port}")
    server.start()
    server.wait_for_termination()


async def serve_grpclib(host: str, port: int) -> None:
    from grpclib.server import Server, Stream
    from grpclib.utils import graceful_exit

    from protos.bench.v1 import bench_grpc

    class Greeter(bench_grpc.GreeterBase):
        async def SayHello(self, stream: Stream[Any, Any]) -> None:
            request = await stream.recv_message()
            assert request is not None
            await stream.send_message(reply(request.name))

        async def SayHelloStream(self, stream: Stream[Any, Any]) -> None:
            raise NotImplementedError  # hello only

    server = Server([Greeter()])
    with graceful_exit([server]):
        await server.start(host, port)
        await server.wait_closed()


async def serve_grpc_aio(host: str, port: int) -> None:
    import grpc

    from protos.bench.v1 import bench_pb2_grpc

    class Greeter(bench_pb2_grpc.GreeterServicer):
        async def SayHello(self, request: Any, context: Any) -> Any:
            return reply(request.name)

    server = grpc.aio.server()
    bench_pb2_grpc.add_GreeterServicer_to_server(Greeter(), server)
    server.add_insecure_port(f"{host}:{port}")
    await server.start()
    await server.wait_for_termination()


def connect_app() -> Any:
    """The Connect RPC app: the Greeter service alone."""
    from protos.bench.v1.bench_connect import GreeterASGIApplication

    class Greeter:
        async def say_hello(self, request: Any, ctx: Any, /) -> Any:
            return reply(request.name)

        def say_hello_stream(self, request: Any, ctx: Any, /) -> AsyncIterator[Any]:
            raise NotImplementedError  # hello only

    return GreeterASGIApplication(Greeter())


def rest_app() -> Any:
    """The REST app: GET /v1/hello alone."""
    from fastapi import FastAPI

    app = FastAPI()

    @app.get("/v1/hello")
    async def hello(name: str = "") -> dict[str, str]:
        return {"message": "Hello " + name, "payload": ""}

    return app


async def serve_hypercorn(app: Any, host: str, port: int) -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    from servers.hypercorn_serving import KEEP_ALIVE_MAX_REQUESTS

    config = Config()
    config.bind = [f"{host}:{port}"]
    # hypercorn's default ends an HTTP/2 connection after 1,000 requests, which a client holding one connection
    # (ghz) sees as UNAVAILABLE: 591 of 18,023 calls in run 20261125T173916Z. The one setting a floor changes.
    config.keep_alive_max_requests = KEEP_ALIVE_MAX_REQUESTS
    await serve(app, config)


def serve_uvicorn(app: Any, host: str, port: int, loop: str) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port, http="httptools", loop=loop, log_level="warning")


def run(main: Callable[[], Coroutine[Any, Any, None]], loop: str) -> None:
    if loop == "uvloop":
        import uvloop

        uvloop.run(main())
    else:
        asyncio.run(main())


def serve(options: argparse.Namespace) -> None:
    host, port, loop = options.host, options.port, options.loop
    # Each stack binds as its example does, grpcio and Envoy with SO_REUSEPORT: the port is checked here, first, so
    # that a floor never shares a port something else listens on.
    refuse_taken(host, port)
    if options.stack == "grpcio":
        serve_grpcio(host, port, options.workers)
    elif options.stack == "grpclib":
        run(lambda: serve_grpclib(host, port), loop)
    elif options.stack == "grpc-aio":
        run(lambda: serve_grpc_aio(host, port), loop)
    elif options.server == "pyvoy":  # pyvoy's own command line: the app inside an Envoy it starts
        pyvoy = shutil.which("pyvoy", path=os.path.dirname(sys.executable)) or "pyvoy"
        app = f"servers.minimal:{options.stack}"  # the module's __getattr__ makes it
        os.execv(pyvoy, [pyvoy, app, "--address", host, "--port", str(port), "--loop", loop, "--log-level", "error"])
    elif options.stack == "connect" or options.server == "hypercorn":
        application = connect_app() if options.stack == "connect" else rest_app()
        run(lambda: serve_hypercorn(application, host, port), loop)
    else:
        serve_uvicorn(rest_app(), host, port, loop)


def __getattr__(name: str) -> Any:
    """`servers.minimal:connect` and `servers.minimal:rest`, the apps as pyvoy's command line names them."""
    if name == "connect":
        return connect_app()
    if name == "rest":
        return rest_app()
    raise AttributeError(name)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m servers.minimal", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=STACKS, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=50051)
    parser.add_argument("-w", "--workers", type=int, default=10, help="grpcio: worker threads")
    parser.add_argument("-l", "--loop", choices=("asyncio", "uvloop"), default="uvloop")
    parser.add_argument(
        "--server", choices=("pyvoy", "hypercorn", "uvicorn"), default=None, help="connect, rest: the ASGI server"
    )
    options = parser.parse_args(argv)
    if options.workers < 1:
        parser.error(f"-w must be at least 1, got {options.workers}")
    if options.server is not None and options.stack not in ("connect", "rest"):
        parser.error("--server is for the connect and rest stacks")
    if options.stack == "connect" and options.server == "uvicorn":
        parser.error("connect serves gRPC, which needs HTTP/2 trailers: --server pyvoy or hypercorn")
    return options


def main(argv: Sequence[str] | None = None) -> int:
    serve(parse(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
