"""Backends a region away: toxiproxy between the servers and S3 and MongoDB, each route with the latency a
scenario asks for, and a backend config pointed through them."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pymongo

from harness.run.backends import HOST
from harness.run.processes import Child, Ready, free_port, managed_process
from harness.run.tools import TOXIPROXY, ensure_go_tool
from scenarios.config import BackendConfig


class ToxiproxyError(OSError):
    """A toxiproxy API call failed; `status` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None) -> None:
        super().__init__(message)
        self.status = status


class Toxiproxy:
    """A running toxiproxy: proxies between the servers and a backend, and the faults (toxics) they inject."""

    def __init__(self, api: str, child: Child) -> None:
        self.api = api
        self.child = child

    API_TIMEOUT = 30.0
    # How long a toxic's removal may take before the proxy is disabled to let it through: toxiproxy
    # answers in milliseconds unless a connection is stuck, and then not for 25 s.
    REMOVE_TIMEOUT = 2.0

    def _send(self, method: str, path: str, body: dict[str, Any] | None = None, timeout: float = API_TIMEOUT) -> None:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.api + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                response.read()
        except (urllib.error.URLError, OSError) as error:
            status = error.code if isinstance(error, urllib.error.HTTPError) else None
            raise ToxiproxyError(f"toxiproxy {method} {path} failed: {error}", status) from error

    def add_proxy(self, name: str, upstream: str) -> str:
        """A proxy to upstream ("host:port") on a free port; returns its "host:port"."""
        listen = f"{HOST}:{free_port()}"
        self._send("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True})
        return listen

    def add_toxic(
        self, proxy: str, toxic: str, kind: str, attributes: dict[str, int], stream: str = "downstream"
    ) -> None:
        """Inject a fault of toxiproxy's `kind` (latency, timeout, reset_peer, ...) into a proxy's traffic."""
        body = {"name": toxic, "type": kind, "stream": stream, "attributes": attributes}
        self._send("POST", f"/proxies/{proxy}/toxics", body)

    def remove_toxic(self, proxy: str, toxic: str) -> None:
        """Remove a toxic. toxiproxy can fail to while one of its connections is stuck (it answers 503 after
        25 s, Shopify/toxiproxy#558): so after REMOVE_TIMEOUT the proxy is disabled, which closes every
        connection, and the removal tried again before the proxy is enabled."""
        try:
            self._send("DELETE", f"/proxies/{proxy}/toxics/{toxic}", timeout=self.REMOVE_TIMEOUT)
        except ToxiproxyError:
            self.set_enabled(proxy, False)
            try:
                self._send("DELETE", f"/proxies/{proxy}/toxics/{toxic}")
            except ToxiproxyError as error:
                if error.status != 404:  # 404: the first removal went through after all
                    raise
            finally:
                self.set_enabled(proxy, True)

    def set_enabled(self, proxy: str, enabled: bool) -> None:
        """A disabled proxy closes its connections and refuses new ones: the backend is unreachable."""
        self._send("POST", f"/proxies/{proxy}", {"enabled": enabled})

    def add_latency(self, name: str, upstream: str, latency_ms: int, jitter_ms: int = 0) -> str:
        """A proxy to upstream ("host:port") whose replies arrive latency_ms later; returns its "host:port"."""
        listen = self.add_proxy(name, upstream)
        self.add_toxic(name, "latency", "latency", {"latency": latency_ms, "jitter": jitter_ms})
        return listen


def http_ready(url: str) -> Ready:
    """A readiness check that passes once url answers 200."""

    def check(pid: int) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=0.5) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    return check


def replace_mongo_host(uri: str, host_port: str) -> str:
    """uri pointed at host_port directly (one host; credentials and options kept)."""
    scheme, _, rest = uri.partition("://")
    if scheme != "mongodb":
        raise ValueError(f"latency emulation needs a mongodb:// URI with one host, got {scheme}://")
    authority, sep, tail = rest.partition("/")
    if "?" in authority:
        authority, query = authority.split("?", 1)
        sep, tail = "/", "?" + query
    userinfo, at, hosts = authority.rpartition("@")
    if "," in hosts:
        raise ValueError("latency emulation supports a MONGO_URI with one host, not a replica set list")
    path, _, query = (sep + tail).partition("?")
    options = [option for option in query.split("&") if option and not option.startswith("directConnection=")]
    options.append("directConnection=true")
    return f"mongodb://{userinfo}{at}{host_port}{path or '/'}?{'&'.join(options)}"


def s3_upstream(config: BackendConfig) -> str:
    """The "host:port" of a plain-HTTP S3 endpoint, for a proxy in front of it."""
    if not config.s3_endpoint or not config.s3_endpoint.startswith("http://"):
        raise ValueError("a proxy in front of S3 needs a plain-HTTP AWS_ENDPOINT_URL (or the embedded S3)")
    return config.s3_endpoint.removeprefix("http://").rstrip("/")


def mongo_upstream(config: BackendConfig) -> str:
    """The "host:port" of the (first) MongoDB host, for a proxy in front of it."""
    nodes = pymongo.uri_parser.parse_uri(config.mongo_uri)["nodelist"]
    return f"{nodes[0][0]}:{nodes[0][1]}"


def through_proxies(config: BackendConfig, s3: str | None = None, mongo: str | None = None) -> BackendConfig:
    """config with S3 and/or MongoDB reached through the proxies listening at the given "host:port"."""
    if s3:
        config = replace(config, s3_endpoint=f"http://{s3}")
    if mongo:
        config = replace(config, mongo_uri=replace_mongo_host(config.mongo_uri, mongo))
    return config


class LatencyRoutes:
    """Backend configs whose S3 or MongoDB traffic crosses a latency proxy, each proxy made on first use."""

    def __init__(self, proxy: Toxiproxy, direct: BackendConfig) -> None:
        self._proxy = proxy
        self._direct = direct
        self._routes: dict[tuple[str, int, int], str] = {}

    @property
    def pid(self) -> int:
        """The proxy's process: what its CPU is read from."""
        return self._proxy.child.pid

    def _route(self, backend: str, upstream: str, latency_ms: int, jitter_ms: int) -> str:
        key = (backend, latency_ms, jitter_ms)
        if key not in self._routes:
            name = f"{backend}-{latency_ms}ms" + (f"-jitter{jitter_ms}ms" if jitter_ms else "")
            self._routes[key] = self._proxy.add_latency(name, upstream, latency_ms, jitter_ms)
        return self._routes[key]

    def config(self, s3_latency_ms: int = 0, mongo_latency_ms: int = 0, jitter_ms: int = 0) -> BackendConfig:
        """The direct config, with each backend given a latency (and jitter) reached through its proxy."""
        config = self._direct
        s3 = self._route("s3", s3_upstream(config), s3_latency_ms, jitter_ms) if s3_latency_ms else None
        mongo = (
            self._route("mongodb", mongo_upstream(config), mongo_latency_ms, jitter_ms) if mongo_latency_ms else None
        )
        return through_proxies(config, s3, mongo)


@contextmanager
def toxiproxy() -> Iterator[Toxiproxy]:
    """toxiproxy's server with its API on 127.0.0.1 (a free port), and no proxy yet."""
    binary = ensure_go_tool(TOXIPROXY)
    api = f"http://{HOST}:{free_port()}"
    port = api.rpartition(":")[2]
    argv = [str(binary), "-host", HOST, "-port", port]
    with managed_process("toxiproxy", argv, ready=http_ready(f"{api}/version")) as child:
        yield Toxiproxy(api, child)
