"""The scenarios on asyncio clients (aioboto3, and motor or PyMongo's AsyncMongoClient): same meaning as sync.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from typing import Any

import aioboto3
from aiobotocore.config import AioConfig
from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import AsyncMongoClient, UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError

from protos.bench.v1 import bench_pb2
from scenarios.clients import mongo_client_options, s3_client_kwargs, s3_config_options
from scenarios.config import BackendConfig
from scenarios.errors import BackendUnavailable
from scenarios.objects import (
    ARCHIVE_COLLECTION,
    MAX_BULK_ATTEMPTS,
    S3_ERRORS,
    ArchiveCounts,
    Batcher,
    archive_operations,
    bulk_outcome,
    delay_seconds,
    effective_batch_size,
    hello_message,
    page_objects,
    s3_error,
    unsettled_races,
    validate_bucket,
)


class AsyncScenarios:
    """One aioboto3 S3 client and one async MongoDB client for the process; create with `await open(...)`.

    motor runs the blocking PyMongo driver on a thread pool; AsyncMongoClient is natively async.
    Both share PyMongo's API and errors, so the scenario code is the same for either.
    """

    def __init__(self, s3: Any, mongo: Any, mongo_db: str, resources: AsyncExitStack) -> None:
        self._s3 = s3
        self._mongo = mongo
        self._archive = mongo[mongo_db][ARCHIVE_COLLECTION]
        self._resources = resources

    @classmethod
    async def open(cls, config: BackendConfig, pool_size: int, mongo_driver: str = "motor") -> AsyncScenarios:
        """Create the clients on the running event loop; mongo_driver is "motor" or "pymongo"."""
        resources = AsyncExitStack()
        s3 = await resources.enter_async_context(
            aioboto3.Session().client(
                "s3", config=AioConfig(**s3_config_options(config, pool_size)), **s3_client_kwargs(config)
            )
        )
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
        return cls(s3, mongo, config.mongo_db, resources)

    async def close(self) -> None:
        """Close both clients and their connection pools."""
        await self._resources.aclose()

    async def hello(self, name: str, delay_ms: int = 0) -> str:
        """Greet after delay_ms, yielding the event loop meanwhile (no I/O, no CPU)."""
        pause = delay_seconds(delay_ms)
        if pause:
            await asyncio.sleep(pause)
        return hello_message(name)

    async def list_objects(self, bucket: str, prefix: str) -> list[bench_pb2.ObjectInfo]:
        """Every object under prefix, in key order."""
        return [info async for page in self._pages(bucket, prefix) for info in page_objects(page)]

    async def stream_objects(
        self, bucket: str, prefix: str, batch_size: int
    ) -> AsyncIterator[list[bench_pb2.ObjectInfo]]:
        """The same objects, in messages of batch_size, sent as the pages arrive."""
        batcher = Batcher(effective_batch_size(batch_size))
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

    async def _pages(self, bucket: str, prefix: str) -> AsyncIterator[Mapping[str, Any]]:
        validate_bucket(bucket)
        try:
            async for page in self._s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
                yield page
        except S3_ERRORS as error:
            raise s3_error(error, bucket) from error
