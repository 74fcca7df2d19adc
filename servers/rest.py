"""REST on FastAPI: `python -m servers.rest --http 1.1` (uvicorn) or `--http 2` (hypercorn, cleartext HTTP/2).

The protocols study's REST side of the Info flow: `POST /v1/info` takes `{"name", "age", "height"}` and
answers `{"success": true, "reason": ""}`, or 400 with `success` false and the reason for bad input;
`GET /v1/hello?name=&reply_bytes=N&work=W` computes W units (as SayHello's `work`) and answers
`{"message": "Hello <name>", "payload": "<N bytes, base64>"}`, or the N bytes alone with
`Accept: application/octet-stream`; N or W above its maximum is 400 naming the field. `GET /healthz` is the
readiness check.
JSON in, JSON out, validated by pydantic as a FastAPI service would be.
"""

from __future__ import annotations

import base64
import math
import socket
import ssl
import sys
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, StrictInt, StrictStr

from scenarios.errors import InvalidArgument
from scenarios.info import InfoStore
from scenarios.objects import compute, hello_message, reply_payload, work_units
from servers.common import (
    HEALTH_PATH,
    ServerConfig,
    StopSignal,
    TlsFiles,
    freeze_startup_heap,
    listening_socket,
    log,
    parse_config,
    run_on_loop,
    setup_logging,
    supervise,
)
from servers.diagnostics import count_call
from servers.hypercorn_serving import serve_on_hypercorn

OCTET_STREAM = "application/octet-stream"


class InfoIn(BaseModel):
    name: StrictStr = ""
    age: StrictInt = 0
    height: StrictInt = 0


class InfoOut(BaseModel):
    success: bool
    reason: str = ""


class HelloOut(BaseModel):
    message: str
    payload: str = ""  # base64


def _refused(reason: str) -> JSONResponse:
    return JSONResponse(InfoOut(success=False, reason=reason).model_dump(), status_code=400)


def create_app(store: InfoStore) -> FastAPI:
    """The REST app over one InfoStore."""
    app = FastAPI(title="bench REST", openapi_url=None, docs_url=None, redoc_url=None)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, error: RequestValidationError) -> JSONResponse:
        """A body that is not JSON, or a field of the wrong type: 400 naming the field, as bad values get."""
        problems = [
            f"{'.'.join(str(part) for part in each['loc'] if part != 'body') or 'body'}: {each['msg']}"
            for each in error.errors()
        ]
        return _refused("; ".join(problems))

    @app.post("/v1/info", response_model=InfoOut)
    async def set_info(info: InfoIn) -> Any:
        count_call()
        try:
            store.set(info.name, info.age, info.height)
        except InvalidArgument as error:
            return _refused(str(error))
        return InfoOut(success=True)

    @app.get("/v1/hello", response_model=HelloOut)
    async def hello(
        request: Request, name: str = "", reply_bytes: int = Query(0, ge=0), work: int = Query(0, ge=0)
    ) -> Any:
        count_call()
        try:
            payload, units = reply_payload(reply_bytes), work_units(work)
        except InvalidArgument as error:
            return _refused(str(error))
        compute(units)
        message = hello_message(name)
        if request.headers.get("accept", "") == OCTET_STREAM:
            return Response(payload, media_type=OCTET_STREAM)
        return HelloOut(message=message, payload=base64.b64encode(payload).decode())

    @app.get(HEALTH_PATH)
    async def health() -> dict[str, str]:
        return {"status": "SERVING"}

    return app


async def serve_http1(app: FastAPI, sock: socket.socket, config: ServerConfig, stop: StopSignal) -> None:
    """uvicorn with httptools: HTTP/1.1 with keep-alive. uvicorn catches SIGTERM and SIGINT itself while it
    serves; then it restores stop's handler and raises the signal again, which stop only notes."""
    import uvicorn

    cert, key, client_ca = TlsFiles.paths(config.tls)
    settings = uvicorn.Config(
        app, http="httptools", lifespan="off", access_log=False, log_config=None,
        timeout_graceful_shutdown=math.ceil(config.grace),
        ssl_certfile=cert, ssl_keyfile=key, ssl_ca_certs=client_ca,
        ssl_cert_reqs=ssl.CERT_REQUIRED if client_ca else ssl.CERT_NONE,
    )  # fmt: skip
    await uvicorn.Server(settings).serve(sockets=[sock])


async def serve_http2(app: FastAPI, sock: socket.socket, config: ServerConfig, stop: StopSignal) -> None:
    """hypercorn: HTTP/2 over cleartext (prior knowledge or upgrade), HTTP/1.1 too. It takes the socket over."""
    await serve_on_hypercorn(app, sock, config.grace, stop, config.tls)


def serve(config: ServerConfig) -> None:
    """Serve until SIGTERM or SIGINT, then let requests in flight finish within the grace period."""
    stop = StopSignal()  # installed before the server starts: a signal during startup is noted, not fatal
    app = create_app(InfoStore())
    sock = listening_socket(config.host, config.port, config.shared_port)
    server, name = (serve_http1, "uvicorn, HTTP/1.1") if config.http == "1.1" else (serve_http2, "hypercorn, HTTP/2")

    async def main(config: ServerConfig) -> None:
        freeze_startup_heap()
        log.info("REST server (%s) on %s serving on %s:%d", name, config.loop, config.host, sock.getsockname()[1])
        await server(app, sock, config, stop)
        log.info("stopped")

    try:
        run_on_loop(config, main)
    finally:
        sock.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m servers.rest`."""
    setup_logging()
    config = parse_config(argv, prog="python -m servers.rest", description="REST server (FastAPI)", stack="http")
    if config.processes > 1:
        return supervise(config, "servers.rest")
    serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
