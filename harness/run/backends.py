"""The S3 and MongoDB servers the project starts itself, or the real ones named in the environment.

Each embedded backend is a context manager: a free port, a real readiness check, a clean stop.
Tests and the harness share them.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import tempfile
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import boto3
import pymongo
from botocore.config import Config
from botocore.exceptions import ClientError

from harness.plan.matrix import BENCH_BUCKET, BENCH_OBJECTS
from harness.run.processes import Child, free_port, managed_process, tcp_ready
from harness.run.tools import (
    MONGO_JAVA_SERVER_VERSION,
    MONGO_LAUNCHER,
    VERSITYGW,
    ensure_go_tool,
    java,
    mongo_jars,
)
from scenarios.clients import s3_client_kwargs, s3_config_options
from scenarios.config import CONNECT_TIMEOUT_VARIABLE, READ_TIMEOUT_VARIABLE, BackendConfig

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Backends:
    """Where the servers under test find S3 and MongoDB, and what kind of server each is."""

    config: BackendConfig
    s3_kind: str
    mongo_kind: str
    children: tuple[Child, ...] = field(default=(), repr=False, compare=False)

    def env(self) -> dict[str, str]:
        """The environment variables a server reads its backends from."""
        return backend_env(self.config)

    def describe(self) -> dict[str, str]:
        """Kinds and endpoints, never credentials: for run metadata."""
        return {
            "s3": self.s3_kind,
            "s3_endpoint": self.config.s3_endpoint or "AWS",
            "mongo": self.mongo_kind,
            "mongo_uri": _without_credentials(self.config.mongo_uri),
        }


def backend_env(config: BackendConfig) -> dict[str, str]:
    """The environment variables a server reads config from."""
    values = {
        "AWS_ENDPOINT_URL": config.s3_endpoint,
        "AWS_DEFAULT_REGION": config.s3_region,
        "AWS_ACCESS_KEY_ID": config.s3_access_key,
        "AWS_SECRET_ACCESS_KEY": config.s3_secret_key,
        "MONGO_URI": config.mongo_uri,
        "MONGO_DB": config.mongo_db,
        CONNECT_TIMEOUT_VARIABLE: f"{config.connect_timeout:g}",
        READ_TIMEOUT_VARIABLE: f"{config.read_timeout:g}",
    }
    return {name: value for name, value in values.items() if value}


def _without_credentials(uri: str) -> str:
    scheme, sep, rest = uri.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}"


@dataclass(frozen=True)
class VersityGW:
    """A running versitygw: its endpoint, credentials and the directory it serves."""

    endpoint: str
    access_key: str
    secret_key: str
    data_dir: Path
    child: Child

    @property
    def credentials(self) -> tuple[str, str]:
        return self.access_key, self.secret_key

    def config(self, base: BackendConfig) -> BackendConfig:
        """base, with S3 pointed at this gateway."""
        return replace(base, s3_endpoint=self.endpoint, s3_access_key=self.access_key, s3_secret_key=self.secret_key)


@contextmanager
def versitygw(
    data_dir: Path | None = None,
    port: int | None = None,
    credentials: tuple[str, str] | None = None,
) -> Iterator[VersityGW]:
    """versitygw's posix backend on data_dir (a temporary directory by default) at 127.0.0.1:port.

    Credentials are generated unless given (a restart on the same data keeps the same ones). It keeps
    connections open between requests, as S3 does (versitygw closes each after one response unless told).
    """
    binary = ensure_go_tool(VERSITYGW)
    port = port or free_port()
    access_key, secret_key = credentials or ("bench" + secrets.token_hex(4), secrets.token_hex(16))
    with ExitStack() as stack:
        if data_dir is None:
            data_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="versitygw-")))
        env = {**os.environ, "ROOT_ACCESS_KEY": access_key, "ROOT_SECRET_KEY": secret_key}
        argv = [str(binary), "--quiet", "--keep-alive", "--port", f"{HOST}:{port}", "posix", str(data_dir)]
        child = stack.enter_context(managed_process("versitygw", argv, env=env, ready=tcp_ready(HOST, port)))
        yield VersityGW(f"http://{HOST}:{port}", access_key, secret_key, data_dir, child)


def mongo_ready(uri: str) -> bool:
    """True once a MongoDB server at uri answers a ping."""
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(uri, serverSelectionTimeoutMS=500)
    try:
        client.admin.command("ping")
        return True
    except pymongo.errors.PyMongoError:
        return False
    finally:
        client.close()


@contextmanager
def mongo_java_server(port: int | None = None) -> Iterator[tuple[str, Child]]:
    """mongo-java-server's in-memory backend at 127.0.0.1:port, reporting MongoDB 6.0; yields its URI."""
    classpath = os.pathsep.join(str(jar) for jar in mongo_jars())
    port = port or free_port()
    uri = f"mongodb://{HOST}:{port}"
    argv = [
        java(),
        "-Xmx512m",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp",
        classpath,
        str(MONGO_LAUNCHER),
        str(port),
        HOST,
    ]
    with managed_process("mongo-java-server", argv, ready=lambda pid: mongo_ready(uri)) as child:
        yield uri, child


@contextmanager
def start_backends(env: Mapping[str, str] = os.environ) -> Iterator[Backends]:
    """The backends named by AWS_ENDPOINT_URL and MONGO_URI, or embedded ones for those not named."""
    config = BackendConfig.from_env(env)
    with ExitStack() as stack:
        children: list[Child] = []
        s3_kind = mongo_kind = "external"
        if not config.s3_endpoint:
            gateway = stack.enter_context(versitygw())
            children.append(gateway.child)
            s3_kind = f"versitygw {VERSITYGW.version} (posix)"
            config = gateway.config(config)
        if not env.get("MONGO_URI"):
            uri, child = stack.enter_context(mongo_java_server())
            children.append(child)
            mongo_kind = f"mongo-java-server {MONGO_JAVA_SERVER_VERSION} (in memory)"
            config = replace(config, mongo_uri=uri)
        yield Backends(config, s3_kind, mongo_kind, tuple(children))


FILLER_FOLDER = "k" * 199 + "/"  # a long key's folders (long_key)


def seed_body(index: int) -> bytes:
    """The deterministic content of seeded object number index (sizes 1 to 4096 bytes)."""
    return (hashlib.sha256(str(index).encode()).digest() * 128)[: (index * 997) % 4096 + 1]


def seed_objects(count: int, prefixes: int = 0, key_bytes: int = 0) -> dict[str, bytes]:
    """Key -> body of a seeded bucket of count objects, keys in S3's (lexicographic) order; with prefixes N,
    spread over N top-level prefixes (`p0/` ...), as a listing by prefix sees them; with key_bytes, each key that
    long (`long_key`)."""
    if prefixes:
        keys = {f"p{index % prefixes}/obj-{index:05d}": index for index in range(count)}
    else:
        keys = {f"obj-{index:05d}": index for index in range(count)}
    return {long_key(key, key_bytes): seed_body(index) for key, index in keys.items()}


def long_key(key: str, length: int) -> str:
    """key made `length` bytes long (itself where it is that long already) by filler before it: folders of 200
    bytes, as a file system holds a name to 255, then what is left; the same filler for every key, so the order holds
    (and a key's top-level prefix becomes the filler's)."""
    folders, rest = divmod(max(0, length - len(key)), len(FILLER_FOLDER))
    return FILLER_FOLDER * folders + FILLER_FOLDER[:rest] + key


def expected_etag(body: bytes) -> str:
    """S3's entity tag of a single-part upload, without quotes."""
    return hashlib.md5(body).hexdigest()


def s3_client(config: BackendConfig, pool_size: int = 16) -> Any:
    """A boto3 S3 client for the harness's own use (seeding, checks)."""
    return boto3.session.Session().client(
        "s3",
        config=Config(**s3_config_options(config, pool_size)),
        **s3_client_kwargs(config),
    )


def seed_bucket(
    config: BackendConfig,
    bucket: str = BENCH_BUCKET,
    count: int = BENCH_OBJECTS,
    prefixes: int = 0,
    key_bytes: int = 0,
) -> int:
    """Create bucket with objects obj-00000.. obj-<count-1> (under `prefixes` top-level prefixes if given, each key
    key_bytes long if given: seed_objects), idempotently; returns how many were written."""
    client = s3_client(config)
    try:
        try:
            client.create_bucket(Bucket=bucket)
        except ClientError as error:
            if error.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise
        existing = {
            entry["Key"]
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for entry in page.get("Contents", ())
        }
        missing = {key: body for key, body in seed_objects(count, prefixes, key_bytes).items() if key not in existing}

        def put(key: str) -> None:
            client.put_object(Bucket=bucket, Key=key, Body=missing[key])

        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(put, missing))  # list() re-raises the first failed upload
        return len(missing)
    finally:
        client.close()
