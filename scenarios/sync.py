"""The scenarios on blocking clients (boto3 and pymongo), for thread-pool servers."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import boto3
import pymongo
from botocore.config import Config
from pymongo import UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError

from protos.bench.v1 import bench_pb2
from scenarios.clients import mongo_client_options, s3_client_kwargs, s3_config_options
from scenarios.config import BackendConfig
from scenarios.errors import BackendUnavailable, Cancelled
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

NEVER = threading.Event()  # the default `stopped`: never set, for callers that always wait


class SyncScenarios:
    """One S3 client and one MongoDB client for the process, safe to share between threads.

    Each call takes `stopped`, an event the server sets when the caller stops waiting (its deadline
    passed or it cancelled): a wait ends at once and no further S3 page is requested, with Cancelled.
    A thread cannot be interrupted, so the work checks; event-loop servers cancel their tasks instead.
    """

    def __init__(self, config: BackendConfig, pool_size: int) -> None:
        self._s3 = boto3.session.Session().client(
            "s3", config=Config(**s3_config_options(config, pool_size)), **s3_client_kwargs(config)
        )
        self._mongo: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
            config.mongo_uri, **mongo_client_options(config, pool_size)
        )
        self._archive = self._mongo[config.mongo_db][ARCHIVE_COLLECTION]

    def close(self) -> None:
        """Close both clients and their connection pools."""
        self._s3.close()
        self._mongo.close()

    def hello(self, name: str, delay_ms: int = 0, stopped: threading.Event = NEVER) -> str:
        """Greet after delay_ms, waiting on this worker thread (no I/O, no CPU) unless the caller stops first."""
        pause = delay_seconds(delay_ms)
        if pause and stopped.wait(pause):
            raise Cancelled("the caller stopped waiting")
        return hello_message(name)

    def list_objects(self, bucket: str, prefix: str, stopped: threading.Event = NEVER) -> list[bench_pb2.ObjectInfo]:
        """Every object under prefix, in key order."""
        return [info for page in self._pages(bucket, prefix, stopped) for info in page_objects(page)]

    def stream_objects(
        self, bucket: str, prefix: str, batch_size: int, stopped: threading.Event = NEVER
    ) -> Iterator[list[bench_pb2.ObjectInfo]]:
        """The same objects, in messages of batch_size, sent as the pages arrive."""
        batcher = Batcher(effective_batch_size(batch_size))
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

    def _pages(self, bucket: str, prefix: str, stopped: threading.Event) -> Iterator[Mapping[str, Any]]:
        """The listing's pages, each requested only while the caller still waits."""
        validate_bucket(bucket)
        pages = iter(self._s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix))
        while not stopped.is_set():
            try:
                page = next(pages)
            except StopIteration:
                return
            except S3_ERRORS as error:
                raise s3_error(error, bucket) from error
            yield page
        raise Cancelled("the caller stopped waiting; no further page requested")
