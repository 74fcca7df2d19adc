import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class HelloRequest(_message.Message):
    __slots__ = ("name", "delay_ms")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    name: str
    delay_ms: int
    def __init__(self, name: _Optional[str] = ..., delay_ms: _Optional[int] = ...) -> None: ...

class HelloReply(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: str
    def __init__(self, message: _Optional[str] = ...) -> None: ...

class ListObjectsRequest(_message.Message):
    __slots__ = ("bucket", "prefix", "batch_size")
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    bucket: str
    prefix: str
    batch_size: int
    def __init__(self, bucket: _Optional[str] = ..., prefix: _Optional[str] = ..., batch_size: _Optional[int] = ...) -> None: ...

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
