"""The scenarios on blocking clients (boto3 and pymongo), for thread-pool servers."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import boto3
import pymongo
from botocore.config import Config
from pymongo import UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError

from protos.bench.v1 import bench_pb2
from scenarios.clients import (
    PER_PROCESS,
    S3ClientScope,
    mongo_client_options,
    s3_client_kwargs,
    s3_config_options,
    s3_scope,
)
from scenarios.config import BackendConfig
from scenarios.errors import BackendUnavailable, Cancelled
from scenarios.objects import (
    ARCHIVE_COLLECTION,
    MAX_BULK_ATTEMPTS,
    S3_ERRORS,
    ArchiveCounts,
    Arrivals,
    Batcher,
    PageTokens,
    archive_operations,
    bulk_outcome,
    compute,
    delay_seconds,
    effective_batch_size,
    effective_parallelism,
    hello_message,
    next_page_token,
    object_info,
    page_objects,
    page_request,
    reply_payload,
    s3_error,
    top_level_prefixes,
    unsettled_races,
    validate_bucket,
    work_units,
)
from scenarios.sensors import DEFAULT_INTERVAL_MS, SensorHub, WatchSession, interval_seconds

NEVER = threading.Event()  # the default `stopped`: never set, for callers that always wait


class SyncScenarios:
    """One S3 client and one MongoDB client for the process, safe to share between threads (or, with
    s3_client="per-request", a new boto3 session and S3 client for every call, as the 2020 study's handlers made).

    Each call takes `stopped`, an event the server sets when the caller stops waiting (its deadline
    passed or it cancelled): a wait ends at once and no further S3 page is requested, with Cancelled.
    A thread cannot be interrupted, so the work checks; event-loop servers cancel their tasks instead.
    """

    def __init__(
        self,
        config: BackendConfig,
        pool_size: int,
        sensor_interval_ms: int = DEFAULT_INTERVAL_MS,
        s3_client: S3ClientScope = PER_PROCESS,
    ) -> None:
        self._s3_options = Config(**s3_config_options(config, pool_size)), s3_client_kwargs(config)
        self._s3_per_request = s3_scope(s3_client) != PER_PROCESS
        self._s3 = self._new_s3()
        self._mongo: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
            config.mongo_uri, **mongo_client_options(config, pool_size)
        )
        self._archive = self._mongo[config.mongo_db][ARCHIVE_COLLECTION]
        self._tokens = PageTokens.for_backends(config.s3_endpoint, config.s3_secret_key)
        self._sensors = SensorHub()
        self._closed = threading.Event()
        self._ticker = threading.Thread(
            target=self._tick, args=(interval_seconds(sensor_interval_ms),), name="sensor-ticker", daemon=True
        )
        self._ticker.start()

    def close(self) -> None:
        """Stop the sensors; close both clients and their connection pools."""
        self._closed.set()
        self._ticker.join()
        self._s3.close()
        self._mongo.close()

    def _new_s3(self) -> Any:
        options, kwargs = self._s3_options
        return boto3.session.Session().client("s3", config=options, **kwargs)

    @contextmanager
    def _s3_client(self) -> Iterator[Any]:
        """The process's S3 client, or a new session's client for this call, closed when the call is done."""
        if not self._s3_per_request:
            yield self._s3
            return
        client = self._new_s3()
        try:
            yield client
        finally:
            client.close()

    def _tick(self, interval: float) -> None:
        """One reading of every watched sensor per interval, on the interval's grid (no drift)."""
        due = time.monotonic() + interval
        while not self._closed.wait(max(0.0, due - time.monotonic())):
            self._sensors.tick()
            due += interval

    def watch(
        self, requests: Iterator[bench_pb2.WatchRequest], stopped: threading.Event = NEVER
    ) -> Iterator[bench_pb2.WatchResponse]:
        """A Watch stream: answers and readings, until the client closes its side (or stops waiting).

        grpcio's sync API hands the requests as a blocking iterator, so a thread of the stream's own
        reads them while this worker sends what the session and the hub put in the outbox.
        """
        outbox: queue.Queue[bench_pb2.WatchResponse | None] = queue.Queue()
        session = WatchSession(self._sensors, outbox.put)

        def read() -> None:
            try:
                for request in requests:
                    session.handle(request)
            except Exception:  # the stream broke (the client went away): the sending side ends too
                pass
            finally:
                outbox.put(None)

        threading.Thread(target=read, name="watch-reader", daemon=True).start()
        try:
            while True:
                try:
                    item = outbox.get(timeout=0.1)
                except queue.Empty:
                    if stopped.is_set():
                        raise Cancelled("the caller went away") from None
                    continue
                if item is None:
                    return
                yield item
        finally:
            session.close()

    def hello(self, request: bench_pb2.HelloRequest, stopped: threading.Event = NEVER) -> bench_pb2.HelloReply:
        """Greet after `work` units of computation and delay_ms, waiting on this worker thread (no I/O, no CPU)
        unless the caller stops first, with reply_bytes of payload."""
        pause, payload = delay_seconds(request.delay_ms), reply_payload(request.reply_bytes)
        compute(work_units(request.work))
        if pause and stopped.wait(pause):
            raise Cancelled("the caller stopped waiting")
        return bench_pb2.HelloReply(message=hello_message(request.name), payload=payload)

    def list_objects(self, bucket: str, prefix: str, stopped: threading.Event = NEVER) -> list[bench_pb2.ObjectInfo]:
        """Every object under prefix, in key order."""
        return [info for page in self._pages(bucket, prefix, stopped) for info in page_objects(page)]

    def stream_objects(
        self, bucket: str, prefix: str, batch_size: int, stopped: threading.Event = NEVER, parallelism: int = 1
    ) -> Iterator[list[bench_pb2.ObjectInfo]]:
        """The same objects, in messages of batch_size, sent as the pages arrive; with parallelism N > 1,
        the top-level prefixes listed N at a time on threads, each batch sent as soon as it is ready."""
        size, parallel = effective_batch_size(batch_size), effective_parallelism(parallelism)
        if parallel == 1:
            yield from self._batches(bucket, prefix, size, stopped)
            return
        prefixes, direct = top_level_prefixes(self._pages(bucket, prefix, stopped, delimiter="/"))
        batcher = Batcher(size)
        yield from batcher.add(object_info(entry) for entry in direct)
        yield from batcher.flush()
        halt = threading.Event()  # set when the caller stops or this generator is closed: no further page
        ready: queue.Queue[list[bench_pb2.ObjectInfo] | BaseException | None] = queue.Queue()

        def list_prefix(each: str) -> None:
            try:
                for batch in self._batches(bucket, each, size, halt):
                    ready.put(batch)
            except BaseException as error:  # handed to the caller's thread, which raises it
                ready.put(error)
            finally:
                ready.put(None)

        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="list-prefix") as pool:
            try:
                for each in prefixes:
                    pool.submit(list_prefix, each)
                arrivals = Arrivals(len(prefixes))
                while arrivals.pending:
                    try:
                        batch = arrivals.take(ready.get(timeout=0.1))
                    except queue.Empty:
                        if stopped.is_set():
                            raise Cancelled("the caller stopped waiting; no further page requested") from None
                        continue
                    if batch is not None:
                        yield batch
            finally:
                halt.set()

    def list_objects_page(
        self, bucket: str, prefix: str, page_size: int, page_token: str
    ) -> tuple[list[bench_pb2.ObjectInfo], str]:
        """One page of at most page_size objects after the token's position, and the next page's token."""
        request = page_request(self._tokens, bucket, prefix, page_size, page_token)
        try:
            with self._s3_client() as s3:
                page = s3.list_objects_v2(**request)
        except S3_ERRORS as error:
            raise s3_error(error, bucket) from error
        return page_objects(page), next_page_token(self._tokens, bucket, prefix, page)

    def _batches(
        self, bucket: str, prefix: str, size: int, stopped: threading.Event
    ) -> Iterator[list[bench_pb2.ObjectInfo]]:
        batcher = Batcher(size)
        for page in self._pages(bucket, prefix, stopped):
            yield from batcher.add(page_objects(page))
        yield from batcher.flush()

    def archive_objects(self, bucket: str, prefix: str, stopped: threading.Event = NEVER) -> ArchiveCounts:
        """List the objects and upsert one document per object in one unordered bulk write."""
        entries = [entry for page in self._pages(bucket, prefix, stopped) for entry in page.get("Contents", ())]
        try:
            inserted, updated = self._upsert(archive_operations(bucket, entries))
        except PyMongoError as error:
            raise BackendUnavailable("MongoDB", error) from error
        return ArchiveCounts(listed=len(entries), inserted=inserted, updated=updated)

    def _upsert(self, operations: list[UpdateOne]) -> tuple[int, int]:
        inserted = updated = 0
        for _ in range(MAX_BULK_ATTEMPTS):
            if not operations:
                return inserted, updated
            result: Mapping[str, Any]
            try:
                result = self._archive.bulk_write(operations, ordered=False).bulk_api_result
            except BulkWriteError as error:
                result = error.details
            outcome = bulk_outcome(operations, result)
            inserted, updated = inserted + outcome.inserted, updated + outcome.updated
            operations = outcome.retry
        raise unsettled_races(operations)

    def _pages(
        self, bucket: str, prefix: str, stopped: threading.Event, delimiter: str = ""
    ) -> Iterator[Mapping[str, Any]]:
        """The listing's pages, each requested only while the caller still waits."""
        validate_bucket(bucket)
        extra: dict[str, Any] = {"Delimiter": delimiter} if delimiter else {}
        with self._s3_client() as s3:
            pages = iter(s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix, **extra))
            while not stopped.is_set():
                try:
                    page = next(pages)
                except StopIteration:
                    return
                except S3_ERRORS as error:
                    raise s3_error(error, bucket) from error
                yield page
        raise Cancelled("the caller stopped waiting; no further page requested")
