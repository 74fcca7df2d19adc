import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class HelloRequest(_message.Message):
    __slots__ = ("name", "delay_ms", "work", "reply_bytes", "payload")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    WORK_FIELD_NUMBER: _ClassVar[int]
    REPLY_BYTES_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    name: str
    delay_ms: int
    work: int
    reply_bytes: int
    payload: bytes
    def __init__(self, name: _Optional[str] = ..., delay_ms: _Optional[int] = ..., work: _Optional[int] = ..., reply_bytes: _Optional[int] = ..., payload: _Optional[bytes] = ...) -> None: ...

class HelloReply(_message.Message):
    __slots__ = ("message", "payload")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    message: str
    payload: bytes
    def __init__(self, message: _Optional[str] = ..., payload: _Optional[bytes] = ...) -> None: ...

class ListObjectsRequest(_message.Message):
    __slots__ = ("bucket", "prefix", "batch_size", "parallelism")
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    bucket: str
    prefix: str
    batch_size: int
    parallelism: int
    def __init__(self, bucket: _Optional[str] = ..., prefix: _Optional[str] = ..., batch_size: _Optional[int] = ..., parallelism: _Optional[int] = ...) -> None: ...

class ListObjectsPageRequest(_message.Message):
    __slots__ = ("bucket", "prefix", "page_size", "page_token")
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    bucket: str
    prefix: str
    page_size: int
    page_token: str
    def __init__(self, bucket: _Optional[str] = ..., prefix: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListObjectsPageReply(_message.Message):
    __slots__ = ("objects", "next_page_token")
    OBJECTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    objects: _containers.RepeatedCompositeFieldContainer[ObjectInfo]
    next_page_token: str
    def __init__(self, objects: _Optional[_Iterable[_Union[ObjectInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ObjectInfo(_message.Message):
    __slots__ = ("key", "size", "etag", "last_modified")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    LAST_MODIFIED_FIELD_NUMBER: _ClassVar[int]
    key: str
    size: int
    etag: str
    last_modified: _timestamp_pb2.Timestamp
    def __init__(self, key: _Optional[str] = ..., size: _Optional[int] = ..., etag: _Optional[str] = ..., last_modified: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListObjectsReply(_message.Message):
    __slots__ = ("objects",)
    OBJECTS_FIELD_NUMBER: _ClassVar[int]
    objects: _containers.RepeatedCompositeFieldContainer[ObjectInfo]
    def __init__(self, objects: _Optional[_Iterable[_Union[ObjectInfo, _Mapping]]] = ...) -> None: ...

class ArchiveReply(_message.Message):
    __slots__ = ("listed", "inserted", "updated")
    LISTED_FIELD_NUMBER: _ClassVar[int]
    INSERTED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    listed: int
    inserted: int
    updated: int
    def __init__(self, listed: _Optional[int] = ..., inserted: _Optional[int] = ..., updated: _Optional[int] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("create_request", "cancel_request", "now_request")
    CREATE_REQUEST_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REQUEST_FIELD_NUMBER: _ClassVar[int]
    NOW_REQUEST_FIELD_NUMBER: _ClassVar[int]
    create_request: WatchCreateRequest
    cancel_request: WatchCancelRequest
    now_request: WatchNowRequest
    def __init__(self, create_request: _Optional[_Union[WatchCreateRequest, _Mapping]] = ..., cancel_request: _Optional[_Union[WatchCancelRequest, _Mapping]] = ..., now_request: _Optional[_Union[WatchNowRequest, _Mapping]] = ...) -> None: ...

class WatchCreateRequest(_message.Message):
    __slots__ = ("sensor_id",)
    SENSOR_ID_FIELD_NUMBER: _ClassVar[int]
    sensor_id: str
    def __init__(self, sensor_id: _Optional[str] = ...) -> None: ...

class WatchCancelRequest(_message.Message):
    __slots__ = ("sensor_id",)
    SENSOR_ID_FIELD_NUMBER: _ClassVar[int]
    sensor_id: str
    def __init__(self, sensor_id: _Optional[str] = ...) -> None: ...

class WatchNowRequest(_message.Message):
    __slots__ = ("sensor_id",)
    SENSOR_ID_FIELD_NUMBER: _ClassVar[int]
    sensor_id: str
    def __init__(self, sensor_id: _Optional[str] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("sensor_id", "created", "canceled", "error", "timestamp", "value")
    SENSOR_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    CANCELED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    sensor_id: str
    created: bool
    canceled: bool
    error: str
    timestamp: _timestamp_pb2.Timestamp
    value: int
    def __init__(self, sensor_id: _Optional[str] = ..., created: _Optional[bool] = ..., canceled: _Optional[bool] = ..., error: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., value: _Optional[int] = ...) -> None: ...

class InfoRequest(_message.Message):
    __slots__ = ("name", "age", "height")
    NAME_FIELD_NUMBER: _ClassVar[int]
    AGE_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    name: str
    age: int
    height: int
    def __init__(self, name: _Optional[str] = ..., age: _Optional[int] = ..., height: _Optional[int] = ...) -> None: ...

class InfoReply(_message.Message):
    __slots__ = ("success", "reason")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    success: bool
    reason: str
    def __init__(self, success: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...
