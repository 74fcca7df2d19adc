"""Pure logic shared by the sync and async scenarios: validation, batching, archive documents."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pymongo import UpdateOne
from pymongo.errors import BulkWriteError

from protos.bench.v1 import bench_pb2
from scenarios.errors import BackendUnavailable, InvalidArgument, NotFound, ScenarioError

MAX_BATCH_SIZE = 1000
MAX_DELAY_MS = 60_000
MAX_WORK = 1000
# Keys one unit of work stores and reads back: about 1 ms of CPU under CPython 3.11 on the 2-core machine (AMD
# EPYC, 2026-11: 0.4 to 0.5 microseconds a key).
WORK_KEYS = 2500
# The largest reply payload SayHello makes (the wire study's largest message): with its envelope it stays under
# every stack's message limit (servers.common.MAX_MESSAGE_BYTES, 32 MiB).
MAX_REPLY_BYTES = 16 * 1024 * 1024
ARCHIVE_COLLECTION = "objects"
DUPLICATE_KEY = 11000
# Attempts at a bulk upsert before duplicate-key races count as a MongoDB failure.
MAX_BULK_ATTEMPTS = 3
# What a failed S3 call raises: botocore's own errors, and socket errors from the transport.
S3_ERRORS = (BotoCoreError, ClientError, OSError)
_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def hello_message(name: str) -> str:
    """The Greeter's reply text."""
    return "Hello " + name


def delay_seconds(delay_ms: int) -> float:
    """How long SayHello waits: delay_ms in seconds, at most MAX_DELAY_MS."""
    if delay_ms > MAX_DELAY_MS:
        raise InvalidArgument("delay_ms", f"{delay_ms} is above the maximum of {MAX_DELAY_MS}")
    return delay_ms / 1000


def work_units(work: int) -> int:
    """The units of work SayHello was asked for, at most MAX_WORK."""
    if work > MAX_WORK:
        raise InvalidArgument("work", f"{work} is above the maximum of {MAX_WORK}")
    return work


def compute(units: int) -> int:
    """`units` of one fixed pure-Python computation, the same on every stack: each unit stores WORK_KEYS strings
    in a dict and reads them back. Returns a checksum, so that nothing can skip it."""
    total = 0
    for unit in range(units):
        table = {}
        for index in range(WORK_KEYS):
            key = f"unit{unit}:{index}"
            table[key] = key.upper()[::-1]
        total += sum(len(value) for value in table.values())
    return total


@functools.lru_cache(maxsize=8)
def _payload(size: int) -> bytes:
    return (bytes(range(256)) * (size // 256 + 1))[:size]


def reply_payload(reply_bytes: int) -> bytes:
    """The payload of a reply of reply_bytes bytes (at most MAX_REPLY_BYTES): every byte value in turn, so that
    nothing on the way can shrink it; the same object for the same size."""
    if reply_bytes > MAX_REPLY_BYTES:
        raise InvalidArgument("reply_bytes", f"{reply_bytes} is above the maximum of {MAX_REPLY_BYTES}")
    return _payload(reply_bytes)


def validate_bucket(bucket: str) -> None:
    """Raise InvalidArgument unless bucket follows S3's general-purpose bucket naming rules."""
    if not bucket:
        raise InvalidArgument("bucket", "must not be empty")
    if not _BUCKET_NAME.match(bucket):
        raise InvalidArgument(
            "bucket",
            f"{bucket!r} is not a valid S3 bucket name (3-63 characters: lowercase letters, "
            "digits, '.' and '-', starting and ending with a letter or digit)",
        )
    if ".." in bucket:
        raise InvalidArgument("bucket", f"{bucket!r} is not a valid S3 bucket name (contains '..')")
    try:
        ipaddress.IPv4Address(bucket)
    except ValueError:
        return
    raise InvalidArgument("bucket", f"{bucket!r} is not a valid S3 bucket name (an IP address)")


def effective_batch_size(batch_size: int) -> int:
    """Objects per streamed message: 0 means 1, above MAX_BATCH_SIZE is an error."""
    if batch_size > MAX_BATCH_SIZE:
        raise InvalidArgument("batch_size", f"{batch_size} is above the maximum of {MAX_BATCH_SIZE}")
    return max(batch_size, 1)


def object_info(entry: Mapping[str, Any]) -> bench_pb2.ObjectInfo:
    """An ObjectInfo message from one `Contents` entry of a ListObjectsV2 page."""
    info = bench_pb2.ObjectInfo(key=entry["Key"], size=entry["Size"], etag=entry["ETag"].strip('"'))
    info.last_modified.FromDatetime(entry["LastModified"])
    return info


def page_objects(page: Mapping[str, Any]) -> list[bench_pb2.ObjectInfo]:
    """The ObjectInfo messages of one ListObjectsV2 page."""
    return [object_info(entry) for entry in page.get("Contents", ())]


class Batcher:
    """Groups objects that arrive page by page into messages of exactly `size` (the last may be short)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._pending: list[bench_pb2.ObjectInfo] = []

    def add(self, objects: Iterable[bench_pb2.ObjectInfo]) -> list[list[bench_pb2.ObjectInfo]]:
        """Take objects in; return the batches that are now full."""
        self._pending.extend(objects)
        cut = len(self._pending) - len(self._pending) % self._size
        full = [self._pending[i : i + self._size] for i in range(0, cut, self._size)]
        del self._pending[:cut]
        return full

    def flush(self) -> list[list[bench_pb2.ObjectInfo]]:
        """The last, possibly short, batch if any object is left."""
        rest, self._pending = self._pending, []
        return [rest] if rest else []


def archive_operations(bucket: str, entries: Iterable[Mapping[str, Any]]) -> list[UpdateOne]:
    """One idempotent upsert per object, keyed `<bucket>/<key>`."""
    return [
        UpdateOne(
            {"_id": f"{bucket}/{entry['Key']}"},
            {
                "$set": {
                    "bucket": bucket,
                    "key": entry["Key"],
                    "size": entry["Size"],
                    "etag": entry["ETag"].strip('"'),
                    "last_modified": entry["LastModified"],
                }
            },
            upsert=True,
        )
        for entry in entries
    ]


@dataclass(frozen=True)
class ArchiveCounts:
    """What ArchiveObjects did: objects listed, documents inserted, documents updated."""

    listed: int
    inserted: int
    updated: int


@dataclass(frozen=True)
class BulkOutcome:
    """Counts of one unordered bulk write, and the operations to send again."""

    inserted: int
    updated: int
    retry: list[UpdateOne]


def bulk_outcome(operations: list[UpdateOne], result: Mapping[str, Any] | None) -> BulkOutcome:
    """Read a bulk write's counts; upserts that lost a race to a concurrent insert are retried.

    Two concurrent upserts of a new `_id` can both try to insert; the loser fails with a
    duplicate-key error, and sending it again updates the document the winner inserted.
    `result` is `BulkWriteResult.bulk_api_result` or `BulkWriteError.details`.
    """
    if result is None:
        return BulkOutcome(0, 0, [])
    errors = result.get("writeErrors", [])
    if any(error["code"] != DUPLICATE_KEY for error in errors):
        raise BulkWriteError(dict(result))
    return BulkOutcome(
        inserted=result["nUpserted"],
        updated=result["nMatched"],
        retry=[operations[error["index"]] for error in errors],
    )


def unsettled_races(operations: list[UpdateOne]) -> BulkWriteError:
    """The error for upserts still losing duplicate-key races after MAX_BULK_ATTEMPTS."""
    return BulkWriteError({"writeErrors": [], "nUpserted": 0, "nMatched": 0, "nUnsettled": len(operations)})


def s3_error(error: Exception, bucket: str) -> ScenarioError:
    """The domain error for a failed S3 call."""
    if isinstance(error, ClientError) and error.response.get("Error", {}).get("Code") == "NoSuchBucket":
        return NotFound(f"bucket {bucket!r} does not exist")
    return BackendUnavailable("S3", error)


MAX_PAGE_SIZE = 1000
MAX_PARALLELISM = 64


def effective_page_size(page_size: int) -> int:
    """Objects per ListObjectsPage reply: 0 means MAX_PAGE_SIZE, above it is an error."""
    if page_size > MAX_PAGE_SIZE:
        raise InvalidArgument("page_size", f"{page_size} is above the maximum of {MAX_PAGE_SIZE}")
    return page_size or MAX_PAGE_SIZE


def effective_parallelism(parallelism: int) -> int:
    """Prefixes StreamObjects lists at once: 0 means 1, above MAX_PARALLELISM is an error."""
    if parallelism > MAX_PARALLELISM:
        raise InvalidArgument("parallelism", f"{parallelism} is above the maximum of {MAX_PARALLELISM}")
    return max(parallelism, 1)


class PageTokens:
    """Page tokens a client cannot forge: the last key sent, signed for the bucket and prefix.

    Stateless, so any process of a multi-process server reads the tokens another issued: the key is
    derived from the backend configuration every process shares.
    """

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    @classmethod
    def for_backends(cls, s3_endpoint: str | None, s3_secret_key: str | None) -> PageTokens:
        return cls(hashlib.sha256(f"page-token|{s3_endpoint}|{s3_secret_key}".encode()).digest())

    def _signature(self, bucket: str, prefix: str, last_key: str) -> str:
        message = json.dumps([bucket, prefix, last_key]).encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:32]

    def issue(self, bucket: str, prefix: str, last_key: str) -> str:
        """The token of the page that follows last_key."""
        encoded = base64.urlsafe_b64encode(last_key.encode()).decode()
        return f"{encoded}.{self._signature(bucket, prefix, last_key)}"

    def read(self, token: str, bucket: str, prefix: str) -> str:
        """The last key sent before the page a token asks for ("" for no token: the first page)."""
        if not token:
            return ""
        encoded, _, signature = token.partition(".")
        try:
            last_key = base64.urlsafe_b64decode(encoded.encode()).decode()
        except (ValueError, UnicodeDecodeError):
            last_key = None
        if last_key is None or not hmac.compare_digest(signature, self._signature(bucket, prefix, last_key)):
            raise InvalidArgument("page_token", "not a token this server issued for this bucket and prefix")
        return last_key


def next_page_token(tokens: PageTokens, bucket: str, prefix: str, page: Mapping[str, Any]) -> str:
    """The token for the page after a ListObjectsV2 page, "" after the last."""
    contents = page.get("Contents", ())
    return tokens.issue(bucket, prefix, contents[-1]["Key"]) if page.get("IsTruncated") and contents else ""


def top_level_prefixes(pages: Iterable[Mapping[str, Any]]) -> tuple[list[str], list[Mapping[str, Any]]]:
    """From a listing with delimiter "/": the common prefixes, and the objects directly under the prefix."""
    prefixes: list[str] = []
    direct: list[Mapping[str, Any]] = []
    for page in pages:
        prefixes += [common["Prefix"] for common in page.get("CommonPrefixes", ())]
        direct += page.get("Contents", ())
    return prefixes, direct


def page_request(tokens: PageTokens, bucket: str, prefix: str, page_size: int, page_token: str) -> dict[str, Any]:
    """The ListObjectsV2 arguments of a ListObjectsPage request, validated: the page after the token's key."""
    validate_bucket(bucket)
    size = effective_page_size(page_size)
    start_after = tokens.read(page_token, bucket, prefix)
    request: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": size}
    if start_after:
        request["StartAfter"] = start_after
    return request


class Arrivals:
    """What prefix listers running at once hand over: batches, then each its end (None) or its failure.

    `take` returns a batch to send, or None for an end; a lister's failure is raised in the caller's
    thread or task. `pending` says how many listers have not ended yet.
    """

    def __init__(self, listers: int) -> None:
        self.pending = listers

    def take(self, item: list[bench_pb2.ObjectInfo] | BaseException | None) -> list[bench_pb2.ObjectInfo] | None:
        if item is None:
            self.pending -= 1
            return None
        if isinstance(item, BaseException):
            raise item
        return item
