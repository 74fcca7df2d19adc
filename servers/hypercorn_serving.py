"""hypercorn as our servers run it: on a socket we opened, until a stop signal, with its HTTP/2 made safe for a
server that answers a request before it has read all of it, as a gRPC server does when it refuses an oversized one.

hypercorn 0.18 has three faults there, each seen under our own tests (a 4 MiB request over grpcio):
- Request data that arrives after the stream's response ended raises KeyError and ends the whole connection,
  with every call on it (pgjones/hypercorn#329; the same guard is proposed upstream in #312, #334 and #365).
  `_Streams` drops that data, as hypercorn already drops the end of such a request.
- hypercorn hands a request's data to its app through a queue of at most `max_app_queue_size` messages and stops
  reading the connection while the queue is full: an app that has stopped reading stalls every stream on it.
  `ReadsRequestsToTheEnd` reads and drops what is left of a request once its app has sent the whole response.
- After a complete gRPC response (its trailers) the client may still be sending; hypercorn then leaves the
  stream closed, and h2 answers the client's next data with RST_STREAM(STREAM_CLOSED), which grpcio can report
  as INTERNAL in place of the status it was sent. `_reset_after_trailers` asks the client to stop sending with
  RST_STREAM(NO_ERROR), as RFC 9113 section 8.1 provides and grpc-go does.

Besides, a connection is closed by its client, never after 1,000 requests (hypercorn's `keep_alive_max_requests`):
with one multiplexed HTTP/2 connection, every 1,000th request sent a GOAWAY that failed the calls in flight.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import ssl
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from servers.common import StopSignal, TlsFiles

KEEP_ALIVE_MAX_REQUESTS = 2**62
DEFAULT_WINDOW = 65_535  # HTTP/2's initial flow-control window, which hypercorn never raises
H2_WINDOW = "bench_h2_window"  # the Config attribute that raises it (serve_on_hypercorn's `window`)

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[..., Awaitable[None]]  # an ASGI app: (scope, receive, send)


class ReadsRequestsToTheEnd:
    """ASGI middleware: once the app has sent its whole response, a task reads what is left of the request and
    drops it, until the request ends or the server says the stream is gone (`http.disconnect`)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._draining: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_ended = False
        trailers = False

        async def receiving() -> Message:
            nonlocal request_ended
            message = await receive()
            request_ended = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def sending(message: Message) -> None:
            nonlocal trailers
            kind = message["type"]
            if kind == "http.response.start":
                trailers = bool(message.get("trailers", False))
            last = (kind == "http.response.body" and not message.get("more_body", False) and not trailers) or (
                kind == "http.response.trailers" and not message.get("more_trailers", False)
            )
            if last and not request_ended:
                task = asyncio.get_running_loop().create_task(self._drain(receive))
                self._draining.add(task)
                task.add_done_callback(self._draining.discard)
            await send(message)

        await self.app(scope, receiving, sending)

    @staticmethod
    async def _drain(receive: Receive) -> None:
        while (message := await receive())["type"] == "http.request" and message.get("more_body", False):
            pass


class _EndedStream:
    """What hypercorn's HTTP/2 protocol finds for a stream whose response has ended: data for it is dropped.

    The connection's flow-control window is still credited, since hypercorn acknowledges the data after this."""

    async def handle(self, event: object) -> None:
        return None


_ENDED_STREAM = _EndedStream()


class _Streams(dict[int, Any]):
    """hypercorn's streams by id; an id no longer present is a stream whose response has ended."""

    def __missing__(self, stream_id: int) -> _EndedStream:
        return _ENDED_STREAM


def patch_hypercorn_h2() -> None:
    """Install `_Streams` and the reset after trailers in hypercorn's HTTP/2 protocol; idempotent."""
    from h2.errors import ErrorCodes
    from h2.settings import SettingCodes, Settings
    from h2.stream import StreamState
    from hypercorn.protocol.events import Trailers
    from hypercorn.protocol.h2 import H2Protocol

    if getattr(H2Protocol, "patched_by_bench", False):
        return
    init, initiate, stream_send = H2Protocol.__init__, H2Protocol.initiate, H2Protocol.stream_send

    @functools.wraps(init)
    def __init__(self: H2Protocol, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.streams = _Streams()
        if window := getattr(self.config, H2_WINDOW, None):  # each stream's receive window, in the first SETTINGS
            values = {SettingCodes(code): value for code, value in self.connection.local_settings.items()}
            values[SettingCodes.INITIAL_WINDOW_SIZE] = window
            self.connection.local_settings = Settings(client=False, initial_values=values)

    @functools.wraps(initiate)
    async def _initiate_with_window(self: H2Protocol, *args: Any, **kwargs: Any) -> None:
        await initiate(self, *args, **kwargs)
        if (window := getattr(self.config, H2_WINDOW, None)) and window > DEFAULT_WINDOW:  # the connection's too
            self.connection.increment_flow_control_window(window - DEFAULT_WINDOW)
            await self._flush()

    def still_receiving(connection: Any, stream_id: int) -> bool:
        stream = connection.streams.get(stream_id)
        return stream is not None and stream.state_machine.state == StreamState.HALF_CLOSED_LOCAL

    @functools.wraps(stream_send)
    async def _reset_after_trailers(self: H2Protocol, event: Any) -> None:
        await stream_send(self, event)
        if isinstance(event, Trailers) and still_receiving(self.connection, event.stream_id):
            self.connection.reset_stream(event.stream_id, ErrorCodes.NO_ERROR)
            await self._flush()

    H2Protocol.__init__ = __init__  # type: ignore[method-assign]
    H2Protocol.initiate = _initiate_with_window  # type: ignore[method-assign]
    H2Protocol.stream_send = _reset_after_trailers  # type: ignore[method-assign]
    H2Protocol.patched_by_bench = True  # type: ignore[attr-defined]


async def serve_on_hypercorn(
    app: App,
    sock: socket.socket,
    grace: float,
    stop: StopSignal,
    tls: TlsFiles | None = None,
    window: int | None = None,
) -> None:
    """Serve the ASGI app on hypercorn (HTTP/2 and HTTP/1.1; cleartext, or TLS with ALPN h2 and http/1.1 when
    given its files) until stop; it takes the socket over. `window`: each HTTP/2 stream's and connection's
    receive window, in bytes (None: HTTP/2's 65,535, as hypercorn leaves it)."""
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    patch_hypercorn_h2()
    settings = Config()
    settings.bind = [f"fd://{sock.detach()}"]
    if tls:
        settings.certfile, settings.keyfile = str(tls.cert), str(tls.key)
        settings.alpn_protocols = ["h2", "http/1.1"]
        if tls.client_ca:
            settings.ca_certs, settings.verify_mode = str(tls.client_ca), ssl.CERT_REQUIRED
    settings.graceful_timeout = grace
    settings.accesslog = None
    settings.keep_alive_max_requests = KEEP_ALIVE_MAX_REQUESTS
    setattr(settings, H2_WINDOW, window)
    await serve(ReadsRequestsToTheEnd(app), settings, shutdown_trigger=stop.until_received)  # type: ignore[arg-type]
