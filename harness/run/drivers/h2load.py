"""h2load (nghttp2): the cross-check of our driver on REST over HTTP/2, as ghz is on gRPC.

loadgen's REST cell over HTTP/2 holds one connection and W workers on it; h2load holds one client
connection with W concurrent streams (`--max-concurrent-streams`). Its per-request log (`--log-file`:
start, status, microseconds) becomes the ghz-shaped report every driver gives: 2xx counts as OK, other
statuses as "HTTP <status>", requests that got no answer as "Unavailable", and the OK latencies as a
histogram and its percentiles.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import Counter
from pathlib import Path

from harness.plan.matrix import SHARED, Cell
from harness.results.histogram import Latencies, encode_latencies
from harness.results.load import HISTOGRAM_KEY, NANOSECONDS, PERCENTILES, DriverError, DriverRun, LoadReport
from harness.run.drivers.ghz import run_tool
from harness.run.tls import Wire
from harness.run.tools import TOOLS_DIR

REST_INFO_PATH = "/v1/info"
INFO_FIELDS = ("name", "age", "height")
BODIES = TOOLS_DIR / "h2load-bodies"  # request bodies, one file per content (h2load posts a file)
MICROSECONDS = 1e6
FINISHED = re.compile(r"finished in ([\d.]+)(s|ms|us)\b")
REQUESTS = re.compile(r"requests: (\d+) total")
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def body_file(body: str) -> Path:
    """The file holding body, written once (atomically) under the tool cache."""
    path = BODIES / f"{hashlib.sha256(body.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        BODIES.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=BODIES, delete=False) as partial:
            partial.write(body)
        os.replace(partial.name, path)
    return path


def h2load_argv(h2load: Path | str, cell: Cell, target: str, requests: int) -> list[str]:
    """`requests` POSTs of the cell's Info request to the REST server over cleartext HTTP/2, cell.concurrency
    at once on one connection. Only REST over HTTP/2 on one connection: anything else is a ValueError. The
    body goes to a file in the cache on first use (h2load reads it from there)."""
    data = cell.scenario.data
    if data.get("shape") != "rest" or str(data.get("http")) != "2" or cell.connections != SHARED:
        raise ValueError(f"h2load drives REST over HTTP/2 on one connection, not {cell.key}")
    if requests < cell.concurrency:
        raise ValueError(f"h2load needs at least one request per stream: {requests} < {cell.concurrency}")
    body = json.dumps({field: data[field] for field in INFO_FIELDS}, sort_keys=True)
    return [
        str(h2load),
        "--clients=1",
        "--threads=1",
        f"--max-concurrent-streams={cell.concurrency}",
        f"--requests={requests}",
        f"--data={body_file(body)}",
        "--header=content-type: application/json",
        f"http://{target}{REST_INFO_PATH}",
    ]


def h2load_wire(argv: list[str], wire: Wire) -> list[str]:
    """argv over TLS (an https URL; h2load negotiates h2 by ALPN and does not check the server's certificate).
    h2load cannot present a client certificate: mutual TLS is a ValueError that says so."""
    if wire.certificates is None:
        return argv
    if wire.mutual:
        raise ValueError("h2load cannot present a client certificate: it does not drive mutual TLS")
    return [*argv[:-1], argv[-1].replace("http://", "https://", 1)]


def h2load_report(stdout: str, log: str) -> dict[str, object]:
    """h2load's summary and per-request log as a ghz-shaped report; DriverError if either is not h2load's."""
    finished, issued = FINISHED.search(stdout), REQUESTS.search(stdout)
    if finished is None or issued is None:
        raise DriverError(f"h2load printed no summary: {stdout[:200]!r}")
    total = float(finished.group(1)) * UNITS[finished.group(2)]
    count = int(issued.group(1))
    statuses: Counter[str] = Counter()
    ok: list[float] = []
    try:
        for line in log.splitlines():
            _, status, micros = line.split("\t")
            code = int(status)
            if 200 <= code < 300:
                ok.append(int(micros) / MICROSECONDS)
                statuses["OK"] += 1
            else:
                statuses["Unavailable" if code <= 0 else f"HTTP {code}"] += 1  # no status: no answer
    except ValueError as error:
        raise DriverError(f"h2load's request log is malformed: {error}") from error
    if sum(statuses.values()) > count:
        raise DriverError(f"h2load logged {sum(statuses.values())} requests of {count}")
    statuses["Unavailable"] += count - sum(statuses.values())
    answered = ok or [0.0]
    histogram = encode_latencies(ok)
    latencies = Latencies([histogram])
    return {
        "count": count,
        "total": total * NANOSECONDS,
        "average": sum(answered) / len(answered) * NANOSECONDS,
        "fastest": min(answered) * NANOSECONDS,
        "slowest": max(answered) * NANOSECONDS,
        "rps": count / total if total > 0 else 0.0,
        "statusCodeDistribution": {status: n for status, n in statuses.items() if n},
        "errorDistribution": {},
        "latencyDistribution": [
            {"percentage": p, "latency": latencies.percentile(p) * NANOSECONDS} for p in PERCENTILES if ok
        ],
        HISTOGRAM_KEY: histogram,
    }


def run_h2load(argv: list[str], timeout: float) -> DriverRun:
    """Run h2load with a per-request log beside it; its report ghz-shaped, its CPU time measured."""
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "requests.tsv"
        stdout, cpu_seconds = run_tool("h2load", [*argv[:-1], f"--log-file={log}", argv[-1]], timeout)
        raw = h2load_report(stdout, log.read_text() if log.exists() else "")
    return DriverRun(raw, LoadReport.from_json(raw), round(cpu_seconds, 3))
