"""The scenarios on blocking clients (boto3 and pymongo), for thread-pool servers."""

from __future__ import annotations

import time
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


class SyncScenarios:
    """One S3 client and one MongoDB client for the process, safe to share between threads."""

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

    def hello(self, name: str, delay_ms: int = 0) -> str:
        """Greet after delay_ms, sleeping on this worker thread (no I/O, no CPU)."""
        pause = delay_seconds(delay_ms)
        if pause:
            time.sleep(pause)
        return hello_message(name)

    def list_objects(self, bucket: str, prefix: str) -> list[bench_pb2.ObjectInfo]:
        """Every object under prefix, in key order."""
        return [info for page in self._pages(bucket, prefix) for info in page_objects(page)]

    def stream_objects(self, bucket: str, prefix: str, batch_size: int) -> Iterator[list[bench_pb2.ObjectInfo]]:
        """The same objects, in messages of batch_size, sent as the pages arrive."""
        batcher = Batcher(effective_batch_size(batch_size))
        for page in self._pages(bucket, prefix):
            yield from batcher.add(page_objects(page))
        yield from batcher.flush()

    def archive_objects(self, bucket: str, prefix: str) -> ArchiveCounts:
        """List the objects and upsert one document per object in one unordered bulk write."""
        entries = [entry for page in self._pages(bucket, prefix) for entry in page.get("Contents", ())]
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

    def _pages(self, bucket: str, prefix: str) -> Iterator[Mapping[str, Any]]:
        validate_bucket(bucket)
        try:
            yield from self._s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        except S3_ERRORS as error:
            raise s3_error(error, bucket) from error
