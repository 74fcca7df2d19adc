"""Client settings shared by the sync and async drivers, so both stacks talk to the backends alike."""

from __future__ import annotations

from typing import Any, Final, Literal

from scenarios.config import BackendConfig

# A call that cannot reach S3 after this many attempts is reported UNAVAILABLE.
S3_MAX_ATTEMPTS = 2
# Who holds the S3 client: the process (made once, its connections pooled), or each request (a new session
# and client per call, closed after it, as the 2020 study's handlers did).
PER_PROCESS: Final = "per-process"
S3_CLIENT_SCOPES = (PER_PROCESS, "per-request")
S3ClientScope = Literal["per-process", "per-request"]


def s3_scope(scope: str) -> str:
    """scope itself, or ValueError naming the choices."""
    if scope not in S3_CLIENT_SCOPES:
        raise ValueError(f"S3 client scope must be one of {', '.join(S3_CLIENT_SCOPES)}, got {scope!r}")
    return scope


def s3_client_kwargs(config: BackendConfig) -> dict[str, Any]:
    """Endpoint, region and credentials for an S3 client; None values fall back to AWS defaults."""
    return {
        "endpoint_url": config.s3_endpoint,
        "region_name": config.s3_region,
        "aws_access_key_id": config.s3_access_key,
        "aws_secret_access_key": config.s3_secret_key,
    }


def s3_config_options(config: BackendConfig, pool_size: int) -> dict[str, Any]:
    """Keyword arguments for botocore's Config (or aiobotocore's AioConfig)."""
    options: dict[str, Any] = {
        "max_pool_connections": pool_size,
        "connect_timeout": config.connect_timeout,
        "read_timeout": config.read_timeout,
        "retries": {"mode": "standard", "total_max_attempts": S3_MAX_ATTEMPTS},
    }
    if config.s3_endpoint:
        # S3-compatible servers on an address, not a DNS name, need path-style URLs.
        options["s3"] = {"addressing_style": "path"}
    return options


def mongo_client_options(config: BackendConfig, pool_size: int) -> dict[str, Any]:
    """Keyword arguments for MongoClient, AsyncMongoClient and motor's client."""
    return {
        "maxPoolSize": pool_size,
        "serverSelectionTimeoutMS": int(config.connect_timeout * 1000),
        "connectTimeoutMS": int(config.connect_timeout * 1000),
        "socketTimeoutMS": int(config.read_timeout * 1000),
    }
