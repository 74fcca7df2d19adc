"""The scenarios on asyncio clients (aioboto3, and motor or PyMongo's AsyncMongoClient): same meaning as sync.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

import aioboto3
from aiobotocore.config import AioConfig
from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import AsyncMongoClient, UpdateOne
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
from scenarios.errors import BackendUnavailable
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


class AsyncScenarios:
    """One aioboto3 S3 client and one async MongoDB client for the process; create with `await open(...)`.
    With s3_client="per-request", every call makes its own session and S3 client and closes it after.

    motor runs the blocking PyMongo driver on a thread pool; AsyncMongoClient is natively async.
    Both share PyMongo's API and errors, so the scenario code is the same for either.
    """

    def __init__(
        self,
        s3: Any,
        mongo: Any,
        config: BackendConfig,
        resources: AsyncExitStack,
        sensors: SensorHub,
        new_s3: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
    ) -> None:
        self._s3 = s3
        self._new_s3 = new_s3  # None: every call uses the process's client
        self._mongo = mongo
        self._archive = mongo[config.mongo_db][ARCHIVE_COLLECTION]
        self._tokens = PageTokens.for_backends(config.s3_endpoint, config.s3_secret_key)
        self._resources = resources
        self._sensors = sensors

    @classmethod
    async def open(
        cls,
        config: BackendConfig,
        pool_size: int,
        mongo_driver: str = "motor",
        sensor_interval_ms: int = DEFAULT_INTERVAL_MS,
        s3_client: S3ClientScope = PER_PROCESS,
    ) -> AsyncScenarios:
        """Create the clients and start the sensors on the running event loop; mongo_driver is "motor" or
        "pymongo"."""
        resources = AsyncExitStack()
        sensors = SensorHub()
        ticker = asyncio.create_task(tick(sensors, interval_seconds(sensor_interval_ms)))
        resources.callback(ticker.cancel)
        s3_options, s3_kwargs = AioConfig(**s3_config_options(config, pool_size)), s3_client_kwargs(config)

        def new_s3() -> AbstractAsyncContextManager[Any]:
            return aioboto3.Session().client("s3", config=s3_options, **s3_kwargs)

        per_request = s3_scope(s3_client) != PER_PROCESS
        s3 = await resources.enter_async_context(new_s3())
        options = mongo_client_options(config, pool_size)
        mongo: Any
        if mongo_driver == "pymongo":
            mongo = AsyncMongoClient(config.mongo_uri, **options)
            resources.push_async_callback(mongo.close)
        elif mongo_driver == "motor":
            mongo = AsyncIOMotorClient(config.mongo_uri, **options)
            resources.callback(mongo.close)
        else:
            raise ValueError(f"unknown MongoDB driver {mongo_driver!r}: motor or pymongo")
        return cls(s3, mongo, config, resources, sensors, new_s3 if per_request else None)

    async def close(self) -> None:
        """Close both clients and their connection pools."""
        await self._resources.aclose()

    async def hello(self, request: bench_pb2.HelloRequest) -> bench_pb2.HelloReply:
        """Greet after `work` units of computation and delay_ms, yielding the event loop while it waits (no I/O,
        no CPU), with reply_bytes of payload."""
        pause, payload = delay_seconds(request.delay_ms), reply_payload(request.reply_bytes)
        compute(work_units(request.work))  # on the loop, as a handler that computes would
        if pause:
            await asyncio.sleep(pause)
        return bench_pb2.HelloReply(message=hello_message(request.name), payload=payload)

    async def list_objects(self, bucket: str, prefix: str) -> list[bench_pb2.ObjectInfo]:
        """Every object under prefix, in key order."""
        return [info async for page in self._pages(bucket, prefix) for info in page_objects(page)]

    async def stream_objects(
        self, bucket: str, prefix: str, batch_size: int, parallelism: int = 1
    ) -> AsyncIterator[list[bench_pb2.ObjectInfo]]:
        """The same objects, in messages of batch_size, sent as the pages arrive; with parallelism N > 1,
        the top-level prefixes listed N at a time in tasks, each batch sent as soon as it is ready."""
        size, parallel = effective_batch_size(batch_size), effective_parallelism(parallelism)
        if parallel == 1:
            async for batch in self._batches(bucket, prefix, size):
                yield batch
            return
        prefixes, direct = top_level_prefixes([page async for page in self._pages(bucket, prefix, "/")])
        batcher = Batcher(size)
        for batch in [*batcher.add(object_info(entry) for entry in direct), *batcher.flush()]:
            yield batch
        ready: asyncio.Queue[list[bench_pb2.ObjectInfo] | BaseException | None] = asyncio.Queue()
        slots = asyncio.Semaphore(parallel)

        async def list_prefix(each: str) -> None:
            try:
                async with slots:
                    async for batch in self._batches(bucket, each, size):
                        ready.put_nowait(batch)
            except Exception as error:  # handed to the caller's task, which raises it
                ready.put_nowait(error)
            finally:
                ready.put_nowait(None)

        tasks = [asyncio.create_task(list_prefix(each)) for each in prefixes]
        arrivals = Arrivals(len(tasks))
        try:
            while arrivals.pending:
                arrived = arrivals.take(await ready.get())
                if arrived is not None:
                    yield arrived
        finally:
            for task in tasks:
                task.cancel()

    async def list_objects_page(
        self, bucket: str, prefix: str, page_size: int, page_token: str
    ) -> tuple[list[bench_pb2.ObjectInfo], str]:
        """One page of at most page_size objects after the token's position, and the next page's token."""
        request = page_request(self._tokens, bucket, prefix, page_size, page_token)
        try:
            async with self._s3_client() as s3:
                page = await s3.list_objects_v2(**request)
        except S3_ERRORS as error:
            raise s3_error(error, bucket) from error
        return page_objects(page), next_page_token(self._tokens, bucket, prefix, page)

    async def watch(self, requests: AsyncIterator[bench_pb2.WatchRequest]) -> AsyncIterator[bench_pb2.WatchResponse]:
        """A Watch stream: answers and readings, until the client closes its side."""
        outbox: asyncio.Queue[bench_pb2.WatchResponse | None] = asyncio.Queue()
        session = WatchSession(self._sensors, outbox.put_nowait)

        async def read() -> None:
            try:
                async for request in requests:
                    session.handle(request)
            finally:
                outbox.put_nowait(None)

        reader = asyncio.create_task(read())
        try:
            while (item := await outbox.get()) is not None:
                yield item
            await reader  # a broken stream raises here
        finally:
            reader.cancel()
            session.close()

    async def _batches(self, bucket: str, prefix: str, size: int) -> AsyncIterator[list[bench_pb2.ObjectInfo]]:
        batcher = Batcher(size)
        async for page in self._pages(bucket, prefix):
            for batch in batcher.add(page_objects(page)):
                yield batch
        for batch in batcher.flush():
            yield batch

    async def archive_objects(self, bucket: str, prefix: str) -> ArchiveCounts:
        """List the objects and upsert one document per object in one unordered bulk write."""
        entries = [entry async for page in self._pages(bucket, prefix) for entry in page.get("Contents", ())]
        try:
            inserted, updated = await self._upsert(archive_operations(bucket, entries))
        except PyMongoError as error:
            raise BackendUnavailable("MongoDB", error) from error
        return ArchiveCounts(listed=len(entries), inserted=inserted, updated=updated)

    async def _upsert(self, operations: list[UpdateOne]) -> tuple[int, int]:
        inserted = updated = 0
        for _ in range(MAX_BULK_ATTEMPTS):
            if not operations:
                return inserted, updated
            result: Mapping[str, Any]
            try:
                result = (await self._archive.bulk_write(operations, ordered=False)).bulk_api_result
            except BulkWriteError as error:
                result = error.details
            outcome = bulk_outcome(operations, result)
            inserted, updated = inserted + outcome.inserted, updated + outcome.updated
            operations = outcome.retry
        raise unsettled_races(operations)

    async def _pages(self, bucket: str, prefix: str, delimiter: str = "") -> AsyncIterator[Mapping[str, Any]]:
        validate_bucket(bucket)
        extra = {"Delimiter": delimiter} if delimiter else {}
        try:
            async with self._s3_client() as s3:
                async for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix, **extra):
                    yield page
        except S3_ERRORS as error:
            raise s3_error(error, bucket) from error

    @asynccontextmanager
    async def _s3_client(self) -> AsyncIterator[Any]:
        """The process's S3 client, or a new session's client for this call, closed when the call is done."""
        if self._new_s3 is None:
            yield self._s3
            return
        async with self._new_s3() as client:
            yield client


async def tick(sensors: SensorHub, interval: float) -> None:
    """One reading of every watched sensor per interval, on the interval's grid (no drift), until cancelled."""
    loop = asyncio.get_running_loop()
    due = loop.time() + interval
    while True:
        await asyncio.sleep(max(0.0, due - loop.time()))
        sensors.tick()
        due += interval
