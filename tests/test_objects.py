"""The scenarios' pure logic: validation, batching, archive documents and bulk-write counting."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from pymongo.errors import BulkWriteError

from protos.bench.v1 import bench_pb2
from scenarios.errors import BackendUnavailable, InvalidArgument, NotFound
from scenarios.objects import (
    MAX_WORK,
    Batcher,
    archive_operations,
    bulk_outcome,
    compute,
    effective_batch_size,
    object_info,
    s3_error,
    validate_bucket,
    work_units,
)

ENTRY: dict[str, Any] = {
    "Key": "a/b",
    "Size": 7,
    "ETag": '"abc"',
    "LastModified": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
}


@pytest.mark.parametrize("bucket", ["bench", "my.bucket-1", "a1b", "x" * 63])
def test_valid_bucket_names(bucket: str) -> None:
    validate_bucket(bucket)


@pytest.mark.parametrize(
    ("bucket", "reason"),
    [
        ("", "must not be empty"),
        ("ab", "not a valid S3 bucket name"),
        ("x" * 64, "not a valid S3 bucket name"),
        ("Upper", "not a valid S3 bucket name"),
        ("-dash", "not a valid S3 bucket name"),
        ("under_score", "not a valid S3 bucket name"),
        ("a..b", "contains '..'"),
        ("10.0.0.1", "an IP address"),
    ],
)
def test_invalid_bucket_names(bucket: str, reason: str) -> None:
    with pytest.raises(InvalidArgument) as raised:
        validate_bucket(bucket)
    assert raised.value.field == "bucket"
    assert reason in str(raised.value)


@pytest.mark.parametrize(("asked", "used"), [(0, 1), (1, 1), (10, 10), (1000, 1000)])
def test_batch_size(asked: int, used: int) -> None:
    assert effective_batch_size(asked) == used


def test_batch_size_above_maximum() -> None:
    with pytest.raises(InvalidArgument, match="batch_size: 1001 is above the maximum of 1000"):
        effective_batch_size(1001)


def test_object_info_from_listing_entry() -> None:
    info = object_info(ENTRY)
    assert (info.key, info.size, info.etag) == ("a/b", 7, "abc")
    assert info.last_modified.ToDatetime(tzinfo=UTC) == ENTRY["LastModified"]


def infos(*keys: str) -> list[bench_pb2.ObjectInfo]:
    return [bench_pb2.ObjectInfo(key=key) for key in keys]


def test_batcher_groups_across_pages_and_flushes_the_rest() -> None:
    batcher = Batcher(2)
    assert [[i.key for i in b] for b in batcher.add(infos("a", "b", "c"))] == [["a", "b"]]
    assert [[i.key for i in b] for b in batcher.add(infos("d", "e"))] == [["c", "d"]]
    assert [[i.key for i in b] for b in batcher.flush()] == [["e"]]
    assert batcher.flush() == []


def test_archive_operations_are_keyed_upserts() -> None:
    (operation,) = archive_operations("bench", [ENTRY])
    assert isinstance(operation._doc, dict)
    document = operation._doc["$set"]
    assert operation._filter == {"_id": "bench/a/b"}
    assert operation._upsert is True
    assert document == {
        "bucket": "bench",
        "key": "a/b",
        "size": 7,
        "etag": "abc",
        "last_modified": ENTRY["LastModified"],
    }


def test_bulk_outcome_counts_and_retries_lost_races() -> None:
    operations = archive_operations("bench", [ENTRY, {**ENTRY, "Key": "c"}, {**ENTRY, "Key": "d"}])
    details = {"nUpserted": 1, "nMatched": 1, "writeErrors": [{"index": 2, "code": 11000, "errmsg": "dup"}]}
    outcome = bulk_outcome(operations, details)
    assert (outcome.inserted, outcome.updated) == (1, 1)
    assert outcome.retry == [operations[2]]


def test_bulk_outcome_raises_on_other_write_errors() -> None:
    details = {"nUpserted": 0, "nMatched": 0, "writeErrors": [{"index": 0, "code": 121, "errmsg": "invalid"}]}
    with pytest.raises(BulkWriteError):
        bulk_outcome(archive_operations("bench", [ENTRY]), details)


def test_s3_errors_map_to_domain_errors() -> None:
    missing = ClientError({"Error": {"Code": "NoSuchBucket", "Message": "nope"}}, "ListObjectsV2")
    assert isinstance(s3_error(missing, "b1"), NotFound)
    assert "'b1'" in str(s3_error(missing, "b1"))
    denied = ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "ListObjectsV2")
    for error in (denied, EndpointConnectionError(endpoint_url="http://x")):
        mapped = s3_error(error, "b1")
        assert isinstance(mapped, BackendUnavailable)
        assert mapped.backend == "S3"
        assert str(mapped).startswith("S3 is unavailable")


def test_work_is_the_same_computation_for_the_same_units_and_has_a_maximum() -> None:
    assert compute(0) == 0 and compute(2) == compute(2) > compute(1) > 0
    assert work_units(MAX_WORK) == MAX_WORK
    with pytest.raises(InvalidArgument, match="work: 1001 is above the maximum of 1000"):
        work_units(MAX_WORK + 1)
