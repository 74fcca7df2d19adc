"""A TCP proxy in front of a real server that counts the connections made through it and, in front of S3,
the ListObjectsV2 requests (delaying each one).

It lets a test see whether a server asks S3 for another page after a call ended, how many S3 connections
its calls opened, and how many connections a driver opened to a gRPC server. It forwards bytes unchanged;
it fakes nothing.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType

LIST_REQUEST = b"list-type=2"  # in the request line of every ListObjectsV2 call


class CountingProxy:
    """`with CountingProxy(host, port, delay) as proxy:` then point S3 at proxy.endpoint; read proxy.list_requests
    and proxy.connections."""

    def __init__(self, upstream_host: str, upstream_port: int, delay_seconds: float) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._delay = delay_seconds
        self._count = 0
        self._connections = 0
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="s3-counter", daemon=True)
        self.endpoint = ""

    @property
    def list_requests(self) -> int:
        with self._lock:
            return self._count

    @property
    def connections(self) -> int:
        with self._lock:
            return self._connections

    def reset(self) -> None:
        with self._lock:
            self._count = self._connections = 0

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop)
        self._server = server.result(10)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.endpoint = f"http://{host}:{port}"
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        async def close() -> None:
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            # Awaited, not only cancelled: a task the loop stops under is never finished, and its half-closed
            # transports are reported as unraisable when collected.
            await asyncio.gather(*tasks, return_exceptions=True)
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        with self._lock:
            self._connections += 1
        upstream_reader, upstream_writer = await asyncio.open_connection(*self._upstream)
        try:
            await asyncio.gather(
                self._pipe(client_reader, upstream_writer, count=True), self._pipe(upstream_reader, client_writer)
            )
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            for writer in (client_writer, upstream_writer):
                writer.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, count: bool = False) -> None:
        tail = b""
        while chunk := await reader.read(65536):
            if count:
                seen = tail + chunk
                found = seen.count(LIST_REQUEST)
                if found:
                    with self._lock:
                        self._count += found
                    await asyncio.sleep(self._delay)  # the page arrives this much later
                tail = seen[-(len(LIST_REQUEST) - 1) :]
            writer.write(chunk)
            await writer.drain()
        writer.close()
